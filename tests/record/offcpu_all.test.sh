# tally record -a: the whole machine. A workload started outside tally (not a child of
# the recorded command) must be in the recording, with its threads by name and kernel
# frames; --duration bounds the time; without the privileges the message says what to
# change; --off-cpu works system-wide too, within 5% of the workload's own clock.
# suite: alone: records the whole machine (-a), with off-CPU time against the workload's clock
. tests/lib.sh

gcc -O2 -g -pthread -o "$TMP/prog" "$ROOT/tests/record/offcpu_prog.c" || { fail all_build; exit 0; }
BG=""
trap 'kill_children TERM; wait 2>/dev/null; rm -rf "$TMP"' EXIT

# outside: two threads spinning (at most 60 s; ended once the recordings that need it are
# made, or by the trap), started before the recordings
"$TMP/prog" threads 60000 >/dev/null &
BG=$!
sleep 0.3

# threads_of DATA PID: the names of PID's threads in the report's thread table
threads_of() {
	"$TALLY" report --threads "$1" 2>/dev/null |
		awk -v p="$2" '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on && $1 == p {print $3}' | sort -u | tr '\n' ' '
}

# The command reads 4 GB of /dev/zero (about 0.1 s of system time, the kernel clearing
# its buffer), so the recording holds kernel frames however quiet the rest of the machine
# is (with `sleep` alone, a quiet machine's half second could hold none).
if ! "$TALLY" record -q -a -o "$TMP/a.data" -- \
	sh -c 'dd if=/dev/zero of=/dev/null bs=1M count=4000 2>/dev/null; sleep 0.3' \
	>"$TMP/a.out" 2>"$TMP/a.err"; then
	if grep -q "perf_event_paranoid" "$TMP/a.err"; then
		skip record_all "$(cat "$TMP/a.err")"
	else
		fail record_all "$(cat "$TMP/a.err")"
	fi
	exit 0
fi
got=$(threads_of "$TMP/a.data" $BG)
[ "$got" = "spin-a spin-b " ] && pass record_all_sees_processes_outside_the_command \
	|| fail record_all_sees_processes_outside_the_command "threads of $BG: '$got'"
"$TALLY" report --top 1000 "$TMP/a.data" 2>&1 | grep -q " \[kernel\] " \
	&& pass record_all_has_kernel_frames || fail record_all_has_kernel_frames "no [kernel] frame"
# the command's own process is there too, and it exited with its status
"$TALLY" record -q -a -o "$TMP/b.data" -- sh -c 'exit 3' 2>/dev/null
[ $? = 3 ] && pass record_all_exits_with_the_commands_status || fail record_all_exits_with_the_commands_status

# --duration: about that long, however long the machine's processes run (a loaded machine
# wakes the timer late: up to twice as long)
t0=$(date +%s%N)
"$TALLY" record -q -a --duration 0.5 -o "$TMP/d.data" 2>"$TMP/d.err" || fail record_all_duration "$(cat "$TMP/d.err")"
t1=$(date +%s%N)
dur=$("$TALLY" report "$TMP/d.data" 2>/dev/null | awk '/^duration:/ {print $2}')
awk -v w=$(((t1 - t0) / 1000000)) -v d="${dur:-0}" 'BEGIN {exit !(w >= 450 && w < 5000 && d > 0.3 && d <= 1.0)}' \
	&& [ "$(threads_of "$TMP/d.data" $BG)" = "spin-a spin-b " ] \
	&& pass record_all_duration_bounds_the_recording \
	|| fail record_all_duration_bounds_the_recording "took $(((t1 - t0) / 1000000)) ms, recorded $dur s, threads of $BG: $(threads_of "$TMP/d.data" $BG)"

kill $BG 2>/dev/null
wait $BG 2>/dev/null
BG=""

# Without privileges: the message says what to change.
if command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	chmod 711 "$TMP"
	mkdir -m 777 "$TMP/np"
	expect_err record_all_unprivileged_says_what_to_change 1 "perf_event_paranoid to 0 or lower" \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$TALLY" record -a --duration 0.1 -o "$TMP/np/x.data"
fi

# Usage: -a with -p, --duration with a command.
expect_err record_all_not_with_p 2 "give -a or -p" "$TALLY" record -a -p $$ -o "$TMP/x.data"
expect_err record_duration_not_with_command 2 "command's end stops" "$TALLY" record -a --duration 1 -o "$TMP/x.data" -- true

# -a --off-cpu: every switch on the machine; the command's sleeps within 5%.
if "$TALLY" record -q -a --off-cpu -o "$TMP/o.data" -- "$TMP/prog" sleep 3 50 >"$TMP/o.out" 2>"$TMP/o.err"; then
	t=$(awk '$1 == "blocked" {s += $3} END {print s + 0}' "$TMP/o.out")
	c=$("$TALLY" export -f folded --metric off-cpu "$TMP/o.data" 2>/dev/null |
		awk '{n = split($1, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == "sleep_here") {s += $NF; break}} END {print s + 0}')
	awk -v t="$t" -v c="$c" 'BEGIN {exit !(t > 0 && (c - t) ^ 2 <= (0.05 * t) ^ 2)}' \
		&& pass record_all_off_cpu_within_5_percent \
		|| fail record_all_off_cpu_within_5_percent "program measured $t ns, tally charged $c ns"
else
	fail record_all_off_cpu_within_5_percent "$(cat "$TMP/o.err")"
fi
