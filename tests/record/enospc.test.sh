# tally record onto a full disk (docs/native-sampling.md): a 2 MiB tmpfs mounted here,
# inside $TMP, fills within the first tenth of a second of a one-second workload. The
# recording stops, the command runs to its end (its marker file, outside the tmpfs, and its
# output say so) and its status is tally's; perf script reads the file that is left, with
# as many samples as tally says it kept, and tally's report says the recording ended early.
# suite: alone: the tmpfs must fill within the first tenth of a second of the workload
. tests/lib.sh

SMALL=$TMP/small
mkdir -p "$SMALL"
# Unmounted whatever happens, before lib.sh's trap removes $TMP.
trap 'umount "$SMALL" 2>/dev/null; rm -rf "$TMP"' EXIT
if ! mount -t tmpfs -o size=2m none "$SMALL"; then
	fail enospc_mount "cannot mount a tmpfs (needs root)"
	exit 0
fi

cat >"$TMP/busy.c" <<'C'
#include <stdio.h>
#include <time.h>
/* Spins for a second, then leaves its marker: proof it ran to its end. */
int main(int argc, char **argv)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	volatile double x = 1;
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 0.25;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000000L);
	FILE *f = fopen(argv[1], "w");
	if (!f || fputs("ran to the end\n", f) < 0 || fclose(f))
		return 1;
	puts("busy: done");
	return 7;
}
C
gcc -O2 -g -o "$TMP/busy" "$TMP/busy.c" || { fail enospc_build_busy; exit 0; }

# Stack copies kept (--keep-stacks): 33 KB a sample fill the disk at once.
"$TALLY" record --keep-stacks -o "$SMALL/p.data" -- "$TMP/busy" "$TMP/marker" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 7 ] && pass enospc_exit_status_is_the_commands ||
	fail enospc_exit_status_is_the_commands "rc=$rc: $(cat "$TMP/err")"
[ "$(cat "$TMP/marker" 2>/dev/null)" = "ran to the end" ] && grep -qx 'busy: done' "$TMP/out" &&
	pass enospc_command_runs_to_its_end || fail enospc_command_runs_to_its_end "$(cat "$TMP/out")"

kept=$(sed -n "s|^tally: $SMALL/p.data: No space left on device: recording stopped after \([0-9]*\) samples$|\1|p" "$TMP/err")
[ -n "$kept" ] && pass enospc_says_recording_stopped || fail enospc_says_recording_stopped "$(cat "$TMP/err")"

# The oracle: perf reads the file whole, and finds every sample tally says it kept.
theirs=$(perf script -i "$SMALL/p.data" -F time 2>"$TMP/perr" | grep -c ':')
prc=${PIPESTATUS[0]}
[ $prc = 0 ] && [ "$theirs" -gt 10 ] && [ "$theirs" = "${kept:-}" ] && [ ! -s "$TMP/perr" ] &&
	pass enospc_perf_script_reads_the_file ||
	fail enospc_perf_script_reads_the_file "rc=$prc perf=$theirs tally=${kept:-}: $(head -3 "$TMP/perr")"

out=$("$TALLY" report "$SMALL/p.data" 2>&1)
grep -q 'recording ended early: No space left on device' <<<"$out" &&
	grep -q "^total: *$theirs samples" <<<"$out" &&
	pass enospc_report_says_ended_early || fail enospc_report_says_ended_early "$(head -12 <<<"$out")"

# Only the recording is left on the full disk: no temporary, no reserve.
[ "$(ls -A "$SMALL")" = p.data ] && pass enospc_leaves_only_the_recording ||
	fail enospc_leaves_only_the_recording "$(ls -A "$SMALL" | tr '\n' ' ')"

# A recording that fits says nothing of ending early.
rm -f "$SMALL/p.data"
"$TALLY" record -q -F 50 -o "$SMALL/q.data" -- true 2>"$TMP/err" &&
	! "$TALLY" report "$SMALL/q.data" 2>&1 | grep -q 'ended early' &&
	pass enospc_complete_recording_not_marked || fail enospc_complete_recording_not_marked "$(cat "$TMP/err")"

# With --rotate 1M: the first file is finished whole, the second fills the disk; the message
# names that one, and the two files hold every sample tally says it kept.
rm -f "$SMALL/q.data"
"$TALLY" record --keep-stacks -o "$SMALL/r.data" --rotate 1M -- "$TMP/busy" "$TMP/marker" >"$TMP/out" 2>"$TMP/err"
rc=$?
files=$(cd "$SMALL" && ls -d r.data.*Z 2>/dev/null)
last=$(ls -d "$SMALL"/r.data.*Z 2>/dev/null | tail -1)
kept=$(sed -n "s|^tally: $last: No space left on device: recording stopped after \([0-9]*\) samples$|\1|p" "$TMP/err")
theirs=0
for f in $files; do
	theirs=$((theirs + $(perf script -i "$SMALL/$f" -F time 2>/dev/null | grep -c ':')))
done
[ $rc = 7 ] && [ "$(wc -w <<<"$files")" = 2 ] && [ -n "$kept" ] && [ "$theirs" = "$kept" ] &&
	pass "enospc_rotate_names_the_file_that_filled ($(echo $files): $theirs samples)" ||
	fail enospc_rotate_names_the_file_that_filled "rc=$rc files $files, perf $theirs, tally ${kept:-?}: $(cat "$TMP/err")"
