# tally record --off-cpu: the time threads spend blocked, charged to where they blocked.
# The truth is the workload's own clock: tests/record/offcpu_prog.c times each blocking
# call with CLOCK_MONOTONIC and prints "blocked FUNCTION NS"; tally's off-cpu total of that
# function (exact nanoseconds, from the folded export) must be within 5% of their sum.
# suite: alone: off-CPU time is checked against the workload's own clock within 5%
. tests/lib.sh

gcc -O2 -g -pthread -o "$TMP/prog" "$ROOT/tests/record/offcpu_prog.c" || { fail offcpu_build; exit 0; }

# record NAME ARGS...: records prog ARGS with --off-cpu into NAME.data, its output in NAME.out
record() {
	local name=$1
	shift
	"$TALLY" record -q --off-cpu -o "$TMP/$name.data" -- "$TMP/prog" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}
# truth NAME FUNC: the program's own sum of FUNC's blocked time
truth() { awk -v f="$2" '$1 == "blocked" && $2 == f {s += $3} END {print s + 0}' "$TMP/$1.out"; }
# charged NAME FUNC: the off-cpu nanoseconds of the stacks through FUNC
charged() {
	"$TALLY" export -f folded --metric off-cpu "$TMP/$1.data" 2>/dev/null |
		awk -v f="$2" '{n = split($1, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == f) {s += $NF; break}} END {print s + 0}'
}
# within5 NAME FUNC: PASS when charged is within 5% of truth (and truth is not 0)
within5() {
	local t c
	t=$(truth "$1" "$2")
	c=$(charged "$1" "$2")
	awk -v t="$t" -v c="$c" 'BEGIN {exit !(t > 0 && (c - t) ^ 2 <= (0.05 * t) ^ 2)}' \
		&& pass "offcpu_${1}_charged_to_$2" \
		|| fail "offcpu_${1}_charged_to_$2" "program measured $t ns, tally charged $c ns ($(cat "$TMP/$1.err"))"
}

if ! record probe sleep 1 1; then
	if grep -q "tracefs\|perf_event_paranoid\|CAP_" "$TMP/probe.err"; then
		skip offcpu "$(cat "$TMP/probe.err")"
	else
		fail offcpu_record "$(cat "$TMP/probe.err")"
	fi
	exit 0
fi

# A thread sleeping 10 times 40 ms in sleep_here.
record sleep sleep 10 40 || fail offcpu_record_sleep "$(cat "$TMP/sleep.err")"
within5 sleep sleep_here
# the kernel frames of the wait are on the stack, below the function that blocked
"$TALLY" export -f folded --metric off-cpu "$TMP/sleep.data" | grep -q "sleep_here;.*nanosleep.*;schedule" \
	&& pass offcpu_stack_goes_down_to_the_scheduler \
	|| fail offcpu_stack_goes_down_to_the_scheduler "$("$TALLY" export -f folded --metric off-cpu "$TMP/sleep.data" | head -3)"

# perf script reads the recording (the file carries the tracepoint's format as perf's
# tracing data) and unwinds every sleep to sleep_here, as tally does.
if command -v perf >/dev/null; then
	perf script -i "$TMP/sleep.data" >"$TMP/sleep.script" 2>"$TMP/script.err"
	sw=$(grep -c "sched:sched_switch:" "$TMP/sleep.script")
	sl=$(awk '/sched:sched_switch:/ {on = 1; next} /^$/ {on = 0} on && / sleep_here\+/ {n++} END {print n + 0}' "$TMP/sleep.script")
	[ "$sw" -ge 10 ] && [ "$sl" -ge 10 ] && pass offcpu_perf_script_reads_the_recording \
		|| fail offcpu_perf_script_reads_the_recording "$sw switch samples, $sl in sleep_here: $(head -3 "$TMP/script.err")"
else
	skip offcpu_perf_script_reads_the_recording "no perf"
fi

# A thread blocked reading a pipe that the main thread writes after 200 ms.
record pipe pipe 200 || fail offcpu_record_pipe "$(cat "$TMP/pipe.err")"
within5 pipe read_here

# A thread waiting 200 ms on a mutex the main thread holds.
record mutex mutex 200 || fail offcpu_record_mutex "$(cat "$TMP/mutex.err")"
within5 mutex lock_here

# Children followed as for CPU samples: three children sleeping 100 ms each.
record fork fork 3 100 || fail offcpu_record_fork "$(cat "$TMP/fork.err")"
within5 fork child_sleep
"$TALLY" report --threads "$TMP/fork.data" >"$TMP/fork.report" 2>&1
pids=$(awk '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on {print $1}' "$TMP/fork.report" | sort -u | wc -l)
[ "$pids" -ge 4 ] && pass offcpu_children_are_their_own_processes \
	|| fail offcpu_children_are_their_own_processes "$pids processes: $(sed -n '/^Threads:/,/^$/p' "$TMP/fork.report")"

# The report shows CPU and off-CPU time per thread and their sum, wall-clock: the
# sleeper's is its sleeps (it does nothing else) within 5%.
"$TALLY" report --threads "$TMP/sleep.data" >"$TMP/sleep.report" 2>&1
ms() { awk '{v = $1; if (v ~ /ms$/) {sub("ms", "", v); print v * 1e6} else if (v ~ /us$/) {sub("us", "", v); print v * 1e3}
	else if (v ~ /ns$/) {sub("ns", "", v); print v + 0} else if (v ~ /s$/) {sub("s", "", v); print v * 1e9}}'; }
hdr=$(grep -E '^ +pid +tid +name +samples +cpu +off-cpu +wall-clock$' "$TMP/sleep.report")
wall=$(awk '$3 == "sleeper" {print $NF}' "$TMP/sleep.report" | ms)
awk -v t="$(truth sleep sleep_here)" -v w="${wall:-0}" -v h="$hdr" 'BEGIN {exit !(h != "" && t > 0 && (w - t) ^ 2 <= (0.05 * t) ^ 2)}' \
	&& pass offcpu_report_wall_clock_per_thread \
	|| fail offcpu_report_wall_clock_per_thread "sleeps $(truth sleep sleep_here) ns, wall-clock $wall: $(sed -n '/^Threads:/,/^$/p' "$TMP/sleep.report")"

# Without --off-cpu nothing changes: no off-cpu metric.
"$TALLY" record -q -o "$TMP/plain.data" -- "$TMP/prog" sleep 2 10 >/dev/null 2>&1
"$TALLY" report "$TMP/plain.data" 2>&1 | grep -q "off-cpu" \
	&& fail offcpu_only_when_asked "an off-cpu metric without --off-cpu" || pass offcpu_only_when_asked
