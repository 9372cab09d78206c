# `tally symbolize` against llvm-symbolizer on the system's libc.so.6, whose DWARF lives in
# libc6-dbg's separate debug file (found through the build-id, under /usr/lib/debug; its
# debug sections are zlib-compressed). At least 20,000 instruction addresses: every Nth
# instruction that objdump lists in .text, N chosen so the sample reaches 20,000, so the
# sample is the same on every run. Same rule as oracle.test.sh: >= 99.9% agree, "??" named
# by tally counted apart as improvements.
. tests/lib.sh
. tests/symbolize/addrs.sh
. tests/symbolize/tool.sh

LIBC=/lib/x86_64-linux-gnu/libc.so.6
if ! tool_ready; then
	skip symbolize_libc "tally has no symbolize command"
	exit 0
fi
id=$(readelf -n "$LIBC" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
if [ -z "$id" ] || [ ! -f "$dbg" ]; then
	skip symbolize_libc "no debug file for $LIBC (install libc6-dbg)"
	exit 0
fi

count=$(text_addrs "$LIBC" | wc -l)
every=$((count / 20000))
[ $every -ge 1 ] || every=1
text_addrs "$LIBC" objdump $every >"$TMP/libc.addrs"
n=$(wc -l <"$TMP/libc.addrs")
echo "libc: $n of $count instructions in .text (every ${every}th), debug file $dbg"
[ "$n" -ge 20000 ] && pass libc_sample_has_20000_addresses ||
	fail libc_sample_has_20000_addresses "only $n"

llvm-symbolizer --inlining --obj="$LIBC" <"$TMP/libc.addrs" >"$TMP/libc.want" 2>"$TMP/libc.want.err"
if ! tool_symbolize "$LIBC" <"$TMP/libc.addrs" >"$TMP/libc.got" 2>"$TMP/libc.err"; then
	fail libc_matches_llvm_symbolizer "exit $?: $(head -3 "$TMP/libc.err" | tr '\n' ' ')"
	exit 0
fi
if report=$(python3 tests/symbolize/compare.py llvm "$TMP/libc.addrs" "$TMP/libc.want" \
	"$TMP/libc.got" --name libc.so.6 --examples 3); then
	head -1 <<<"$report"
	pass libc_matches_llvm_symbolizer
else
	printf '%s\n' "$report" | head -80
	fail libc_matches_llvm_symbolizer "$(head -1 <<<"$report")"
fi

# Lookups one at a time read only the front of .debug_info, up to the unit that
# .debug_aranges names (src/symbolize/front.c); the batch above read all of it. 100
# addresses spread over .text, each in a run of its own and then all in one run (too few
# for a batch, more than the 64 lookups front mode once stopped at: the front grows), must
# print what the batch printed for them. The runs of their own start with an empty debug
# cache: the first inflates the compressed file and stores the copy, the others read the
# copy's front (uncompressed); the run of all reads the compressed file (no cache).
awk 'NR % 200 == 1' "$TMP/libc.addrs" >"$TMP/libc.few"
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR % 200 == 1' "$TMP/libc.got" >"$TMP/libc.few.want"
: >"$TMP/libc.few.alone"
while read -r a; do
	TALLY_CACHE="$TMP/cache" tool_symbolize "$LIBC" "$a" >>"$TMP/libc.few.alone" 2>>"$TMP/libc.few.err"
done <"$TMP/libc.few"
# shellcheck disable=SC2046
TALLY_CACHE=off tool_symbolize "$LIBC" $(cat "$TMP/libc.few") >"$TMP/libc.few.together" \
	2>>"$TMP/libc.few.err"
if [ "${SYMBOLIZE_UNDER_TEST:-tally}" = tally ] && [ ! -f "$TMP/cache/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
	fail libc_few_lookups_match_the_batch "no copy of $dbg in the debug cache"
elif cmp -s "$TMP/libc.few.want" "$TMP/libc.few.alone" && cmp -s "$TMP/libc.few.want" "$TMP/libc.few.together"; then
	pass libc_few_lookups_match_the_batch
else
	diff "$TMP/libc.few.want" "$TMP/libc.few.alone" | head -10
	diff "$TMP/libc.few.want" "$TMP/libc.few.together" | head -10
	fail libc_few_lookups_match_the_batch "$(wc -l <"$TMP/libc.few") addresses"
fi

# tally names what llvm-symbolizer leaves as "??" (assembly without DWARF subprograms,
# named by the debug file's .symtab): at least some of them, or the fallback is missing.
improved=$(sed -n 's/.*improved \([0-9]*\),.*/\1/p' <<<"$report")
unknown=$(grep -c '^??$' "$TMP/libc.want")
echo "libc: llvm-symbolizer prints ?? as a function name $unknown times; tally names $improved of those addresses"
[ "${SYMBOLIZE_UNDER_TEST:-tally}" = llvm-symbolizer ] || {
	[ "${improved:-0}" -gt 0 ] && pass libc_names_functions_llvm_symbolizer_cannot ||
		fail libc_names_functions_llvm_symbolizer_cannot "improved ${improved:-?} of $unknown"
}

# GNU style against addr2line on the same sample, addr2line's known defects counted apart
# (compare.py), same threshold.
addr2line -a -f -i -e "$LIBC" <"$TMP/libc.addrs" >"$TMP/libc.gnu.want" 2>/dev/null
if ! tool_symbolize "$LIBC" --output-style=GNU <"$TMP/libc.addrs" >"$TMP/libc.gnu.got" 2>"$TMP/libc.gnu.err"; then
	fail libc_gnu_matches_addr2line "$(head -3 "$TMP/libc.gnu.err" | tr '\n' ' ')"
elif report=$(python3 tests/symbolize/compare.py gnu "$TMP/libc.addrs" "$TMP/libc.gnu.want" \
	"$TMP/libc.gnu.got" --frames "$TMP/libc.got" --alt "$TMP/libc.want" --examples 3 \
	--name "libc.so.6 (GNU style vs addr2line)"); then
	grep -v '^    ' <<<"$report"
	pass libc_gnu_matches_addr2line
else
	printf '%s\n' "$report" | head -60
	fail libc_gnu_matches_addr2line "$(head -1 <<<"$report")"
fi

# A large compressed .debug_info is inflated on a thread of its own (a batch reads all of
# it at open): when its data is corrupt, the message that says so must come back from that
# thread (it once came out as "unknown error"). A copy of the debug file with bytes of the
# stream flipped, found under --debug-dir (cache off: the cache is looked up first).
if [ "${SYMBOLIZE_UNDER_TEST:-tally}" = tally ]; then
	mkdir -p "$TMP/bad/.build-id/${id:0:2}"
	bad="$TMP/bad/.build-id/${id:0:2}/${id:2}.debug"
	cp "$dbg" "$bad"
	info_off=$(readelf -SW "$dbg" | awk '$2 == ".debug_info" {print $5}')
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2], 16) + 65536); f.write(bytes(64))' \
		"$bad" "$info_off"
	head -300 "$TMP/libc.addrs" >"$TMP/libc.300"
	TALLY_CACHE=off "$TALLY" symbolize --debug-dir "$TMP/bad" -e "$LIBC" <"$TMP/libc.300" \
		>/dev/null 2>"$TMP/bad.err"
	grep -q "^tally: warning: $bad: section .debug_info at 0x[0-9a-f]*: corrupt zlib data; using symbol tables only$" "$TMP/bad.err" &&
		pass libc_corrupt_debug_info_is_named ||
		fail libc_corrupt_debug_info_is_named "$(head -2 "$TMP/bad.err")"
fi
