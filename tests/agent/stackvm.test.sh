# The agent in examples/stackvm.c, a bytecode interpreter of our own, against oracles
# nobody here wrote for it: the interpreter's own instruction counts (built with
# TALLY_AGENT_DISABLE, so no line of the agent runs) and `go tool pprof` reading the exact
# profile; the sampled shares against those counts within binomial bounds; and a run
# killed with SIGKILL, whose stream `tally report` and awk must still read whole.
. tests/lib.sh

libs=$(sed -n "s/^LIBS := //p" "$ROOT/Makefile")
san=$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined)
cflags="-std=gnu11 -O2 -Wall -Wextra -Werror -I$ROOT/include"
if ! cc $cflags -DTALLY_AGENT_DISABLE -o "$TMP/stackvm-off" "$ROOT/examples/stackvm.c" 2>"$TMP/cc.err" ||
	! cc $cflags $san -o "$TMP/stackvm" "$ROOT/examples/stackvm.c" "$ROOT/$BUILD/libtally.a" $libs 2>>"$TMP/cc.err"; then
	fail agent_stackvm_builds "$(head -5 "$TMP/cc.err")"
	exit 0
fi

# Compiled out, the agent leaves nothing: no call, no symbol of libtally's (nm, binutils').
if nm "$TMP/stackvm-off" | grep -q tally_; then
	fail agent_disable_compiles_to_nothing "$(nm "$TMP/stackvm-off" | grep tally_ | head -3)"
else
	nm "$TMP/stackvm" | grep -q 'tally_agent_cost' && pass agent_disable_compiles_to_nothing ||
		fail agent_disable_compiles_to_nothing "the agent build has no tally_agent_cost either"
fi

# The oracle: "FUNCTION COUNT" lines of the interpreter built without the agent, and
# "FUNCTION:LINE COUNT" per instruction.
"$TMP/stackvm-off" -n 50 --lines | grep -v '^result' >"$TMP/oracle"
grep -v : "$TMP/oracle" | sort >"$TMP/want"
grep : "$TMP/oracle" | sort >"$TMP/want.lines"

# Exact mode: go tool pprof's flat column per function equals the interpreter's counts.
if ! "$TMP/stackvm" -n 50 --exact "$TMP/exact.pb.gz" >"$TMP/exact.out" 2>&1; then
	fail agent_exact_counts_equal_interpreter "$(cat "$TMP/exact.out")"
elif ! command -v go >/dev/null; then
	skip agent_exact_counts_equal_interpreter "no go (go tool pprof)"
else
	go tool pprof -top -nodecount=100 -nodefraction=0 "$TMP/exact.pb.gz" 2>/dev/null |
		awk '$NF ~ /^[a-z]+$/ && $1 ~ /^[0-9]+$/ { print $NF, $1 }' | sort >"$TMP/got"
	if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got"; then
		pass agent_exact_counts_equal_interpreter
	else
		fail agent_exact_counts_equal_interpreter "want $(cat "$TMP/want"); got $(cat "$TMP/got")"
	fi
fi

# Per line too (the lines come from the registered pc -> line table), as go tool pprof
# -lines reads them.
if command -v go >/dev/null; then
	go tool pprof -lines -top -nodecount=1000 -nodefraction=0 "$TMP/exact.pb.gz" 2>/dev/null |
		awk '$NF ~ /^stackvm.program:[0-9]+$/ { split($NF, a, ":"); print $(NF-1) ":" a[2], $1 }' |
		sort >"$TMP/got.lines"
	if [ -s "$TMP/want.lines" ] && cmp -s "$TMP/want.lines" "$TMP/got.lines"; then
		pass agent_exact_counts_per_line
	else
		fail agent_exact_counts_per_line "$(diff "$TMP/want.lines" "$TMP/got.lines" | head -5)"
	fi
fi

# Sampling mode: samples measure time, the exact profile instructions, so the two agree
# where time per instruction is the same: hot, warm and cold run one loop body (fib's calls
# and returns cost more time per instruction, main is a few thousand instructions). Among
# the samples whose leaf is one of the three, each one's share agrees with its share of
# their instructions within a binomial bound: |p_sampled - p_exact| <= 4.5 sigma,
# sigma = sqrt(p (1 - p) / N), plus 2 points for the loops' different code addresses.
"$TMP/stackvm-off" -n 12000 | grep -E '^(hot|warm|cold) ' >"$TMP/counts"
if ! "$TMP/stackvm" -n 12000 --sample "$TMP/s.folded" --hz 4999 --sample-pprof "$TMP/s.pb.gz" \
	>/dev/null 2>"$TMP/s.err"; then
	fail agent_sampled_shares_agree "$(cat "$TMP/s.err")"
else
	verdict=$(awk -v counts="$TMP/counts" -f "$ROOT/tests/agent/shares.awk" "$TMP/s.folded")
	case $verdict in
	ok*) pass agent_sampled_shares_agree ;;
	*) fail agent_sampled_shares_agree "$verdict" ;;
	esac
fi

# The samples' pprof (sample_pprof) places each sample at the published pc's line: go tool
# pprof -lines finds every sampled line among the lines the interpreter executed, and
# the same total as the stream.
if command -v go >/dev/null && [ -s "$TMP/s.pb.gz" ]; then
	go tool pprof -lines -top -nodecount=1000 -nodefraction=0 "$TMP/s.pb.gz" 2>/dev/null |
		awk '$NF ~ /^stackvm.program:[0-9]+$/ { split($NF, a, ":"); print $(NF-1) ":" a[2] }' |
		sort -u >"$TMP/s.lines"
	total=$(awk '{ s += $NF } END { print s }' "$TMP/s.folded")
	stray=$(cut -d' ' -f1 "$TMP/want.lines" | sort -u | comm -13 - "$TMP/s.lines")
	if [ -s "$TMP/s.lines" ] && [ -z "$stray" ] &&
		go tool pprof -top "$TMP/s.pb.gz" 2>/dev/null | grep -q "of $total total"; then
		pass agent_sampled_pcs_land_on_executed_lines
	else
		fail agent_sampled_pcs_land_on_executed_lines "stray lines: $stray; $(go tool pprof -top "$TMP/s.pb.gz" 2>&1 | sed -n 3,4p)"
	fi
elif command -v go >/dev/null; then
	fail agent_sampled_pcs_land_on_executed_lines "no sampled pprof written"
fi

# Sampled stacks are whole: every line is main, then main's callees, innermost last.
if grep -qvE '^main(;(hot|warm|cold|fib(;fib)*))? [0-9]+$' "$TMP/s.folded"; then
	fail agent_sampled_stacks_whole "$(grep -vE '^main(;(hot|warm|cold|fib(;fib)*))? [0-9]+$' "$TMP/s.folded" | head -3)"
else
	pass agent_sampled_stacks_whole
fi

# A run killed with SIGKILL leaves a stream read whole up to its last flush (every 100 ms):
# after 1.5 s (at least one flush, whatever the machine's load), whole lines only, and
# tally report reads them all.
"$TMP/stackvm" -n 1000000 --sample "$TMP/k.folded" --hz 4999 >/dev/null 2>&1 &
pid=$!
trap 'kill_children 9; rm -rf "$TMP"' EXIT
sleep 1.5
kill -9 $pid
wait $pid 2>/dev/null
n=$(grep -cE '^main(;[a-z]+)* 1$' "$TMP/k.folded")
total=$(wc -l <"$TMP/k.folded")
last=$(tail -c 1 "$TMP/k.folded" | od -An -c | tr -d ' ')
if [ "$n" -ge 10 ] && [ "$n" = "$total" ] && [ "$last" = '\n' ] &&
	"$TALLY" report "$TMP/k.folded" >"$TMP/k.report" 2>&1 && grep -q "total: *$n samples" "$TMP/k.report"; then
	pass agent_stream_survives_sigkill
else
	fail agent_stream_survives_sigkill "$n whole lines of $total, last byte '$last': $(head -3 "$TMP/k.report" 2>/dev/null)"
fi
