#!/bin/sh
# Installs the Debian packages tally needs to build and test, and only those that are
# missing: apt-get runs only when something is absent, so a ready machine costs nothing.
# Usage: scripts/install-deps.sh [build|test]   (default: test, which includes build)
set -eu

build_pkgs="make gcc clang lld llvm pkg-config zlib1g-dev libzstd-dev liblzma-dev libiberty-dev
libdeflate-dev libisal-dev libcapstone-dev libjansson-dev libsodium-dev nettle-dev
libdebuginfod-dev libbpf-dev liblua5.4-dev libsecp256k1-dev libgmp-dev"
test_pkgs="libcmocka-dev libclang-rt-14-dev binutils elfutils libc6-dbg python3.11-dbg
systemtap-sdt-dev dwz bpftrace linux-perf golang-go chromium gdb jq time python3
python3-pycryptodome debuginfod openjdk-17-jdk-headless lua5.4 strace ruby3.1 ruby3.1-dev"
# node and npm come with the machine (a newer build than Debian's, whose npm package
# conflicts with it); Debian's are installed only where there is no node at all.
command -v npm >/dev/null 2>&1 || test_pkgs="$test_pkgs nodejs npm"

want=$build_pkgs
[ "${1:-test}" = test ] && want="$want $test_pkgs"

# npm packages the tests use as oracles, pinned, installed into the project's own folder
# .deps/npm (never globally): tests find them there (tests/lib.sh: NPM_DIR). playwright-core
# drives Debian's /usr/bin/chromium; it never downloads a browser of its own. speedscope
# ships its file format's JSON schema, which ajv checks files against. esbuild's Linux
# binaries are Go release builds of six Go versions (tests/symbolize/go_release_builds.test.sh),
# each under a name of its own (npm's aliases: NAME@npm:PACKAGE@VERSION).
npm_pkgs="litesvm@1.5.0 @firefox-devtools/profiler-cli@0.10.0 playwright-core@1.65.1
speedscope@1.25.0 ajv@8.20.0 esbuild-go1.16@npm:esbuild-linux-64@0.11.23
esbuild-go1.17@npm:esbuild-linux-64@0.13.15 esbuild-go1.19@npm:esbuild-linux-64@0.14.54
esbuild-go1.20@npm:@esbuild/linux-x64@0.19.12 esbuild-go1.23@npm:@esbuild/linux-x64@0.24.2
esbuild-go1.26@npm:@esbuild/linux-x64@0.28.2"
npm_dir=$(cd "$(dirname "$0")/.." && pwd)/.deps/npm

install_npm() {
	[ "${1:-test}" = test ] && [ -n "$npm_pkgs" ] || return 0
	need=
	for spec in $npm_pkgs; do
		name=${spec%%@npm:*}
		[ "$name" != "$spec" ] || name=${spec%@*}
		ver=${spec##*@}
		have=$(node -p "require('$npm_dir/node_modules/$name/package.json').version" \
			2>/dev/null || true)
		[ "$have" = "$ver" ] || need="$need $spec"
	done
	[ -z "$need" ] && return 0
	echo "install-deps: npm installing:$need"
	mkdir -p "$npm_dir"
	[ -f "$npm_dir/package.json" ] || echo '{"private": true}' >"$npm_dir/package.json"
	# shellcheck disable=SC2086
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$npm_dir" --no-audit --no-fund --silent $need
}

missing=
for p in $want; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -z "$missing" ]; then
	install_npm "${1:-test}"
	exit 0
fi

echo "install-deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root to install packages (run as root or with sudo)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
install_npm "${1:-test}"
