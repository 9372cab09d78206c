# Lookups one at a time name their first address by a pass over the file's symbol table,
# without building the sorted table (src/symbolize/symbols.c), and later ones from the
# table: both must give the symbol llvm-symbolizer and addr2line give. On python3.11d with
# its DWARF stripped, so that every name comes from its 24,700 symbols (1,700 addresses
# hold aliases): one process per address (each a first lookup) against llvm-symbolizer and
# addr2line reading all of them, at every 4,000th instruction, at addresses where
# functions have aliases and just past the end of sized functions (where llvm-symbolizer names nothing when no
# symbol covers the address, and addr2line names the function before); then all of them in
# one process (the first scanned, the rest from the table). python3.11d's .symtab has
# few true aliases (its pairs are .symtab and .dynsym entries of one name), so a program
# of our own has them: functions with two aliases each, of the same size (llvm-symbolizer
# names the last in table order, addr2line the first), built without DWARF.
. tests/lib.sh
. tests/symbolize/addrs.sh

PY=/usr/bin/python3.11d
if [ ! -x "$PY" ]; then
	skip symbolize_one_at_a_time "$PY missing (package python3.11-dbg)"
	exit 0
fi
bin=$TMP/python.nodebug
objcopy --strip-debug "$PY" "$bin"

text_addrs "$bin" objdump 4000 >"$TMP/addrs"
readelf -sW "$bin" | python3 -c '
import sys
at = {}
for line in sys.stdin:
    f = line.split()
    if len(f) < 8 or f[3] != "FUNC" or f[6] in ("UND", "ABS"):
        continue
    addr, size = int(f[1], 16), int(f[2], 0)
    at.setdefault(addr, []).append(size)
aliased = sorted(a for a, sizes in at.items() if len(sizes) > 1)[:80]
ends = sorted(a + max(s) for a, s in at.items() if max(s) > 0)[::500][:60]
for a in aliased + ends:
    print(hex(a))
' >>"$TMP/addrs"
sort -u -o "$TMP/addrs" "$TMP/addrs"
n=$(wc -l <"$TMP/addrs")
[ "$n" -ge 200 ] && pass one_at_a_time_has_200_addresses || fail one_at_a_time_has_200_addresses "only $n"

# each STYLE_OPTION... : one tally process per address.
each() {
	local a
	while read -r a; do
		"$TALLY" symbolize -e "$bin" "$@" "$a" || echo "exit $? at $a"
	done <"$TMP/addrs"
}

# same NAME WANT GOT: PASS when tally printed WANT's lines and nothing on stderr.
same() {
	cmp -s "$2" "$3" && [ ! -s "$TMP/err" ] && pass "$1" ||
		fail "$1" "$(head -2 "$TMP/err"; diff "$2" "$3" | head -6)"
}

llvm-symbolizer --inlining --obj="$bin" <"$TMP/addrs" >"$TMP/llvm.want"
each >"$TMP/llvm.got" 2>"$TMP/err"
same one_at_a_time_llvm_style_matches_llvm_symbolizer "$TMP/llvm.want" "$TMP/llvm.got"

addr2line -f -i -e "$bin" <"$TMP/addrs" >"$TMP/gnu.want"
each --output-style=GNU >"$TMP/gnu.got" 2>"$TMP/err"
same one_at_a_time_gnu_style_matches_addr2line "$TMP/gnu.want" "$TMP/gnu.got"

# Fewer than a batch on the command line: the first scanned, the others from the table.
mapfile -t addrs <"$TMP/addrs"
"$TALLY" symbolize -e "$bin" "${addrs[@]}" >"$TMP/argv.got" 2>"$TMP/err"
same one_at_a_time_then_table_matches_llvm_symbolizer "$TMP/llvm.want" "$TMP/argv.got"

# The aliases: f0..f39 each also named a_fN and w_fN (weak), all of f's size.
{
	for ((i = 0; i < 40; i++)); do
		echo "int f$i(int x) { for (int k = 0; k < $i + 3; k++) x = x * 31 + k; return x; }"
		echo "extern int a_f$i(int) __attribute__((alias(\"f$i\")));"
		echo "extern int w_f$i(int) __attribute__((weak, alias(\"f$i\")));"
	done
	echo 'int main(int c, char **v) { (void)v; return f0(c) + f39(c); }'
} >"$TMP/aliases.c"
gcc -O1 -fno-inline -o "$TMP/aliases" "$TMP/aliases.c"
text_addrs "$TMP/aliases" >"$TMP/alias.addrs"
bin=$TMP/aliases
cp "$TMP/alias.addrs" "$TMP/addrs"
llvm-symbolizer --inlining --obj="$bin" <"$TMP/addrs" >"$TMP/alias_llvm.want"
each >"$TMP/alias_llvm.got" 2>"$TMP/err"
grep -q '^w_f' "$TMP/alias_llvm.want" && pass one_at_a_time_llvm_names_the_last_alias ||
	fail one_at_a_time_llvm_names_the_last_alias "$(head -3 "$TMP/alias_llvm.want")"
same one_at_a_time_aliases_match_llvm_symbolizer "$TMP/alias_llvm.want" "$TMP/alias_llvm.got"
addr2line -f -i -e "$bin" <"$TMP/addrs" >"$TMP/alias_gnu.want"
each --output-style=GNU >"$TMP/alias_gnu.got" 2>"$TMP/err"
same one_at_a_time_aliases_match_addr2line "$TMP/alias_gnu.want" "$TMP/alias_gnu.got"

# python3.11d with its DWARF: 180 units of 55 KiB on average, whose headers and root DIEs
# are read with pread (src/dwarf/unit_head.c), not through the mapping. One process per
# address (the first, _start, is in no unit: every root DIE is read to know it), every
# 16,000th instruction, against llvm-symbolizer; and the reads are preads (strace).
bin=$PY
{ echo 0x$(readelf -sW "$bin" | awk '$8 == "_start" { print $2; exit }'); text_addrs "$bin" objdump 16000; } >"$TMP/addrs"
llvm-symbolizer --inlining --obj="$bin" <"$TMP/addrs" >"$TMP/dwarf.want"
each >"$TMP/dwarf.got" 2>"$TMP/err"
[ "$(wc -l <"$TMP/addrs")" -ge 40 ] && grep -q '^_start$' "$TMP/dwarf.want" &&
	grep -q '\.c:[0-9]*:[0-9]' "$TMP/dwarf.want" &&
	same one_at_a_time_dwarf_matches_llvm_symbolizer "$TMP/dwarf.want" "$TMP/dwarf.got" ||
	fail one_at_a_time_dwarf_matches_llvm_symbolizer "$(wc -l <"$TMP/addrs") addresses: $(head -3 "$TMP/dwarf.want")"
preads=$(strace -f -c -e trace=pread64 "$TALLY" symbolize -e "$bin" "$(head -1 "$TMP/addrs")" 2>&1 >/dev/null |
	awk '$NF == "pread64" { print $4 }')
[ "${preads:-0}" -ge 100 ] && pass one_at_a_time_unit_heads_are_read ||
	fail one_at_a_time_unit_heads_are_read "${preads:-no} pread64 calls for python3.11d's 180 units"
