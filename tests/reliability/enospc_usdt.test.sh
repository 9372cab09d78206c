# tally record -e usdt: onto a full disk (issue 18 §2, as tests/record/enospc.test.sh for
# native sampling): a 2 MiB tmpfs mounted here fills at once with a sample (8 KiB of stack,
# kept: --keep-stacks) at every hit. The recording stops and is kept, the command runs to its end (its marker
# says so) and its status is tally's; perf script reads as many samples as tally says it
# kept, and tally's report says the recording ended early.
# suite: alone: the tmpfs must fill while the workload runs
. tests/lib.sh

SMALL=$TMP/small
mkdir -p "$SMALL"
trap 'umount "$SMALL" 2>/dev/null; rm -rf "$TMP"' EXIT
if ! mount -t tmpfs -o size=2m none "$SMALL"; then
	fail usdt_enospc_mount "cannot mount a tmpfs (needs root)"
	exit 0
fi
gcc -O1 -g -I"$ROOT/include" -o "$TMP/target" tests/reliability/target.c ||
	{ fail usdt_enospc_build; exit 0; }

(sleep 2; touch "$TMP/end") &
"$TALLY" record --keep-stacks -e usdt:rel:tick -o "$SMALL/u.data" -- "$TMP/target" "$TMP/end" "$TMP/marker" \
	"$TMP/pid" >"$TMP/out" 2>"$TMP/err"
rc=$?
wait
[ $rc = 0 ] && [ "$(cat "$TMP/marker" 2>/dev/null)" = "ran to the end" ] &&
	pass usdt_enospc_command_runs_to_its_end || fail usdt_enospc_command_runs_to_its_end "rc=$rc: $(cat "$TMP/err")"
kept=$(sed -n "s|^tally: $SMALL/u.data: No space left on device: recording stopped after \([0-9]*\) samples$|\1|p" "$TMP/err")
[ -n "$kept" ] && pass usdt_enospc_says_recording_stopped || fail usdt_enospc_says_recording_stopped "$(cat "$TMP/err")"
theirs=$(perf script -i "$SMALL/u.data" -F time 2>"$TMP/perr" | grep -c ':')
[ "$theirs" -gt 10 ] && [ "$theirs" = "${kept:-}" ] &&
	pass usdt_enospc_perf_script_reads_the_file ||
	fail usdt_enospc_perf_script_reads_the_file "perf=$theirs tally=${kept:-}: $(head -3 "$TMP/perr")"
out=$("$TALLY" report "$SMALL/u.data" 2>&1)
grep -q 'recording ended early: No space left on device' <<<"$out" &&
	grep -q "^total: *$theirs hits" <<<"$out" &&
	pass usdt_enospc_report_says_ended_early || fail usdt_enospc_report_says_ended_early "$(head -12 <<<"$out")"
[ "$(ls -A "$SMALL")" = u.data ] && pass usdt_enospc_leaves_only_the_recording ||
	fail usdt_enospc_leaves_only_the_recording "$(ls -A "$SMALL" | tr '\n' ' ')"
