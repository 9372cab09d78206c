# tally annotate: a program compiled here, a pprof profile written by our own encoder
# (tests/report/annotate_pprof.js) with weights on chosen instructions; instruction
# boundaries are checked against objdump/llvm-objdump, source lines against addr2line,
# and the HTML page in headless Chromium.
. tests/lib.sh

prog=$TMP/annotate_prog
gcc -O2 -g -o "$prog" tests/report/annotate_prog.c || { fail annotate_builds_test_program; exit 0; }

# Instruction addresses of a function, as objdump prints them (hex, no leading zeros).
insns() { objdump -d --no-show-raw-insn --disassemble="$2" "$1" | sed -n 's/^ *\([0-9a-f]*\):.*/\1/p'; }
mapfile -t crunch < <(insns "$prog" crunch)
mapfile -t main_insns < <(insns "$prog" main)
n=${#crunch[@]}
hot=${crunch[n / 2]} warm=${crunch[n / 2 - 2]} cool=${crunch[n - 2]}
bid=$(readelf -n "$prog" | sed -n 's/.*Build ID: //p')

# profile JSON: module-relative addresses (hex) and weights.
write_profile() { # OUT BINARY BUILD_ID NAME
	cat >"$1.json" <<-JSON
	{ "binary": "$2", "build_id": "$3", "start": "0x555555554000", "samples": [
	  { "stack": [{ "addr": $((0x$hot)), "func": "$4" }, { "addr": $((0x${main_insns[3]})), "func": "main" }], "value": 70 },
	  { "stack": [{ "addr": $((0x$warm)), "func": "$4" }, { "addr": $((0x${main_insns[3]})), "func": "main" }], "value": 20 },
	  { "stack": [{ "addr": $((0x$cool)), "func": "$4" }, { "addr": $((0x${main_insns[3]})), "func": "main" }], "value": 10 },
	  { "stack": [{ "addr": $((0x${main_insns[3]})), "func": "main" }], "value": 5 } ] }
	JSON
	node tests/report/annotate_pprof.js "$1.json" "$1"
}
write_profile "$TMP/p.pb" "$prog" "$bid" crunch || { fail annotate_writes_test_profile; exit 0; }

out=$("$TALLY" annotate "$TMP/p.pb" 2>&1) || fail annotate_runs "$out"
printf '%s\n' "$out" >"$TMP/out.txt"
rows() { sed -n 's/^.* \([0-9a-f]*\):  .*/\1/p' "$1"; }
[ "$(rows "$TMP/out.txt")" = "$(printf '%s\n' "${crunch[@]}")" ] && pass annotate_lists_the_instructions_objdump_lists ||
	fail annotate_lists_the_instructions_objdump_lists "$(diff <(rows "$TMP/out.txt") <(printf '%s\n' "${crunch[@]}") | head -5 | tr '\n' ' ')"

row() { grep -E "^ *[0-9.]+% +[0-9,]+ +#* +$2:  " "$1"; }
[[ "$(row "$TMP/out.txt" "$hot")" == *" 70.00% "*" 70 "* ]] &&
	[[ "$(row "$TMP/out.txt" "$warm")" == *" 20.00% "*" 20 "* ]] &&
	[[ "$(row "$TMP/out.txt" "$cool")" == *" 10.00% "*" 10 "* ]] &&
	[ "$(grep -cE '^ *[0-9.]+% ' "$TMP/out.txt")" -eq 3 ] &&
	grep -q '^  100 samples on these instructions: 95.24% of 105$' "$TMP/out.txt" &&
	pass annotate_puts_weights_on_their_instructions || fail annotate_puts_weights_on_their_instructions "$out"

head -1 "$TMP/out.txt" | grep -qx 'function crunch' && pass annotate_default_is_the_hottest_function ||
	fail annotate_default_is_the_hottest_function "$(head -1 "$TMP/out.txt")"

"$TALLY" annotate --function main "$TMP/p.pb" >"$TMP/main.txt" 2>&1
[ "$(rows "$TMP/main.txt")" = "$(printf '%s\n' "${main_insns[@]}")" ] &&
	[[ "$(row "$TMP/main.txt" "${main_insns[3]}")" == *" 100.00% "*" 5 "* ]] &&
	pass annotate_function_option || fail annotate_function_option "$(head -5 "$TMP/main.txt")"

# Asking for an inlined function shows the function it was inlined into, with the weight of
# every pc in that function (the inlined frame's and the caller's own).
cat >"$TMP/inl.json" <<-JSON
{ "binary": "$prog", "build_id": "$bid", "start": "0x555555554000", "samples": [
  { "stack": [{ "addr": $((0x$hot)), "func": "crunch", "inlined": ["mix"] }], "value": 8 },
  { "stack": [{ "addr": $((0x$cool)), "func": "crunch" }], "value": 2 } ] }
JSON
node tests/report/annotate_pprof.js "$TMP/inl.json" "$TMP/inl.pb"
"$TALLY" annotate --function mix "$TMP/inl.pb" >"$TMP/inl.txt" 2>&1
head -1 "$TMP/inl.txt" | grep -qx 'function crunch (into which mix was inlined)' &&
	[[ "$(row "$TMP/inl.txt" "$hot")" == *" 80.00% "*" 8 "* ]] &&
	[[ "$(row "$TMP/inl.txt" "$cool")" == *" 20.00% "*" 2 "* ]] &&
	pass annotate_inlined_function_shows_its_caller || fail annotate_inlined_function_shows_its_caller "$(head -8 "$TMP/inl.txt" | tr '\n' ' ')"

printf 'main;crunch 5\n' >"$TMP/p.folded"
err=$("$TALLY" annotate "$TMP/p.folded" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"no addresses"* ]] && pass annotate_folded_input_is_explained ||
	fail annotate_folded_input_is_explained "exit $rc: $err"

# Colour: none into a pipe; on a terminal (script(1) gives one) or with --color=always the
# hottest row is bold red; NO_COLOR turns it off on a terminal.
tty_out=$(TERM=xterm script -qec "$TALLY annotate $TMP/p.pb" /dev/null </dev/null)
tty_plain=$(NO_COLOR=1 TERM=xterm script -qec "$TALLY annotate $TMP/p.pb" /dev/null </dev/null)
grep -q $'^\033\\[1;31m.* '"$hot"':  ' <<<"$tty_out" && ! grep -q $'\033' <<<"$tty_plain" &&
	pass annotate_colour_on_a_terminal || fail annotate_colour_on_a_terminal "$(head -3 <<<"$tty_out" | od -c | head -3)"

! grep -q $'\033' "$TMP/out.txt" && "$TALLY" annotate --color=always "$TMP/p.pb" |
	grep -q $'^\033\\[1;31m.* '"$hot"':  ' && pass annotate_colour_only_when_asked ||
	fail annotate_colour_only_when_asked

# Source: the line printed above the hottest instruction is addr2line's, with its text.
want=$(addr2line -e "$prog" "0x$hot" | sed 's/ (discriminator.*//')
got=$(awk -v a="$hot" '/^ +[^ ]+\.c:[0-9]+/ { src = $1 } $0 ~ " " a ":  " { print src; exit }' "$TMP/out.txt")
text=$(sed -n "${want##*:}p" tests/report/annotate_prog.c | sed 's/^[[:space:]]*//')
[ "$got" = "$(basename "${want%%:*}"):${want##*:}" ] && grep -qF "$text" "$TMP/out.txt" &&
	pass annotate_source_lines_match_addr2line || fail annotate_source_lines_match_addr2line "got '$got', addr2line '$want'"

write_profile "$TMP/badid.pb" "$prog" 00112233445566778899aabbccddeeff00112233 crunch
err=$("$TALLY" annotate "$TMP/badid.pb" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *"build-id $bid is not the profile's 0011"* ]] &&
	"$TALLY" annotate --binary "$prog" "$TMP/badid.pb" >/dev/null &&
	pass annotate_checks_build_id || fail annotate_checks_build_id "exit $rc: $err"

err=$("$TALLY" annotate --function n "$TMP/p.pb" 2>&1); rc=$?
"$TALLY" annotate --function runc "$TMP/p.pb" 2>&1 | head -1 | grep -qx 'function crunch' &&
	[ $rc -eq 1 ] && [[ "$err" == *"'n' names several functions"* ]] &&
	pass annotate_function_by_part_of_its_name || fail annotate_function_by_part_of_its_name "exit $rc: $err"

err=$("$TALLY" annotate --function nosuch "$TMP/p.pb" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == "tally: $TMP/p.pb: no function 'nosuch'"* ]] &&
	pass annotate_unknown_function_is_an_error || fail annotate_unknown_function_is_an_error "exit $rc: $err"

# A real run: perf samples the program; their pcs (from perf script) become our profile,
# and each instruction's share must equal what perf annotate prints for the same data.
long=$(head -c 100000 /dev/zero | tr '\0' a)
if perf record -q -e cpu-clock -F 10000 -o "$TMP/perf.data" "$prog" "$long" >/dev/null 2>"$TMP/perf.err"; then
	base=$((0x$(nm "$prog" | awk '$3 == "crunch" { print $1 }')))
	perf script -i "$TMP/perf.data" -F ip,sym,symoff 2>/dev/null |
		sed -n 's/^ *[0-9a-f]* crunch+0x\([0-9a-f]*\)$/\1/p' | sort | uniq -c |
		while read -r count off; do echo "$((base + 0x$off)) $count"; done >"$TMP/counts"
	{
		echo "{ \"binary\": \"$prog\", \"build_id\": \"$bid\", \"start\": \"0x7f0000000000\", \"samples\": ["
		awk 'NR > 1 { printf "," } { printf "{ \"stack\": [{ \"addr\": %d, \"func\": \"crunch\" }], \"value\": %d }\n", $1, $2 }' "$TMP/counts"
		echo "] }"
	} >"$TMP/real.json"
	node tests/report/annotate_pprof.js "$TMP/real.json" "$TMP/real.pb"
	"$TALLY" annotate "$TMP/real.pb" >"$TMP/real.txt" 2>&1
	ours=$(sed -n 's/^ *\([0-9.]*\)% .* \([0-9a-f]*\):  .*/\2 \1/p' "$TMP/real.txt")
	theirs=$(perf annotate -i "$TMP/perf.data" --stdio -s crunch 2>/dev/null |
		sed -n 's/^ *\([0-9.]*\) : *\([0-9a-f]*\):.*/\2 \1/p' | awk '$2 != "0.00"')
	[ "$(wc -l <<<"$ours")" -ge 2 ] && [ "$ours" = "$theirs" ] && pass annotate_matches_perf_annotate_on_a_real_run ||
		fail annotate_matches_perf_annotate_on_a_real_run "ours: $(echo $ours) perf: $(echo $theirs)"
else
	skip annotate_matches_perf_annotate_on_a_real_run "perf record failed: $(head -2 "$TMP/perf.err")"
fi

# Other architectures, through clang and llvm-objdump (object files: no C library needed).
for target in aarch64:aarch64-linux-gnu i386:i386-linux-gnu; do
	arch=${target%%:*} triple=${target#*:}
	if ! clang --target="$triple" -O2 -c -o "$TMP/$arch.o" tests/report/annotate_prog.c 2>"$TMP/cc.err"; then
		fail "annotate_${arch}_matches_llvm_objdump" "clang --target=$triple: $(head -2 "$TMP/cc.err")"
		continue
	fi
	# llvm-objdump runs on into the alignment padding up to the next symbol: stop at the
	# end the symbol's size gives (nm -S), as annotate does.
	end=$(nm -S "$TMP/$arch.o" | awk '$4 == "crunch" { print $1 " " $2 }')
	end=$((0x${end% *} + 0x${end#* }))
	mapfile -t other < <(llvm-objdump -d --no-show-raw-insn --disassemble-symbols=crunch "$TMP/$arch.o" |
		sed -n 's/^ *\([0-9a-f]*\):.*/\1/p' | while read -r a; do [ $((0x$a)) -lt $end ] && echo "$a"; done)
	cat >"$TMP/$arch.json" <<-JSON
	{ "binary": "$TMP/$arch.o", "build_id": "", "start": "0x400000", "samples": [
	  { "stack": [{ "addr": $((0x${other[3]})), "func": "crunch" }], "value": 3 } ] }
	JSON
	node tests/report/annotate_pprof.js "$TMP/$arch.json" "$TMP/$arch.pb"
	"$TALLY" annotate "$TMP/$arch.pb" >"$TMP/$arch.txt" 2>&1
	[ "${#other[@]}" -gt 5 ] && [ "$(rows "$TMP/$arch.txt")" = "$(printf '%s\n' "${other[@]}")" ] &&
		grep -q ", $arch\$" "$TMP/$arch.txt" &&
		[[ "$(row "$TMP/$arch.txt" "${other[3]}")" == *" 100.00% "*" 3 "* ]] &&
		pass "annotate_${arch}_matches_llvm_objdump" ||
		fail "annotate_${arch}_matches_llvm_objdump" "$(head -12 "$TMP/$arch.txt" | tr '\n' ' ')"
done

# A name that tries to drive the terminal (ESC, and CSI as C1 U+009B) is printed inert.
write_profile "$TMP/esc.pb" "$prog" "$bid" 'evil\u001b[2J\u009b1m'
"$TALLY" annotate "$TMP/esc.pb" >"$TMP/esc.txt" 2>&1
head -1 "$TMP/esc.txt" | grep -qxF 'function evil?[2J?1m' && ! grep -q $'\033' "$TMP/esc.txt" &&
	pass annotate_text_neutralises_control_characters || fail annotate_text_neutralises_control_characters "$(head -1 "$TMP/esc.txt" | od -c | head -3)"

# sBPF: src/sbpf's disassembler. A real program from the shared corpus: every instruction
# of the function reads as `tally sbpf disasm` prints it (itself checked against
# llvm-objdump), jump targets as addresses; weights land on their instructions. Calls and
# lddw are left out: annotate reads the file's bytes, disasm the loaded program (calls
# resolved to names, lddw immediates relocated).
sbpf=$SHARED/corpus/sbpf/programs/counter.so
if [ -f "$sbpf" ]; then
	entry=$(readelf --dyn-syms "$sbpf" | awk '$8 == "entrypoint" { print $2 }')
	text=$(readelf -SW "$sbpf" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 2) }')
	cat >"$TMP/sbpf.json" <<-JSON
	{ "binary": "$sbpf", "build_id": "", "start": "0x100000000", "samples": [
	  { "stack": [{ "addr": $((0x$entry + 40)), "func": "entrypoint" }], "value": 9 },
	  { "stack": [{ "addr": $((0x$entry + 8)), "func": "entrypoint" }], "value": 3 } ] }
	JSON
	node tests/report/annotate_pprof.js "$TMP/sbpf.json" "$TMP/sbpf.pb"
	"$TALLY" annotate "$TMP/sbpf.pb" >"$TMP/sbpf.txt" 2>&1
	"$TALLY" sbpf disasm "$sbpf" | sed -n 's/^ *\([0-9][0-9]*\):  \(.*\)$/\1 \2/p' >"$TMP/sbpf.dis"
	got=$(sed -n 's/^.* \([0-9a-f]*\):  \(.*[^ ]\) *$/\1 \2/p' "$TMP/sbpf.txt" | grep -v -e ' call ' -e ' lddw ')
	want=$(while read -r addr insn; do
		pc=$(((0x$addr - 0x$text) / 8))
		line=$(awk -v pc=$pc '$1 == pc { $1 = ""; print substr($0, 2) }' "$TMP/sbpf.dis")
		if [[ "$line" =~ ^(.*)lbb_([0-9]+)$ ]]; then
			line=$(printf '%s%#x' "${BASH_REMATCH[1]}" $((0x$text + 8 * BASH_REMATCH[2])))
		fi
		echo "$addr $line"
	done <<<"$got")
	[ -n "$got" ] && [ "$got" = "$want" ] && ! grep -q 'no sBPF disassembler' "$TMP/sbpf.txt" &&
		[[ "$(row "$TMP/sbpf.txt" "$(printf %x $((0x$entry + 40)))")" == *" 75.00% "*" 9 "*"jne r1, 0, "* ]] &&
		[[ "$(row "$TMP/sbpf.txt" "$(printf %x $((0x$entry + 8)))")" == *" 25.00% "*" 3 "*"mov64 r1, r10"* ]] &&
		pass annotate_sbpf_disassembles || fail annotate_sbpf_disassembles "$(diff <(echo "$want") <(echo "$got") | head -6 | tr '\n' ' ')"
	# the same view in HTML: Python's parser finds the text's rows, weights and instructions
	"$TALLY" annotate --html -o "$TMP/sbpf.html" "$TMP/sbpf.pb" 2>"$TMP/err" &&
		python3 tests/report/annotate_html_rows.py "$TMP/sbpf.html" "$TMP/sbpf.txt" >"$TMP/rows.out" 2>&1 &&
		pass annotate_sbpf_html_carries_the_text_rows ||
		fail annotate_sbpf_html_carries_the_text_rows "$(cat "$TMP/err" "$TMP/rows.out")"
else
	skip annotate_sbpf_disassembles "no shared corpus at $sbpf"
fi

# HTML: names escaped; in Chromium, the hottest instruction stands out.
write_profile "$TMP/html.pb" "$prog" "$bid" 'crunch<&>'
"$TALLY" annotate --html --function 'crunch<&>' -o "$TMP/a.html" "$TMP/html.pb" 2>"$TMP/err" &&
	grep -q '<h1>crunch&lt;&amp;&gt;</h1>' "$TMP/a.html" && pass annotate_html_escapes_names ||
	fail annotate_html_escapes_names "$(cat "$TMP/err")"
"$TALLY" annotate --color never --function 'crunch<&>' "$TMP/html.pb" >"$TMP/a.txt" 2>&1 &&
	python3 tests/report/annotate_html_rows.py "$TMP/a.html" "$TMP/a.txt" >"$TMP/rows.out" 2>&1 &&
	pass annotate_html_carries_the_text_rows ||
	fail annotate_html_carries_the_text_rows "$(cat "$TMP/rows.out")"
. tests/report/flamegraph_playwright.sh
if [ $PW_OK = 1 ]; then
	timeout 120 node tests/report/annotate_browser.js "$PW" "$TMP/chromium" "$TMP/a.html" "$hot" "$n" ||
		echo "FAIL: annotate_html_browser: exit $?"
else
	skip annotate_html_in_chromium "no playwright-core in $NPM_DIR (run scripts/install-deps.sh test) or no /usr/bin/chromium"
fi
