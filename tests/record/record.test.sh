# tally record: perf script reads what it writes, exit status, usage errors, -p, signals.
. tests/lib.sh

cat > "$TMP/spin.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static double spin(double x, long n) { for (long i = 0; i < n; i++) x = x * 1.0000001 + 0.25; return x; }
int main(int argc, char **argv) { double r = spin(1, argc > 1 ? atol(argv[1]) : 100000000); printf("%f\n", r); return argc > 2 ? atoi(argv[2]) : 0; }
C
gcc -O2 -g -o "$TMP/spin" "$TMP/spin.c" || { fail build_spin; exit 0; }

# perf script is the oracle for the file format: every sample we count, it prints. Stack
# copies kept (--keep-stacks): perf script unwinds them below.
"$TALLY" record --keep-stacks -o "$TMP/a.data" -- "$TMP/spin" >/dev/null 2>"$TMP/err"
rc=$?
ours=$(sed -n 's/^tally record: \([0-9]*\) samples.*/\1/p' "$TMP/err")
theirs=$(perf script -i "$TMP/a.data" -F time 2>/dev/null | grep -c ':')
[ $rc -eq 0 ] && [ -n "$ours" ] && [ "$ours" -gt 50 ] && [ "$ours" = "$theirs" ] \
	&& pass record_perf_script_reads_every_sample \
	|| fail record_perf_script_reads_every_sample "rc=$rc tally=$ours perf=$theirs"

# The cost of a sample tally prints: the bytes, as the file's size and perf script's count
# of its samples give them (within 1%: the file has headers too).
read -r kib < <(sed -n 's/^tally record: a sample: \([0-9.]*\) KiB written.*/\1/p' "$TMP/err")
awk -v k="${kib:-0}" -v size="$(stat -c %s "$TMP/a.data")" -v n="${theirs:-0}" \
	'BEGIN { want = size / 1024 / n; exit !(n > 0 && k > 0.99 * want && k < 1.01 * want) }' &&
	pass "record_prints_bytes_a_sample ($kib KiB)" ||
	fail record_prints_bytes_a_sample "tally ${kib:-none} KiB, file $(stat -c %s "$TMP/a.data") bytes, $theirs samples"
# And tally's CPU time, against the kernel's account of it: a -p recording (tally has no
# child then), run by python3, whose getrusage(RUSAGE_CHILDREN) is tally's whole run. That
# includes what tally does after printing (closing its events): tally's figure is at most
# the kernel's, and at least half of it.
"$TMP/spin" 100000000000 >/dev/null &
sp=$!
oracle=$(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[-1] + ".err", "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$TALLY" record -p $sp --duration 1 -o "$TMP/g.data")
kill $sp
wait $sp 2>/dev/null
read -r us cpu < <(sed -n 's/^tally record: a sample: .* KiB written, \([0-9.]*\) us of tally.s CPU (\([0-9.]*\) s in all)$/\1 \2/p' "$TMP/g.data.err")
n=$(perf script -i "$TMP/g.data" -F time 2>/dev/null | grep -c ':')
awk -v c="${cpu:-0}" -v o="${oracle:-0}" -v us="${us:-0}" -v n="$n" 'BEGIN {
	d = us * n / 1e6 - c
	exit !(c > 0 && c <= o + 0.001 && c >= o / 2 && n > 0 && d < 0.0006 && d > -0.0006) }' &&
	pass "record_prints_its_cpu_a_sample ($cpu s of $oracle, $us us a sample of $n)" ||
	fail record_prints_its_cpu_a_sample "tally ${cpu:-none} s, ${us:-none} us a sample of $n; the kernel's $oracle s: $(cat "$TMP/g.data.err")"

# The samples are in spin, as perf script symbolizes them.
n=$(perf script -i "$TMP/a.data" -F ip,sym --no-inline 2>/dev/null | grep -c ' spin')
[ "$n" -gt $((theirs * 9 / 10)) ] && pass record_samples_land_in_spin || fail record_samples_land_in_spin "$n of $theirs"

# perf script unwinds tally's stack copies itself (DWARF): main is the caller of spin in
# nearly every sample, as it is in a file perf records.
with_main=$(perf script -i "$TMP/a.data" -F ip,sym --no-inline 2>/dev/null | awk '
	/^$/ {if (s && m) n++; s = m = 0; next}
	/ spin/ {s = 1} / main$/ {m = 1}
	END {if (s && m) n++; print n + 0}')
[ "$with_main" -gt $((theirs * 9 / 10)) ] && pass record_perf_script_unwinds_stack_copies \
	|| fail record_perf_script_unwinds_stack_copies "$with_main of $theirs"

# Build-ids of the mapped files are in the header, as perf reads them.
want=$(readelf -n "$TMP/spin" | awk '/Build ID/{print $3}')
perf buildid-list -i "$TMP/a.data" 2>/dev/null | grep -q "^$want .*spin$" \
	&& pass record_writes_build_ids || fail record_writes_build_ids "$want"

TALLY_CACHE="$TMP/cache" "$TALLY" record -q -o "$TMP/b.data" -- "$TMP/spin" 1000 7 >/dev/null; rc=$?
[ $rc -eq 7 ] && pass record_exit_status_is_the_commands || fail record_exit_status_is_the_commands "rc=$rc"

# The recorded libc's separate debug file (libc6-dbg: compressed) went to the debug cache,
# decompressed (readelf: no section flagged C), for the first report not to inflate it.
libc=$(ldd "$TMP/spin" | awk '/libc.so.6/ {print $3}')
id=$(readelf -n "$libc" | awk '/Build ID/{print $3}')
copy="$TMP/cache/debug/.build-id/${id:0:2}/${id:2}.debug"
if [ ! -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
	skip record_fills_debug_cache "no libc6-dbg file for $libc"
elif [ -f "$copy" ] && ! readelf -SW "$copy" | grep -q ' \.debug_[a-z_]* .* C '; then
	pass record_fills_debug_cache
else
	fail record_fills_debug_cache "$(ls -R "$TMP/cache" 2>&1 | head -5)"
fi

err=$("$TALLY" record -q -o "$TMP/c.data" -- /nonexistent/cmd 2>&1); rc=$?
[ $rc -eq 127 ] && [ "$err" = "tally: /nonexistent/cmd: No such file or directory" ] \
	&& pass record_missing_command_exits_127 || fail record_missing_command_exits_127 "rc=$rc $err"

err=$("$TALLY" record -o "$TMP/x" 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$err" = "tally: nothing to record: give -p PID, -- CMD or -a
Run 'tally help record' for usage." ] \
	&& pass record_without_target_is_usage || fail record_without_target_is_usage "rc=$rc $err"
err=$("$TALLY" record --call-graph dwarf,12345 -- true 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$err" = "tally: --call-graph: expected dwarf, dwarf,SIZE (a multiple of 8 up to 65528) or fp: dwarf,12345
Run 'tally help record' for usage." ] \
	&& pass record_bad_stack_size_is_usage || fail record_bad_stack_size_is_usage "rc=$rc $err"
err=$("$TALLY" record -e bogus -o "$TMP/x" -- true 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == "tally: event bogus: unknown"* ]] \
	&& pass record_unknown_event_is_named || fail record_unknown_event_is_named "$rc $err"

# SIGINT to tally stops recording cleanly, not the command: the file is complete and tally
# exits with the command's status once it ends (tests/reliability/signals.test.sh has more).
# A second of the command's run, from its exec (wait_exec).
"$TALLY" record -q -o "$TMP/d.data" -- "$TMP/spin" 1500000000 5 >/dev/null 2>&1 &
tp=$!
wait_exec "$TMP/spin 1500000000"
sleep 1
kill -INT $tp
wait $tp
rc=$?
n=$(perf script -i "$TMP/d.data" -F time 2>/dev/null | grep -c ':')
[ "$n" -gt 20 ] && [ $rc = 5 ] && pass record_sigint_leaves_complete_file ||
	fail record_sigint_leaves_complete_file "rc=$rc, $n samples"

# -p: attach to a running process, detach on SIGTERM, the process keeps running.
"$TMP/spin" 100000000000 >/dev/null &
sp=$!
"$TALLY" record -q --keep-stacks -o "$TMP/e.data" -p $sp 2>/dev/null &
tp=$!
# Until the recording holds some 60 samples with their stack copies (2 MB; at most 20 s):
# on a busy machine tally's start-up can take most of a fixed second (3 samples in CI run
# 9). Until it ends, tally writes the file under a hidden name beside it (atomic_file.c).
for _ in $(seq 200); do
	size=$(cat "$TMP"/.e.data.tally-* 2>/dev/null | wc -c)
	[ "$size" -gt 2000000 ] && break
	sleep 0.1
done
kill -TERM $tp
wait $tp; rc=$?
n=$(perf script -i "$TMP/e.data" -F ip,sym --no-inline 2>/dev/null | grep -c ' spin')
# perf script unwinds it too: the synthesized mappings include the read-only segments.
with_main=$(perf script -i "$TMP/e.data" -F ip,sym --no-inline 2>/dev/null | awk '
	/^$/ {if (s && m) k++; s = m = 0; next}
	/ spin/ {s = 1} / main$/ {m = 1}
	END {if (s && m) k++; print k + 0}')
if kill -0 $sp 2>/dev/null && [ $rc -eq 0 ] && [ "$n" -gt 20 ] && [ "$with_main" -gt $((n * 9 / 10)) ]; then
	pass record_pid_attach_and_detach_leaves_target_running
else
	fail record_pid_attach_and_detach_leaves_target_running "rc=$rc samples in spin=$n, with main=$with_main"
fi
# SIGKILL of tally does not harm the target either.
"$TALLY" record -q -o "$TMP/f.data" -p $sp 2>/dev/null &
tp=$!
sleep 0.3
kill -KILL $tp
wait $tp 2>/dev/null
sleep 0.1
kill -0 $sp 2>/dev/null && pass record_sigkill_leaves_target_running || fail record_sigkill_leaves_target_running
kill $sp
wait $sp 2>/dev/null

# Permission problems say what to change: an unprivileged user attaching to init, another
# user's process, is told that (not the paranoia level, which does not open it).
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$TMP" && mkdir -m 777 "$TMP/nobody"
	err=$(cd "$TMP/nobody" && setpriv --reuid=65534 --regid=65534 --clear-groups "$TALLY" record -o "$TMP/nobody/x.data" -p 1 2>&1); rc=$?
	[ $rc -eq 1 ] && [[ "$err" == *"process 1: another user's"*"run as root"* ]] && [ ! -e "$TMP/nobody/x.data" ] \
		&& pass record_permission_error_says_what_to_change \
		|| fail record_permission_error_says_what_to_change "$rc $err"
	# An unprivileged user records its own command: user-space only, and rings small
	# enough for perf_event_mlock_kb.
	cp "$TMP/spin" "$TMP/nobody/spin" && chmod 755 "$TMP/nobody/spin"
	(cd "$TMP/nobody" && setpriv --reuid=65534 --regid=65534 --clear-groups "$TALLY" record -q -o "$TMP/nobody/own.data" -- ./spin >/dev/null 2>"$TMP/nobody/err"); rc=$?
	n=$(perf script -f -i "$TMP/nobody/own.data" -F time 2>/dev/null | grep -c ':') # -f: not our file
	[ $rc -eq 0 ] && [ "$n" -gt 50 ] && pass record_unprivileged_own_command \
		|| fail record_unprivileged_own_command "rc=$rc n=$n $(cat "$TMP/nobody/err")"
else
	skip record_permission_error_says_what_to_change "needs root and setpriv"
fi

# On AMD (an ibs_op PMU), a precise event with DWARF call graphs is refused with the reason;
# with frame-pointer call graphs it is not. The PMU is faked in a private mount namespace.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	out=$(unshare -m --propagation private sh -c '
		mount -t tmpfs ibs /sys/bus/event_source/devices &&
		mkdir /sys/bus/event_source/devices/ibs_op &&
		"$0" record -e cycles:pp -o "$1/ibs.data" -- true; echo "rc=$?";
		"$0" record -e cycles:pp --call-graph fp -o "$1/ibs.data" -- true; echo "rc=$?"' \
		"$TALLY" "$TMP" 2>&1)
	first=$(sed -n 1,2p <<<"$out")
	second=$(sed -n 3,4p <<<"$out")
	[[ "$first" == *"AMD IBS"*"rc=1" ]] && pass record_precise_dwarf_refused_on_ibs \
		|| fail record_precise_dwarf_refused_on_ibs "$out"
	[[ "$second" != *"IBS"* ]] && pass record_precise_fp_allowed_on_ibs \
		|| fail record_precise_fp_allowed_on_ibs "$out"
else
	skip record_precise_dwarf_refused_on_ibs "needs root and unshare"
fi

# -p follows threads the process creates after tally attached (inherit on every thread).
cat > "$TMP/late.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *spin(void *a) { volatile double x = 1; for (long i = 0; i < 300000000; i++) x = x * 1.0000001 + 0.25; return 0; }
int main(void) { sleep(1); pthread_t t[3]; for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, spin, 0); for (int i = 0; i < 3; i++) pthread_join(t[i], 0); puts("done"); return 0; }
C
gcc -O2 -g -pthread -o "$TMP/late" "$TMP/late.c"
"$TMP/late" >/dev/null &
lp=$!
"$TALLY" record -q -o "$TMP/late.data" -p $lp 2>"$TMP/late.err" &
tp=$!
wait $lp
sleep 0.2
kill -INT $tp 2>/dev/null
wait $tp; rc=$?
tids=$(perf script -i "$TMP/late.data" -F tid 2>/dev/null | sort -u | grep -vc "^ *$lp$")
[ $rc -eq 0 ] && [ "$tids" -ge 3 ] && pass record_pid_follows_new_threads \
	|| fail record_pid_follows_new_threads "rc=$rc, $tids new threads: $(cat "$TMP/late.err")"
