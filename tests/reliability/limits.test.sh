# Limits (issue 18 §5; a report cut short by its reader is sigpipe.test.sh's): a target
# with 1,000 threads is recorded whole (-- CMD and -p; perf script is the oracle for what
# the file holds, perf record -p beside tally's for what -p keeps); a perf.data of 1 GB is
# reported in the memory of one of 100 MB plus its index (records are read as they are
# decoded, not held: see docs/outputs.md, "Limits"); and a limit of open files too small
# for the threads fails with a message that names it.
# suite: alone: 1,000 threads, a limit of open files and a 1 GB recording
. tests/lib.sh
H=tests/reliability/hostile.py

gcc -O1 -g -pthread -I"$ROOT/include" -o "$TMP/threads" tests/reliability/threads.c ||
	{ fail limits_build_threads; exit 0; }

# 1,000 threads alive at once, started by tally: every sample in the file, the threads
# seen (each runs 3 ms of CPU, sampled every millisecond, but inherited cpu-clock events
# sample less: 1-3 times, none for a few threads; perf record -- CMD, losing nothing,
# saw 972 of them), nothing lost: tally drains at a real-time priority (record/priority.h;
# under the fair scheduler it had a thousandth of the CPUs, and at load 100-500 on 2 CPUs
# -p lost 60% of the samples).
"$TALLY" record -o "$TMP/cmd.data" -- "$TMP/threads" 1000 3 >"$TMP/out" 2>"$TMP/err"
rc=$?
theirs=$(perf script -i "$TMP/cmd.data" -F time 2>/dev/null | grep -c ':')
tids=$(perf script -i "$TMP/cmd.data" -F tid 2>/dev/null | sort -u | wc -l)
ours=$("$TALLY" report "$TMP/cmd.data" 2>&1 | sed -nE 's/^total: +([0-9]+) samples.*/\1/p')
lost=$(sed -nE 's/.* ([0-9]+) lost,.*/\1/p' "$TMP/err")
[ $rc = 0 ] && grep -qx 'threads 1000' "$TMP/out" && [ "${ours:-0}" = "$theirs" ] &&
	[ "$tids" -ge 990 ] && [ "$lost" = 0 ] &&
	pass record_command_with_1000_threads ||
	fail record_command_with_1000_threads "rc=$rc tally=$ours perf=$theirs tids=$tids $(cat "$TMP/err")"

# The same process attached with -p once its 1,000 threads exist (one event per thread and
# CPU), perf record -p attached beside as the oracle: the threads start at once, tally
# loses nothing, and keeps of every thread at least what perf kept (give or take the
# phase of its own timer: one sample).
start_threads() { # a 1000-thread process waiting for $TMP/go; its pid in $tp
	rm -f "$TMP/go"
	"$TMP/threads" 1000 3 "$TMP/go" >"$TMP/tout" &
	tp=$!
	for _ in $(seq 200); do [ "$(ls /proc/$tp/task 2>/dev/null | wc -l)" -ge 1001 ] && break; sleep 0.05; done
}
start_threads
"$TALLY" record -e cpu-clock -F 1000 -o "$TMP/pid.data" -p $tp 2>"$TMP/err" &
rp=$!
# tally records once it polls its rings, its events open (one per thread and CPU); perf,
# started with its events disabled, says when it has enabled them.
for _ in $(seq 400); do
	[ "$(ls /proc/$rp/fd 2>/dev/null | wc -l)" -ge $((1000 * $(nproc))) ] &&
		grep -q poll /proc/$rp/wchan 2>/dev/null && break
	sleep 0.05
done
mkfifo "$TMP/ctl" "$TMP/ack"
perf record -D -1 --control="fifo:$TMP/ctl,$TMP/ack" -e cpu-clock -F 1000 --call-graph dwarf \
	-o "$TMP/perf.data" -p $tp 2>"$TMP/perr" &
pp=$!
exec 8<>"$TMP/ctl" 9<>"$TMP/ack"
echo enable >&8
read -r -t 60 -u 9 ack
exec 8>&- 9>&-
touch "$TMP/go"
wait $tp
trc=$?
kill -INT $rp $pp
wait $rp
rc=$?
wait $pp
per_tid() { perf script -i "$1" -F tid 2>/dev/null | awk '{ n[$1]++ } END { for (t in n) print t, n[t] }' | LC_ALL=C sort; }
per_tid "$TMP/pid.data" >"$TMP/ours.tid"
per_tid "$TMP/perf.data" >"$TMP/perf.tid"
theirs=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/ours.tid")
kept=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/perf.tid")
tids=$(wc -l <"$TMP/ours.tid")
short=$(LC_ALL=C join -a 2 -e 0 -o 0,1.2,2.2 "$TMP/ours.tid" "$TMP/perf.tid" | awk '$2 + 1 < $3' | head -3)
ours=$("$TALLY" report "$TMP/pid.data" 2>&1 | sed -nE 's/^total: +([0-9]+) samples.*/\1/p')
lost=$(sed -nE 's/.* ([0-9]+) lost,.*/\1/p' "$TMP/err")
[ $rc = 0 ] && [ $trc = 0 ] && [ "${ours:-0}" = "$theirs" ] && [ "$tids" -ge 1000 ] &&
	[ "$lost" = 0 ] && [ "$kept" -gt 0 ] && [ "$theirs" -ge "$kept" ] && [ -z "$short" ] &&
	pass record_pid_with_1000_threads ||
	fail record_pid_with_1000_threads "rc=$rc target=$trc tally=$ours (in the file $theirs, $tids threads) perf=$kept; fewer than perf (tid ours perf): $short; $(cat "$TMP/err") perf: $(tail -2 "$TMP/perr")"

# Too few descriptors for 1,000 threads: record -p and probes count -p say which limit.
start_threads
(ulimit -n 200; "$TALLY" record -o "$TMP/lim.data" -p $tp) >"$TMP/out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^tally: perf_event_open: too many open files (the limit, ulimit -n, is 200)' "$TMP/out" &&
	[ ! -e "$TMP/lim.data" ] && pass record_fd_limit_is_named ||
	fail record_fd_limit_is_named "rc=$rc $(cat "$TMP/out")"
(ulimit -n 200; "$TALLY" probes count rel:work -p $tp) >"$TMP/out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^tally: perf_event_open: too many open files (the limit, ulimit -n, is 200)' "$TMP/out" &&
	pass probes_count_fd_limit_is_named || fail probes_count_fd_limit_is_named "rc=$rc $(cat "$TMP/out")"
# record -e usdt: (a descriptor per thread and probe site) and --off-cpu (two per thread
# and CPU, opened in turn: limits of either parity run out on a different one of the two,
# and the message is the same).
for how in usdt off_cpu off_cpu_odd; do
	lim=200
	case $how in
	usdt) opt=(-e usdt:rel:work) ;;
	off_cpu) opt=(--off-cpu) ;;
	off_cpu_odd) opt=(--off-cpu) lim=201 ;;
	esac
	(ulimit -n $lim; "$TALLY" record "${opt[@]}" -o "$TMP/lim.data" -p $tp) >"$TMP/out" 2>&1
	rc=$?
	[ $rc = 1 ] && grep -q "^tally: perf_event_open: too many open files (the limit, ulimit -n, is $lim)" "$TMP/out" &&
		[ ! -e "$TMP/lim.data" ] && pass record_${how}_fd_limit_is_named ||
		fail record_${how}_fd_limit_is_named "rc=$rc $(cat "$TMP/out")"
done
touch "$TMP/go"
wait $tp
[ $? = 0 ] && grep -qx 'threads 1000' "$TMP/tout" && pass fd_limit_failures_leave_target_running ||
	fail fd_limit_failures_leave_target_running "$(cat "$TMP/tout")"

# Memory: a recording grown to 100 MB and to 1 GB (its samples repeated) reported in the
# same memory, give or take what the reader keeps by design: an index of 40 bytes a record
# and the heads of records (at most 64 MiB); an eighth of the file at most, where holding
# the records would take all of it. perf script counts the samples. Peak RSS only means
# something without ASan.
# Samples with their stack copies (--keep-stacks): a gigabyte in some 30,000 of them.
"$TALLY" record -q --keep-stacks -F 1000 -o "$TMP/base.data" -- "$TMP/threads" 4 300 >/dev/null 2>&1
python3 $H perf-grow "$TMP/g100.data" 100 "$TMP/base.data"
python3 $H perf-grow "$TMP/g1000.data" 1000 "$TMP/base.data"
rss() { /usr/bin/time -f %M -o "$TMP/rss" "$TALLY" report "$2" >"$TMP/report.$1" 2>&1; cat "$TMP/rss"; }
r100=$(rss 100 "$TMP/g100.data")
r1000=$(rss 1000 "$TMP/g1000.data")
size=$(stat -c %s "$TMP/g1000.data")
records=$(perf report -i "$TMP/g1000.data" --stats 2>/dev/null | awk '/TOTAL events:/ { print $3 }')
theirs=$(perf script -i "$TMP/g1000.data" -F time 2>/dev/null | grep -c ':')
ours=$(sed -nE 's/^total: +([0-9]+) samples.*/\1/p' "$TMP/report.1000")
rm -f "$TMP/g100.data" "$TMP/g1000.data"
if [ "${ours:-0}" != "$theirs" ] || [ "$theirs" -lt 10000 ] || [ "$size" -lt 1000000000 ]; then
	fail report_1gb_reads_every_sample "tally=$ours perf=$theirs in $size bytes: $(head -3 "$TMP/report.1000")"
elif [ "$BUILD" = build-asan ]; then
	pass report_1gb_reads_every_sample
else
	echo "peak RSS: 100 MB recording ${r100} KB, 1 GB ${r1000} KB ($records records)"
	[ -n "$records" ] && [ "$r1000" -lt $((r100 + 65536 + records * 40 / 1024)) ] &&
		[ "$r1000" -lt $((size / 8 / 1024)) ] && pass report_1gb_in_bounded_memory ||
		fail report_1gb_in_bounded_memory "100 MB: $r100 KB, 1 GB: $r1000 KB ($records records)"
fi
