# Functions from the unwind tables in a stripped binary: a program with three hot functions
# (49, 33 and 18 units a round, tests/symbolize/cfi_functions.c) built once with symbols and
# stripped (strip of a copy), each recorded. The stripped build's functions must add up as
# the unstripped build's do (self shares within 5 points), be named PROG!fn_START with
# START what nm says of the unstripped build (and addr2line -f names hot_a/b/c there), in
# every output; annotate disassembles one whole (its range as objdump disassembles it), and
# tally symbolize names it with --json but prints llvm-symbolizer's "??" otherwise.
. tests/lib.sh

prog="$TMP/cfi_prog" stripped="$TMP/cfi_prog.stripped"
if ! gcc -O2 -g -o "$prog" "$ROOT/tests/symbolize/cfi_functions.c" 2>"$TMP/err" ||
	! strip -o "$stripped" "$prog" 2>>"$TMP/err"; then
	fail cfi_functions_build "$(cat "$TMP/err")"
	exit 0
fi
# 700 rounds: about 1.4 s, 1,400 samples at the default frequency.
for b in "$prog" "$stripped"; do
	if ! "$TALLY" record -q -o "$b.data" -- "$b" 700 >/dev/null 2>"$TMP/err" ||
		! "$TALLY" report --top 10 "$b.data" >"$b.report" 2>"$TMP/err"; then
		fail cfi_functions_record "$(basename "$b"): $(cat "$TMP/err")"
		exit 0
	fi
done

# "NAME SELF%" for the top three of a report's self table
top3() { awk '/^Top functions by self/ {on = 1; getline; next} on && NF >= 5 && n < 3 {
	sub("%", "", $1); print $5, $1; n++}' "$1"; }
# nm's address of each hot function, without leading zeros ("hot_a 11a0")
nm -S "$prog" | awk '$4 ~ /^hot_[abc]$/ {a = $1; sub(/^0+/, "", a); s = $2; sub(/^0+/, "", s);
	print $4, a, s}' | sort >"$TMP/nm"
top3 "$prog.report" | sort >"$TMP/named"
top3 "$stripped.report" >"$TMP/stripped"
samples=$(awk '/^figures:  samples/ {print $3}' "$stripped.report")

# The stripped build's top three, by nm's addresses, beside the unstripped build's shares.
join "$TMP/nm" "$TMP/named" >"$TMP/expect" # name start size share
ok=$(awk -v base=cfi_prog.stripped -v n="${samples:-0}" '
	FNR == NR {want[base "!fn_" $2] = $4; next}
	{if (!($1 in want) || ($2 - want[$1]) ^ 2 > 25) bad++; seen++; delete want[$1]}
	END {print (n >= 1000 && seen == 3 && !bad && length(want) == 0) ? "yes" : "no"}' \
	"$TMP/expect" "$TMP/stripped")
[ "$ok" = yes ] && [ "$(wc -l <"$TMP/expect")" = 3 ] &&
	pass cfi_functions_add_up_as_with_symbols ||
	fail cfi_functions_add_up_as_with_symbols "samples=$samples; with symbols: $(tr '\n' ' ' <"$TMP/expect"); stripped: $(tr '\n' ' ' <"$TMP/stripped")"

# addr2line names the function at each start tally gives.
bad=
while read -r name start size share; do
	got=$(addr2line -f -e "$prog" "0x$start" | head -1)
	[ "$got" = "$name" ] || bad+="0x$start is $got, not $name; "
done <"$TMP/expect"
[ -z "$bad" ] && [ -s "$TMP/expect" ] && pass cfi_functions_start_where_addr2line_names_them ||
	fail cfi_functions_start_where_addr2line_names_them "$bad"

# The same names in the other outputs.
read -r _ hb_start hb_size _ < <(grep '^hot_b ' "$TMP/expect")
hb="cfi_prog.stripped!fn_${hb_start:-none}"
bad=
"$TALLY" export -f folded -o "$TMP/s.folded" "$stripped.data" 2>/dev/null
"$TALLY" export -f speedscope -o "$TMP/s.speedscope" "$stripped.data" 2>/dev/null
"$TALLY" export -f firefox -o "$TMP/s.firefox" "$stripped.data" 2>/dev/null
"$TALLY" export -f pprof -o "$TMP/s.pprof" "$stripped.data" 2>/dev/null
"$TALLY" flamegraph -o "$TMP/s.svg" "$stripped.data" 2>/dev/null
"$TALLY" diff "$prog.data" "$stripped.data" >"$TMP/s.diff" 2>/dev/null
"$TALLY" report --top 3 "$TMP/s.pprof" >"$TMP/s.pprof.report" 2>/dev/null
grep -q "[;]$hb [0-9]*$" "$TMP/s.folded" || bad+="folded "
for f in speedscope firefox; do grep -qF "\"$hb\"" "$TMP/s.$f" || bad+="$f "; done
grep -q "<title>$hb\$" "$TMP/s.svg" || bad+="flamegraph "
grep -qF " $hb" "$TMP/s.diff" || bad+="diff "
grep -qF " $hb " "$TMP/s.pprof.report" || bad+="pprof "
[ -z "$bad" ] && [ -n "$hb_start" ] && pass cfi_functions_named_alike_in_every_output ||
	fail cfi_functions_named_alike_in_every_output "$hb missing from: $bad"

# annotate lists the whole function: the instructions objdump finds in [start, start+size)
# of the unstripped build.
end=$(printf '%x' $((0x${hb_start:-0} + 0x${hb_size:-0})))
objdump -d --insn-width=16 --start-address="0x$hb_start" --stop-address="0x$end" "$prog" |
	awk '/^ +[0-9a-f]+:\t/ {sub(":", "", $1); print $1}' >"$TMP/objdump.addrs"
"$TALLY" annotate --function "$hb" "$stripped.data" >"$TMP/annotate" 2>&1
awk '/^ +share +samples +addr/ {on = 1; next} on && match($0, /[0-9a-f]+:  /) {
	print substr($0, RSTART, RLENGTH - 3)}' "$TMP/annotate" >"$TMP/annotate.addrs"
grep -qF "[0x$hb_start, 0x$end)" "$TMP/annotate" && [ -s "$TMP/objdump.addrs" ] &&
	cmp -s "$TMP/objdump.addrs" "$TMP/annotate.addrs" &&
	pass cfi_functions_annotate_disassembles_the_whole_range ||
	fail cfi_functions_annotate_disassembles_the_whole_range "$(head -4 "$TMP/annotate"); objdump $(wc -l <"$TMP/objdump.addrs") insns, annotate $(wc -l <"$TMP/annotate.addrs")"

# tally symbolize: --json names it and says where the name came from; the LLVM style prints
# what llvm-symbolizer prints for the address.
mid=$(printf '0x%x' $((0x${hb_start:-0} + 4)))
want="{\"address\":\"$mid\",\"frames\":[{\"function\":\"$hb\",\"function_from\":\"cfi\",\"start\":\"0x$hb_start\",\"end\":\"0x$end\",\"file\":null,\"line\":0,\"column\":0,\"inlined\":false}]}"
got=$("$TALLY" symbolize --json -e "$stripped" "$mid" 2>&1)
[ "$got" = "$want" ] && pass cfi_functions_symbolize_json_names_them ||
	fail cfi_functions_symbolize_json_names_them "got $got, want $want"
if command -v llvm-symbolizer >/dev/null; then
	want=$(llvm-symbolizer --obj="$stripped" "$mid" 2>&1)
	got=$("$TALLY" symbolize -e "$stripped" "$mid" 2>&1)
	[ "$got" = "$want" ] && [ "${want%%$'\n'*}" = "??" ] &&
		pass cfi_functions_symbolize_llvm_style_as_llvm ||
		fail cfi_functions_symbolize_llvm_style_as_llvm "got $got, want $want"
else
	skip cfi_functions_symbolize_llvm_style_as_llvm "no llvm-symbolizer"
fi
