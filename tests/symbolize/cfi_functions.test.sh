# Functions from the unwind tables in a stripped binary: a program with three hot functions
# (49, 33 and 18 units a round, tests/symbolize/cfi_functions.c) built once with symbols and
# stripped (strip of a copy), each recorded. The stripped build's functions must add up as
# the unstripped build's do (self shares within 5 points), be named PROG!fn_START with
# START what nm says of the unstripped build (and addr2line -f names hot_a/b/c there), in
# every output and in perf's recording too; annotate disassembles one whole (its range as
# objdump disassembles it), and tally symbolize names it with --json but prints
# llvm-symbolizer's "??" otherwise.
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

# addr2line -f names hot_a, hot_b and hot_c at the starts tally gives the stripped build's
# top three, and the unstripped build's symbols start there.
starts=$(sed -n 's/^cfi_prog\.stripped!fn_\([0-9a-f]*\) .*/\1/p' "$TMP/stripped")
names=$(for a in $starts; do addr2line -f -e "$prog" "0x$a" | head -1; done | sort | tr '\n' ' ')
nm_names=$(for a in $starts; do awk -v a="$a" '$2 == a {print $1}' "$TMP/nm"; done | sort | tr '\n' ' ')
[ "$names" = "hot_a hot_b hot_c " ] && [ "$nm_names" = "$names" ] &&
	pass cfi_functions_start_where_addr2line_and_nm_say ||
	fail cfi_functions_start_where_addr2line_and_nm_say "starts: $(echo $starts); addr2line: $names; nm: $nm_names"

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

# perf's recording of the stripped build: the same three functions on top, by the same names.
want=$(awk '{print "cfi_prog.stripped!fn_" $2}' "$TMP/expect" | sort | tr '\n' ' ')
if perf record -q -e cpu-clock:u -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	"$stripped" 300 >/dev/null 2>"$TMP/perf.err" &&
	"$TALLY" report --top 10 "$TMP/perf.data" >"$TMP/perf.report" 2>>"$TMP/perf.err"; then
	got=$(top3 "$TMP/perf.report" | awk '{print $1}' | sort | tr '\n' ' ')
	[ "$got" = "$want" ] && [ -n "$hb_start" ] && pass cfi_functions_named_in_perfs_recording ||
		fail cfi_functions_named_in_perfs_recording "top three: $got; want $want"
else
	skip cfi_functions_named_in_perfs_recording "perf record: $(head -3 "$TMP/perf.err")"
fi

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

# Hostile CFI, in copies of the stripped build with an FDE's pc range rewritten in place
# (gcc's .eh_frame: length, CIE pointer, then pc_begin and pc_range as 4-byte fields).
# patch_range OUT START RANGE: OUT is the stripped build with the range of the FDE starting
# at START (hex) set to RANGE (a number).
patch_range() {
	python3 - "$stripped" "$1" "$2" "$3" <<'PY'
import re, struct, subprocess, sys
src, out, start, rng = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 0)
sec = re.search(r"\.eh_frame\s+PROGBITS\s+\S+\s+(\S+)", subprocess.run(
	["readelf", "-SW", src], capture_output=True, text=True).stdout)
fdes = subprocess.run(["readelf", "--debug-dump=frames", src], capture_output=True,
	text=True).stdout
fde = re.search(r"^([0-9a-f]+) \S+ \S+ FDE \S+ pc=0*%x\.\." % start, fdes, re.M)
data = bytearray(open(src, "rb").read())
at = int(sec.group(1), 16) + int(fde.group(1), 16) + 12
data[at:at + 4] = struct.pack("<I", rng)
open(out, "wb").write(data)
PY
}
json_fn() { "$TALLY" symbolize --json -e "$1" "$2" 2>&1 | python3 -c '
import json, sys
f = json.loads(sys.stdin.read())["frames"][-1]
print(f["function"], f.get("start"), f.get("end"))'; }
read -r _ ha_start _ _ < <(grep '^hot_a ' "$TMP/expect")
read -r _ hc_start _ _ < <(grep '^hot_c ' "$TMP/expect")

# A length running past the code section: that FDE names nothing, the others still do.
if patch_range "$TMP/lying" "${hc_start:-0}" 0x7fff0000 2>"$TMP/err"; then
	got_c=$(json_fn "$TMP/lying" "$(printf '0x%x' $((0x$hc_start + 4)))")
	got_b=$(json_fn "$TMP/lying" "$mid")
	[ "$got_c" = "None None None" ] && [ "$got_b" = "lying!fn_$hb_start 0x$hb_start 0x$end" ] &&
		pass cfi_functions_fde_running_past_its_section_is_ignored ||
		fail cfi_functions_fde_running_past_its_section_is_ignored "hot_c: $got_c; hot_b: $got_b"
else
	fail cfi_functions_fde_running_past_its_section_is_ignored "$(cat "$TMP/err")"
fi

# hot_a's FDE stretched over hot_b: hot_b's addresses stay hot_b's (the FDE starting last
# wins), hot_a's get the stretched range.
if patch_range "$TMP/overlap" "${ha_start:-0}" $((0x${hc_start:-0} - 0x${ha_start:-0})) 2>"$TMP/err"; then
	got_a=$(json_fn "$TMP/overlap" "$(printf '0x%x' $((0x$ha_start + 4)))")
	got_b=$(json_fn "$TMP/overlap" "$mid")
	[ "$got_a" = "overlap!fn_$ha_start 0x$ha_start 0x$hc_start" ] &&
		[ "$got_b" = "overlap!fn_$hb_start 0x$hb_start 0x$end" ] &&
		pass cfi_functions_overlapping_fdes_the_later_start_wins ||
		fail cfi_functions_overlapping_fdes_the_later_start_wins "hot_a: $got_a; hot_b: $got_b"
else
	fail cfi_functions_overlapping_fdes_the_later_start_wins "$(cat "$TMP/err")"
fi

# The PLT's FDE covers all its stubs: no function of its own (profiles say [plt]).
plt=$(readelf -SW "$stripped" | awk '$2 == ".plt" {print $4; exit}')
if [ -n "$plt" ]; then
	got=$(json_fn "$stripped" "$(printf '0x%x' $((0x$plt + 0x10)))")
	[ "$got" = "None None None" ] && pass cfi_functions_plt_is_no_function ||
		fail cfi_functions_plt_is_no_function "got $got"
else
	fail cfi_functions_plt_is_no_function "no .plt in $(readelf -SW "$stripped" | grep -c .) sections"
fi

# CFI only in .debug_frame (built without unwind tables, so .eh_frame holds only the C
# runtime's FDEs), the binary's symbols and other debug sections stripped: the functions
# are .debug_frame's, with nm's starts and sizes; without .debug_frame, none.
if gcc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$TMP/df" \
	"$ROOT/tests/symbolize/cfi_functions.c" 2>"$TMP/err" &&
	objcopy --strip-all --keep-section=.debug_frame "$TMP/df" "$TMP/df.only" 2>>"$TMP/err" &&
	objcopy --strip-all "$TMP/df" "$TMP/df.none" 2>>"$TMP/err"; then
	bad=
	while read -r start size name; do
		want="df.only!fn_$start 0x$start 0x$(printf '%x' $((0x$start + 0x$size)))"
		got=$(json_fn "$TMP/df.only" "$(printf '0x%x' $((0x$start + 4)))")
		none=$(json_fn "$TMP/df.none" "$(printf '0x%x' $((0x$start + 4)))")
		[ "$got" = "$want" ] && [ "$none" = "None None None" ] || bad+="$name: $got / $none, want $want; "
	done < <(nm -S "$TMP/df" | awk '$4 ~ /^hot_[abc]$/ {a = $1; sub(/^0+/, "", a); s = $2; sub(/^0+/, "", s); print a, s, $4}')
	[ -z "$bad" ] && readelf -S "$TMP/df.only" | grep -q '\.debug_frame' &&
		! readelf -S "$TMP/df.only" | grep -q -e '\.symtab' -e '\.debug_info' &&
		pass cfi_functions_from_debug_frame_alone ||
		fail cfi_functions_from_debug_frame_alone "${bad:-sections: $(readelf -SW "$TMP/df.only" | grep -o '\.[a-z_.]*' | tr '\n' ' ')}"
else
	fail cfi_functions_from_debug_frame_alone "$(cat "$TMP/err")"
fi
