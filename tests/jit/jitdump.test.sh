# JIT frames from jitdump: Node 20 with --perf-prof --interpreted-frames-native-stack (with
# and without --perf-prof-unwinding-info), recorded by tally record and by perf record -k 1
# --call-graph dwarf. The oracles: perf report on the same file after perf inject --jit
# (the JS names and the shares of the two hot functions), the JS source written here (the
# line of each hot loop), and perf script's stacks after the same inject (tally's reach
# the process's entry at least as often). Node writes jit-PID.dump into its working
# directory and perf inject writes jitted-*.so beside it: both run in $TMP, with HOME there
# for perf's build-id cache.
. tests/lib.sh

command -v node >/dev/null || { skip jitdump_node "no node"; exit 0; }
command -v perf >/dev/null || { skip jitdump_node "no perf"; exit 0; }
export HOME="$TMP/home"
mkdir -p "$HOME"

# alpha's loop does more per step than beta's: distinct shares, both well above noise.
cat >"$TMP/hot.js" <<'EOF'
function alpha(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + i * i) % 1000003; // alpha loop
  return s;
}
function beta(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s ^ (i * 31)) % 999983; // beta loop
  return s;
}
const end = Date.now() + Number(process.argv[2]);
let acc = 0;
while (Date.now() < end) {
  acc += alpha(200000);
  acc += beta(300000);
}
console.log(acc > 0 ? "done" : "zero");
EOF
line_of() { grep -n "$1" "$TMP/hot.js" | cut -d: -f1; }
alpha_line=$(line_of "alpha loop")
beta_line=$(line_of "beta loop")

# self% of a JS function (all its tiers: ~ ^ + *) in tally report's first table
tally_share() { awk -v f="$2" '/^Top functions by total/ {exit}
	$5 ~ "^JS:[*~^+]?" f "$" {sub("%", "", $1); s += $1} END {printf "%.2f\n", s}' "$1"; }
perf_share() { awk -v f="$2" '$2 == "[.]" && $3 ~ "^JS:[*~^+]?" f "$" {sub("%", "", $1); s += $1}
	END {printf "%.2f\n", s}' "$1"; }
# Whether two shares of n samples agree within sampling error (3 sigma, and half a point
# for the rounding of the two tables).
agree() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN {p = (a + b) / 200; e = 300 * sqrt(p * (1 - p) / n) + 0.5
	d = a - b; exit !(n > 0 && (d < 0 ? -d : d) <= e)}'; }
# The share of samples in function f whose stack reaches the process's entry (node's main
# is inlined into __libc_start_call_main): tally's folded export, and perf script's stacks
# (a blank line ends each; --no-inline, or perf runs addr2line for minutes).
tally_reach() { awk -v f="$2" '{n = $NF; sub(/ [0-9]+$/, ""); k = split($0, fr, ";")
	if (fr[k] !~ "^JS:[*~^+]?" f " ") next; all += n; for (i = 1; i <= k; i++) if (fr[i] == "__libc_start_call_main") {hit += n; break}}
	END {printf "%.3f\n", all ? hit / all : 0}' "$1"; }
perf_reach() { awk -v f="$2" 'BEGIN {first = 1}
	NF == 0 {if (leaf) {all++; hit += m} leaf = 0; first = 1; next}
	first {first = 0; leaf = ($2 ~ "^JS:[*~^+]?" f "$"); m = 0; next}
	leaf && $2 == "__libc_start_call_main" {m = 1}
	END {if (leaf) {all++; hit += m} printf "%.3f\n", all ? hit / all : 0}' "$1"; }

run_case() {
	local rec=$1 unwinding=$2 name="${1}_${2}" dir="$TMP/$1_$2"
	local flags="--perf-prof --interpreted-frames-native-stack"
	[ "$unwinding" = unwinding ] && flags="$flags --perf-prof-unwinding-info"
	mkdir -p "$dir"
	cd "$dir" || return
	if [ "$rec" = tally ]; then
		"$TALLY" record -q -o rec.data -- node $flags "$TMP/hot.js" 2000 >/dev/null 2>err
	else
		perf record -q -k 1 --call-graph dwarf -o rec.data -- node $flags "$TMP/hot.js" 2000 \
			>/dev/null 2>err
	fi || { fail "jitdump_${name}_record" "$(tail -3 err)"; cd "$ROOT"; return; }
	perf inject --jit -i rec.data -o inj.data 2>err \
		|| { fail "jitdump_${name}_perf_inject" "$(tail -3 err)"; cd "$ROOT"; return; }
	perf report --no-inline -i inj.data --stdio --no-children -g none --sort sym 2>/dev/null >perf.report
	"$TALLY" report --top 200 rec.data >tally.report 2>tally.err \
		|| { fail "jitdump_${name}_report" "$(tail -3 tally.err)"; cd "$ROOT"; return; }
	local samples
	samples=$(awk '/^total:/ {print $2; exit}' tally.report)

	local ok=1 why=""
	for f in alpha beta; do
		local t p
		t=$(tally_share tally.report $f)
		p=$(perf_share perf.report $f)
		why="$why $f: tally $t% perf $p%;"
		agree "$t" "$p" "${samples:-0}" && awk -v t="$t" 'BEGIN {exit !(t >= 5)}' || ok=0
	done
	[ $ok = 1 ] && pass "jitdump_${name}_js_shares_agree_with_perf" \
		|| fail "jitdump_${name}_js_shares_agree_with_perf" "$why (of $samples)"

	# Samples left in unnamed JIT code (anonymous memory no dump record covers): tally's
	# anon+0x... rows, perf's [.] rows in //anon or [unknown]; no more than perf's (half a
	# point for the rounding of its table).
	perf report --no-inline -i inj.data --stdio --no-children -g none --sort dso,sym 2>/dev/null \
		>perf.dso.report
	local tu pu
	tu=$(awk -v n="${samples:-0}" '/^Top functions by total/ {exit}
		$5 ~ /^anon\+0x/ {s += $2} END {printf "%.2f\n", n ? 100 * s / n : 0}' tally.report)
	pu=$(awk '$3 == "[.]" && ($2 == "//anon" || $2 == "[unknown]") {sub("%", "", $1); s += $1}
		END {printf "%.2f\n", s}' perf.dso.report)
	awk -v t="$tu" -v p="$pu" 'BEGIN {exit !(t <= p + 0.5)}' \
		&& pass "jitdump_${name}_unnamed_jit_samples_no_more_than_perf" \
		|| fail "jitdump_${name}_unnamed_jit_samples_no_more_than_perf" "tally $tu%, perf $pu%"

	# Node 20 writes V8's CFI for optimized code (JS:*) with --perf-prof, with or without
	# --perf-prof-unwinding-info: the unwinder steps each sample's optimized JS frame with
	# it, so there are at least as many JIT CFI steps as samples in JS:* code.
	local steps opt
	steps=$(awk '/unwind: JIT CFI steps/ {print $NF; exit}' tally.report)
	opt=$(awk '/^Top functions by total/ {exit} $5 ~ /^JS:\*/ {s += $2} END {print s + 0}' tally.report)
	[ "${steps:-0}" -ge "$opt" ] && [ "$opt" -gt 0 ] \
		&& pass "jitdump_${name}_unwinder_uses_jit_cfi" \
		|| fail "jitdump_${name}_unwinder_uses_jit_cfi" "${steps:-no} JIT CFI steps, $opt samples in JS:* code"

	# The hottest line of each function is its loop, as the source says.
	if command -v go >/dev/null; then
		"$TALLY" export -f pprof -o rec.pb.gz rec.data 2>/dev/null
		go tool pprof -top -lines rec.pb.gz 2>/dev/null >lines.top
		local got_a got_b
		# rows "FLAT FLAT% SUM% CUM CUM% NAME NAME'S-FILE:LINE:COL FILE:LINE"
		got_a=$(awk 'NF == 8 && $6 ~ /^JS:\*?alpha$/ {print $NF; exit}' lines.top)
		got_b=$(awk 'NF == 8 && $6 ~ /^JS:\*?beta$/ {print $NF; exit}' lines.top)
		[ "$got_a" = "$TMP/hot.js:$alpha_line" ] && [ "$got_b" = "$TMP/hot.js:$beta_line" ] \
			&& pass "jitdump_${name}_hot_lines_are_the_loops" \
			|| fail "jitdump_${name}_hot_lines_are_the_loops" \
				"alpha at $got_a, beta at $got_b; loops at $alpha_line, $beta_line"
	else
		skip "jitdump_${name}_hot_lines_are_the_loops" "no go tool pprof"
	fi

	# annotate: the dump's code disassembled, weighed, with the loop's source line.
	"$TALLY" annotate --function 'JS:*alpha' rec.data >annotate.txt 2>/dev/null
	local insns weighed
	insns=$(grep -c '^ .*[0-9a-f]\{6,\}:  [a-z]' annotate.txt)
	weighed=$(grep -c '^ *[0-9.]*% .*[0-9a-f]\{6,\}:  [a-z]' annotate.txt)
	grep -q "hot.js:$alpha_line .*alpha loop" annotate.txt && [ "$insns" -gt 20 ] && [ "$weighed" -gt 3 ] \
		&& pass "jitdump_${name}_annotate_shows_jit_code" \
		|| fail "jitdump_${name}_annotate_shows_jit_code" \
			"$insns instructions, $weighed weighed: $(head -4 annotate.txt)"

	"$TALLY" export -f folded -o rec.folded rec.data 2>/dev/null
	perf script --no-inline -i inj.data -F ip,sym 2>/dev/null >perf.script
	local tr pr
	tr=$(tally_reach rec.folded alpha)
	pr=$(perf_reach perf.script alpha)
	awk -v t="$tr" -v p="$pr" 'BEGIN {exit !(t > 0.9 && t >= p - 0.02)}' \
		&& pass "jitdump_${name}_stacks_through_jit_as_complete_as_perf" \
		|| fail "jitdump_${name}_stacks_through_jit_as_complete_as_perf" \
			"alpha's samples reaching __libc_start_call_main: tally $tr, perf $pr"
	cd "$ROOT" || return
}

for rec in tally perf; do
	for unwinding in fp unwinding; do
		run_case $rec $unwinding
	done
done
