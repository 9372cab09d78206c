# make install as a user or a distribution runs it: into a prefix of this test's own, and
# staged under DESTDIR. Checks the files, the SONAME and its links, that the shared library
# exports exactly the headers' TALLY_API functions, each under its version node, and needs
# only the libraries tally.pc names, that a program built with pkg-config (shared, then
# static) symbolizes its own main as llvm-symbolizer does, and that a static link of all
# of libtally.a needs every library tally.pc names and no other. The plain build is
# installed whichever build the suite runs on (a program linking the sanitized library
# would need the sanitizer's runtime).
. tests/lib.sh
inst() { make -s -C "$ROOT" BUILD=build "$@" 2>&1; }
P=$TMP/prefix
V=$(sed -n 's/^#define TALLY_VERSION "\(.*\)"$/\1/p' "$ROOT/include/tally/tally.h")
L=$P/lib

if ! out=$(inst install PREFIX="$P"); then
	fail install_into_prefix "$out"
	exit 0
fi
missing=
for f in bin/tally include/tally/tally.h include/tally/trace.h lib/libtally.a \
	lib/libtally.so.$V lib/pkgconfig/tally.pc; do
	[ -f "$P/$f" ] && [ ! -L "$P/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && [ "$("$P/bin/tally" --version)" = "tally $V" ] && pass install_into_prefix ||
	fail install_into_prefix "missing:$missing; $("$P/bin/tally" --version 2>&1)"

soname=$(readelf -d "$L/libtally.so.$V" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libtally.so.0 ] && [ "$(readlink "$L/libtally.so.0")" = "libtally.so.$V" ] &&
	[ "$(readlink "$L/libtally.so")" = libtally.so.0 ] && pass install_soname_and_links ||
	fail install_soname_and_links "soname '$soname', $(ls -l "$L" | grep libtally.so)"

# Every defined dynamic symbol, functions and data alike, against the header's API (less
# the symbol ld gives libtally.map's version node, TALLY_0.1.0: absolute, no code or data;
# nm names each symbol's version after an @, which the next test checks).
nm -D --defined-only "$L/libtally.so.$V" |
	awk '!($2 == "A" && $3 ~ /^TALLY_[0-9.]+$/) { sub(/@.*/, "", $3); print $3 }' | sort >"$TMP/exports"
sed -n 's/^TALLY_API .*[ *]\(tally_[a-z0-9_]*\)(.*/\1/p' "$ROOT"/include/tally/*.h |
	sort >"$TMP/api"
[ -s "$TMP/api" ] && ! grep -qv '^tally_' "$TMP/exports" && cmp -s "$TMP/exports" "$TMP/api" &&
	pass exports_are_the_headers_tally_api_only ||
	fail exports_are_the_headers_tally_api_only "$(diff "$TMP/api" "$TMP/exports" | head -8)"

# Each of them with the version node of libtally.map ('@@': the one a program links
# against), and nothing else defined in the dynamic symbol table.
readelf --dyn-syms -W "$L/libtally.so.$V" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && !($7 == "ABS" && $8 ~ /^TALLY_[0-9.]+$/) { print $8 }' |
	sort >"$TMP/versioned"
sed 's/$/@@TALLY_0.1.0/' "$TMP/api" >"$TMP/api_versioned"
cmp -s "$TMP/versioned" "$TMP/api_versioned" && pass exports_are_versioned_tally_names_only ||
	fail exports_are_versioned_tally_names_only "$(diff "$TMP/api_versioned" "$TMP/versioned" | head -8)"

# The libraries libtally.so needs are the C library's and those of Requires.private (not
# the recorder's libbpf nor the Solana runtime's sodium, GMP, ...).
needs=$(readelf -d "$L/libtally.so.$V" | sed -n 's/.*Shared library: \[lib\(.*\)\.so\..*\]/\1/p' |
	grep -vx 'c\|ld-linux.*' | sort)
named=$(PKG_CONFIG_PATH=$L/pkgconfig pkg-config --libs-only-l \
	"$(PKG_CONFIG_PATH=$L/pkgconfig pkg-config --print-requires-private tally)" | tr ' ' '\n' |
	sed -n 's/^-l//p' | sort)
[ -n "$needs" ] && [ "$needs" = "$named" ] && pass shared_library_needs_what_tally_pc_names ||
	fail shared_library_needs_what_tally_pc_names "needs: $needs; tally.pc: $named"

cat >"$TMP/self.c" <<'C'
/* Symbolizes its own main through the installed libtally. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <tally/tally.h>

static int executable(struct dl_phdr_info *info, size_t size, void *bias)
{
	*(uintptr_t *)bias = info->dlpi_addr;
	return 1; /* the executable is listed first */
}

int main(void)
{
	TALLY_OPTS(tally_symbolizer_opts, o);
	struct tally_symbolizer *s;
	if (tally_symbolizer_open("/proc/self/exe", &o, &s)) {
		fprintf(stderr, "%s\n", tally_errmsg());
		return 1;
	}
	uintptr_t bias = 0;
	dl_iterate_phdr(executable, &bias);
	uint64_t addr = (uintptr_t)&main - bias;
	struct tally_frame f[8];
	int n = tally_symbolize(s, addr, f, 8);
	printf("0x%llx\n", (unsigned long long)addr);
	for (int i = 0; i < n && i < 8; i++)
		printf("%s\n%s:%u:%u\n", f[i].function ? f[i].function : "??",
		       f[i].file ? f[i].file : "??", f[i].line, f[i].column);
	tally_symbolizer_close(s);
	return n > 0 ? 0 : 1;
}
C
export PKG_CONFIG_PATH=$L/pkgconfig

# symbolizes_like_llvm NAME BIN [ENV...]: BIN's output after its first line (the address)
# is what llvm-symbolizer prints for that address, less the closing blank line.
symbolizes_like_llvm() {
	local name=$1 bin=$2 out
	shift 2
	if ! out=$(env "$@" "$bin" 2>&1); then
		fail "$name" "$out"
		return
	fi
	want=$(llvm-symbolizer --obj="$bin" "$(head -1 <<<"$out")")
	[ "$(tail -n +2 <<<"$out")" = "$want" ] && grep -q '^main$' <<<"$out" && pass "$name" ||
		fail "$name" "got: $out; llvm: $want"
}

# shellcheck disable=SC2046
if cc -g -O0 -o "$TMP/self" "$TMP/self.c" $(pkg-config --cflags --libs tally) 2>"$TMP/cc.err"; then
	needed=$(readelf -d "$TMP/self" | sed -n 's/.*Shared library: \[\(libtally[^]]*\)\]/\1/p')
	[ "$needed" = libtally.so.0 ] &&
		LD_LIBRARY_PATH=$L ldd "$TMP/self" | grep -q "libtally.so.0 => $L/libtally.so.0 " &&
		pass pkg_config_program_needs_the_soname ||
		fail pkg_config_program_needs_the_soname "needs '$needed'"
	symbolizes_like_llvm pkg_config_program_symbolizes_its_main "$TMP/self" LD_LIBRARY_PATH="$L"
else
	fail pkg_config_program_symbolizes_its_main "$(head -5 "$TMP/cc.err")"
fi

# Static: libtally.a and what Requires.private and Libs.private name, nothing else.
# shellcheck disable=SC2046
if cc -g -O0 -o "$TMP/self-static" "$TMP/self.c" $(pkg-config --cflags tally) \
	$(pkg-config --static --libs tally | sed 's/-ltally\b/-l:libtally.a/') 2>"$TMP/cc.err"; then
	readelf -d "$TMP/self-static" | grep -q 'Shared library: \[libtally' &&
		fail static_program_symbolizes_its_main "links libtally.so" ||
		symbolizes_like_llvm static_program_symbolizes_its_main "$TMP/self-static"
else
	fail static_program_symbolizes_its_main "$(head -5 "$TMP/cc.err")"
fi

# All of libtally.a (the agent's members too, which the program above does not pull in)
# links with what tally.pc names, and not without any one library it names itself
# (Requires.private's packages, Libs.private's flags): it names exactly what is needed.
read -ra static <<<"$(pkg-config --static --libs tally |
	sed 's/-ltally\b/-Wl,--whole-archive -l:libtally.a -Wl,--no-whole-archive/')"
links_whole() { # links_whole FLAG...: links without the flags given
	local drop=" $* " f keep=()
	for f in "${static[@]}"; do
		[[ $drop == *" $f "* ]] || keep+=("$f")
	done
	# shellcheck disable=SC2046
	cc -o "$TMP/whole" "$TMP/self.c" $(pkg-config --cflags tally) "${keep[@]}" 2>"$TMP/cc.err"
}
ours=$(sed -n 's/^Libs.private: //p' "$L/pkgconfig/tally.pc")
needless=
for p in $(pkg-config --print-requires-private tally) $ours; do
	case $p in
	-*) flags=$p ;;
	*) flags=$(pkg-config --libs-only-l "$p") ;;
	esac
	# shellcheck disable=SC2086
	! links_whole $flags || needless="$needless $p"
done
if ! links_whole; then
	fail static_link_needs_exactly_what_tally_pc_names "$(head -5 "$TMP/cc.err")"
elif [ -n "$needless" ]; then
	fail static_link_needs_exactly_what_tally_pc_names "links without:$needless"
else
	pass static_link_needs_exactly_what_tally_pc_names
fi

# The Lua module goes where Debian's lua5.4 looks under the prefix (lib/lua/5.4), and
# lua5.4 loads it from there by its default package.cpath rule ("?.so" in that directory).
if [ -f "$ROOT/build/lua/tally.so" ]; then
	m=$L/lua/5.4/tally.so
	if [ -f "$m" ] && command -v lua5.4 >/dev/null &&
		out=$(cd "$TMP" && LUA_CPATH="$L/lua/5.4/?.so" TALLY_LUA_MODE=off \
			lua5.4 -e 'print(type(require("tally").start))' 2>&1) && [ "$out" = function ]; then
		pass install_lua_module
	else
		fail install_lua_module "$(ls "$L/lua/5.4" 2>&1) ${out:-}"
	fi
else
	skip install_lua_module "no build/lua/tally.so (make needs liblua5.4-dev)"
fi

# DESTDIR: everything under the stage, the prefix the files name is the final one.
S=$TMP/stage
if out=$(inst install DESTDIR="$S" PREFIX=/usr); then
	pc=$S/usr/lib/pkgconfig/tally.pc
	[ -f "$S/usr/lib/libtally.so.$V" ] && [ -x "$S/usr/bin/tally" ] && grep -qx 'prefix=/usr' "$pc" &&
		{ [ ! -f "$ROOT/build/lua/tally.so" ] || [ -f "$S/usr/lib/lua/5.4/tally.so" ]; } &&
		grep -qx 'libdir=/usr/lib' "$pc" && ! grep -q "$S" "$pc" && pass install_under_destdir ||
		fail install_under_destdir "$(find "$S" | head -5) $(head -6 "$pc")"
else
	fail install_under_destdir "$out"
fi

out=$(inst uninstall PREFIX="$P")
left=$(find "$P" ! -type d)
[ -z "$left" ] && pass uninstall_removes_every_file ||
	fail uninstall_removes_every_file "$out $left"
