# MiniDebugInfo: a stripped binary whose .gnu_debugdata holds, xz-compressed, an ELF file
# with the function symbols .dynsym lacks, made as GDB's manual ("MiniDebugInfo") shows
# and Fedora ships every binary. gdb, which reads .gnu_debugdata itself, is the oracle
# (`info symbol` on the MiniDebugInfo binary), and must name what nm names in the
# unstripped build. tally symbolize names the static functions as gdb does, and the
# exported one from .dynsym beside them; a separate debug file wins over it; a recording
# of the binary names its hot static function in the report (with about the share the
# unstripped build's report gives it), folded stacks and pprof (as go tool pprof reads
# it), and tally annotate bounds it by its symbol (nm's address and size). Damaged
# sections (truncated or corrupt xz, not xz, an xz bomb, an inner file that is not ELF)
# give a warning naming the file and what is wrong, and the binary is still named
# through .dynsym.
. tests/lib.sh

cat >"$TMP/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink, rounds = 1 << 18;

__attribute__((noinline, noclone)) static void spin_hot(void)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < rounds; i++)
		x = x * 6364136223846793005UL + i;
	sink = x;
}

__attribute__((noinline, noclone)) static void spin_cold(void)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < rounds / 8; i++)
		x ^= x >> 7 ^ i;
	sink = x;
}

__attribute__((noinline, noclone)) void spin_exported(void)
{
	sink += rounds;
}

__attribute__((noinline, noclone)) static void work(double seconds)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		spin_hot();
		spin_cold();
		spin_exported();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	work(argc > 1 ? atof(argv[1]) : 0);
	printf("%lu\n", sink);
	return 0;
}
C
FULL=$TMP/full MDI=$TMP/mdi
if ! out=$(gcc -O2 -g -Wl,--export-dynamic-symbol=spin_exported -o "$FULL" "$TMP/prog.c" 2>&1); then
	fail minidebuginfo_program_builds "$out"
	exit 0
fi

# with_debugdata BIN XZ OUT: OUT, BIN stripped, with .gnu_debugdata holding XZ (GDB's
# recipe).
with_debugdata() {
	cp "$1" "$3" && strip --strip-all -R .comment "$3" &&
		objcopy --add-section .gnu_debugdata="$2" "$3"
}
# GDB's recipe: the function symbols of the unstripped build that .dynsym does not hold,
# kept alone in a copy of its debug information, xz-compressed.
nm -D "$FULL" --format=posix --defined-only | awk '{ print $1 }' | sort >"$TMP/dynsyms"
nm "$FULL" --format=posix --defined-only |
	awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort >"$TMP/funcsyms"
comm -13 "$TMP/dynsyms" "$TMP/funcsyms" >"$TMP/keep"
objcopy --only-keep-debug "$FULL" "$TMP/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$TMP/keep" \
	"$TMP/debug" "$TMP/mini"
xz -k "$TMP/mini"
with_debugdata "$FULL" "$TMP/mini.xz" "$MDI"
# Guard: the binary has no .symtab of its own, and the static functions are not in .dynsym.
if readelf -S -W "$MDI" | grep -q ' \.symtab ' || ! readelf -S -W "$MDI" | grep -q '\.gnu_debugdata' ||
	grep -q spin_hot "$TMP/dynsyms" || ! grep -q spin_exported "$TMP/dynsyms"; then
	fail minidebuginfo_binary_made "$(readelf -S -W "$MDI" | grep -c .) sections; dynsyms: $(tr '\n' ' ' <"$TMP/dynsyms")"
	exit 0
fi

# The functions, at their start and a few bytes in, from the unstripped build.
ADDRS=()
NAMES=()
for fn in spin_hot spin_cold work spin_exported; do
	a=$(nm "$FULL" | awk -v f="$fn" '$3 == f { print "0x" $1 }')
	ADDRS+=("$a" "$(printf '0x%x' $((a + 4)))")
	NAMES+=("$fn" "$fn")
done

# gdb on the MiniDebugInfo binary: "NAME [+ OFF] in section .text".
gdb_names() {
	local a
	for a in "${ADDRS[@]}"; do
		gdb -nx -batch -ex "info symbol $a" "$MDI" 2>/dev/null | awk '/ in section / { print $1; exit }'
	done
}
gdb_names >"$TMP/gdb"
printf '%s\n' "${NAMES[@]}" >"$TMP/nm"
if ! cmp -s "$TMP/nm" "$TMP/gdb"; then
	fail gdb_reads_minidebuginfo "gdb: $(tr '\n' ' ' <"$TMP/gdb"); nm: $(tr '\n' ' ' <"$TMP/nm")"
	exit 0
fi

# tally_names BIN [OPTIONS]: the function tally symbolize names each address with.
tally_names() {
	local bin=$1
	shift
	"$TALLY" symbolize -e "$bin" "$@" "${ADDRS[@]}" 2>"$TMP/err" | awk 'NR % 3 == 1'
}
tally_names "$MDI" >"$TMP/got"
cmp -s "$TMP/gdb" "$TMP/got" && [ ! -s "$TMP/err" ] && pass minidebuginfo_names_functions_as_gdb ||
	fail minidebuginfo_names_functions_as_gdb "want $(tr '\n' ' ' <"$TMP/gdb"); got $(tr '\n' ' ' <"$TMP/got") $(cat "$TMP/err")"

# Without its .gnu_debugdata the binary names its static functions with nothing (the
# test's premise), the exported one still from .dynsym.
cp "$FULL" "$TMP/stripped" && strip --strip-all "$TMP/stripped"
tally_names "$TMP/stripped" >"$TMP/stripped.got"
! grep -q 'spin_hot\|spin_cold\|work' "$TMP/stripped.got" && grep -q spin_exported "$TMP/stripped.got" &&
	pass stripped_binary_without_minidebuginfo_names_dynsym_only ||
	fail stripped_binary_without_minidebuginfo_names_dynsym_only "$(tr '\n' ' ' <"$TMP/stripped.got")"

# A separate debug file, found by build-id, wins: DWARF names the function with its line.
id=$(readelf -n "$FULL" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
mkdir -p "$TMP/dbg/.build-id/${id:0:2}"
cp "$TMP/debug" "$TMP/dbg/.build-id/${id:0:2}/${id:2}.debug"
line=$("$TALLY" symbolize -e "$MDI" --debug-dir "$TMP/dbg" "${ADDRS[1]}" 2>&1 | sed -n 2p)
want=$(llvm-symbolizer --obj="$FULL" "${ADDRS[1]}" | sed -n 2p)
[ -n "$want" ] && [ "$line" = "$want" ] && pass debug_file_wins_over_minidebuginfo ||
	fail debug_file_wins_over_minidebuginfo "got '$line', llvm-symbolizer on the unstripped build '$want'"

# Damaged sections: a warning naming the file and the damage, exit 0, and .dynsym's names.
# damaged NAME PATTERN XZFILE
damaged() {
	local name=$1 pat=$2 bin=$TMP/$1
	with_debugdata "$FULL" "$3" "$bin"
	tally_names "$bin" >"$TMP/$name.got"
	if grep -q "^tally: warning: $bin: \.gnu_debugdata: $pat" "$TMP/err" &&
		[ "$(grep -c spin_exported "$TMP/$name.got")" = 2 ]; then
		pass "$name"
	else
		fail "$name" "$(head -3 "$TMP/err") / $(tr '\n' ' ' <"$TMP/$name.got")"
	fi
}
size=$(stat -c %s "$TMP/mini.xz")
head -c $((size / 2)) "$TMP/mini.xz" >"$TMP/truncated.xz"
damaged minidebuginfo_truncated_xz_warns 'truncated xz data' "$TMP/truncated.xz"
head -c 600 "$TMP/mini" >"$TMP/notxz"
damaged minidebuginfo_not_xz_warns 'not xz data' "$TMP/notxz"
# A flipped byte in the middle of the compressed stream: xz's check (CRC64) or the
# decoder catches it.
cp "$TMP/mini.xz" "$TMP/flipped.xz"
printf '\377' | dd of="$TMP/flipped.xz" bs=1 seek=$((size / 2)) conv=notrunc status=none
damaged minidebuginfo_corrupt_xz_warns 'corrupt xz data' "$TMP/flipped.xz"
# 256 MiB of zeros in about 40 KB: stopped at the cap, long before its end.
head -c $((256 << 20)) /dev/zero | xz -1 >"$TMP/bomb.xz"
damaged minidebuginfo_xz_bomb_warns 'inflates past the size a symbol table could have' "$TMP/bomb.xz"
head -c 4000 /dev/urandom | xz >"$TMP/garbage.xz"
damaged minidebuginfo_inner_garbage_warns 'not an ELF file' "$TMP/garbage.xz"

# A recording of the MiniDebugInfo binary and of the unstripped build: the hot static
# function is named in both reports, first by self samples, with about the same share.
# self_share FILE FN: FN's self% in tally report's top functions (empty when absent).
self_share() {
	awk -v f="$2" '/^Top functions by self/ { on = 1 } on && $5 == f { sub(/%/, "", $1); print $1; exit }' "$1"
}
for b in mdi full; do
	"$TALLY" record -q -o "$TMP/$b.data" -- "$TMP/$b" 1 >/dev/null 2>"$TMP/$b.rec.err" &&
		"$TALLY" report "$TMP/$b.data" >"$TMP/$b.report" 2>>"$TMP/$b.rec.err"
done
hot_mdi=$(self_share "$TMP/mdi.report" spin_hot)
hot_full=$(self_share "$TMP/full.report" spin_hot)
top_mdi=$(awk '/^Top functions by self/ { getline; getline; print $5; exit }' "$TMP/mdi.report")
if [ -n "$hot_mdi" ] && [ -n "$hot_full" ] && [ "$top_mdi" = spin_hot ] &&
	awk -v a="$hot_mdi" -v b="$hot_full" 'BEGIN { d = a - b; exit !(d < 15 && d > -15) }'; then
	pass report_names_hot_static_function_from_minidebuginfo
else
	fail report_names_hot_static_function_from_minidebuginfo \
		"spin_hot self% $hot_mdi (mdi, top: $top_mdi), $hot_full (unstripped); $(head -3 "$TMP/mdi.rec.err")"
fi
"$TALLY" export -f folded "$TMP/mdi.data" 2>/dev/null | grep -q ';work;spin_hot [0-9]*$' &&
	pass folded_names_static_functions_from_minidebuginfo ||
	fail folded_names_static_functions_from_minidebuginfo \
		"$("$TALLY" export -f folded "$TMP/mdi.data" 2>&1 | sort -k2 -n | tail -3)"
# pprof as go tool pprof reads it: the hot static function first by flat samples.
"$TALLY" export -f pprof -o "$TMP/mdi.pb.gz" "$TMP/mdi.data" 2>/dev/null
top_pprof=$(go tool pprof -top -symbolize=none "$TMP/mdi.pb.gz" 2>&1 | awk '/flat%/ { getline; print $6; exit }')
[ "$top_pprof" = spin_hot ] && pass pprof_names_static_functions_from_minidebuginfo ||
	fail pprof_names_static_functions_from_minidebuginfo "go tool pprof's top function: '$top_pprof'"
# tally annotate bounds the hot function by its MiniDebugInfo symbol: nm's address and
# size in the unstripped build.
read -r start len < <(nm -S "$FULL" | awk '$4 == "spin_hot" { print $1, $2 }')
want=$(printf '[0x%x, 0x%x)' "0x$start" $((0x$start + 0x$len)))
"$TALLY" annotate "$TMP/mdi.data" --function spin_hot >"$TMP/annotate" 2>&1
grep -qx "function spin_hot" "$TMP/annotate" && grep -qF "$want" "$TMP/annotate" &&
	pass annotate_bounds_static_function_by_minidebuginfo ||
	fail annotate_bounds_static_function_by_minidebuginfo "want $want: $(head -3 "$TMP/annotate")"
