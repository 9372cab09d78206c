#!/bin/sh
# Installs the Debian packages tally needs to build and test, and only those that are
# missing: apt-get runs only when something is absent, so a ready machine costs nothing.
# Usage: scripts/install-deps.sh [build|test]   (default: test, which includes build)
set -eu

build_pkgs="make gcc clang lld llvm pkg-config zlib1g-dev libzstd-dev libiberty-dev
libdeflate-dev libisal-dev libcapstone-dev libjansson-dev libsodium-dev nettle-dev"
test_pkgs="libcmocka-dev libclang-rt-14-dev binutils elfutils libc6-dbg python3.11-dbg
systemtap-sdt-dev dwz bpftrace linux-perf golang-go chromium gdb jq time python3
python3-pycryptodome"
test_pkgs="$test_pkgs openjdk-17-jdk-headless" # JIT frames from a JVM's perf map (tests/jit)
# node and npm come with the machine (a newer build than Debian's, whose npm package
# conflicts with it); Debian's are installed only where there is no node at all.
command -v npm >/dev/null 2>&1 || test_pkgs="$test_pkgs nodejs npm"

want=$build_pkgs
[ "${1:-test}" = test ] && want="$want $test_pkgs"

missing=
for p in $want; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root to install packages (run as root or with sudo)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
