# tally record holds bounded memory however long it runs (docs/native-sampling.md, "Long
# recordings"): a command that maps thousands of new files a second and forks short-lived
# children, recorded for 22 s, and tally's anonymous memory (RssAnon: its heap, not the
# rings the kernel fills) at 5 s and 20 s. Before the bounds it grew from 4.3 to 12.5 MiB
# over those 15 s (every path and pid ever seen held, and searched one by one); now the
# files past the bound are counted and said.
# suite: alone: measures tally's memory over 20 s of a workload that wants a CPU of its own
. tests/lib.sh

gcc -O2 -g -o "$TMP/mapchurn" "$ROOT/tests/record/mapchurn.c" || { fail build_mapchurn; exit 0; }
mkdir "$TMP/files"

rss_anon() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# ASan keeps freed memory in quarantine, which is not what is measured here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
"$TALLY" record -F 49 -o "$TMP/m.data" -- "$TMP/mapchurn" "$TMP/files" 22 >"$TMP/count" 2>"$TMP/err" &
tp=$!
sleep 5
a=$(rss_anon $tp)
sleep 15
b=$(rss_anon $tp)
wait $tp
rc=$?
maps=$(cat "$TMP/count")
# 1 MiB of slack: glibc's arenas and the writer's buffers settle at their sizes early.
if [ $rc = 0 ] && [ -n "$a" ] && [ -n "$b" ] && [ "${maps:-0}" -gt 20000 ] &&
	[ "$b" -le $((a + 1024)) ]; then
	pass "record_memory_stays_bounded (RssAnon $a kB at 5 s, $b kB at 20 s; $maps files mapped)"
else
	fail record_memory_stays_bounded "rc=$rc RssAnon ${a:-?} kB at 5 s, ${b:-?} kB at 20 s, ${maps:-?} files mapped: $(tail -3 "$TMP/err")"
fi

# What was left out is said, with the bound.
grep -q "^tally record: warning: [0-9]* mapped files past the 16384 a file holds" "$TMP/err" &&
	pass record_memory_bound_is_said ||
	fail record_memory_bound_is_said "$(tail -3 "$TMP/err")"

# The recording is still whole: perf script reads it, and the workload's samples resolve.
n=$(perf script -i "$TMP/m.data" -F comm,ip,sym 2>/dev/null | grep -c ' churn_spin$')
[ "${n:-0}" -gt 20 ] && pass "record_memory_bounded_file_reads ($n samples in mapchurn)" ||
	fail record_memory_bounded_file_reads "perf script: $n samples in the workload"
