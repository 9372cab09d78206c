# tally record --rotate: a series of complete files, each read alone by perf script, perf
# report and tally report (the workload's function named in every file, not only the
# first), named so that they sort in time, every sample in one of them; --keep N leaves
# the N newest; -- CMD, -p and -a; by time and by size; --off-cpu; SIGTERM finishes the file
# being written; Python frames named in the last file too; bad values are usage errors.
# Stacks are unwound while recording (the default) but for the series by size, whose files
# of 16 MiB want raw copies to fill them in seconds: each file of unwound stacks is read
# alone as complete chains, the unwinder's view of the processes carried over the turns.
. tests/lib.sh

cat > "$TMP/work.c" <<'C'
#include <stdlib.h>
#include <time.h>
static volatile double sink;
__attribute__((noinline)) static void rot_work(void) { for (int i = 0; i < 100000; i++) sink = sink * 1.0000001 + 0.25; }
int main(int argc, char **argv)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rot_work();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < atof(argv[1]));
	return 0;
}
C
gcc -O2 -g -o "$TMP/work" "$TMP/work.c" || { fail build_rot_work; exit 0; }

# check_series NAME DIR MIN MAX SUMMARY: DIR holds MIN to MAX files named perf.data.TIME, TIME
# as YYYYMMDDTHHMMSS.mmmZ; in name order their first samples' times increase; perf script
# and tally report read each, with rot_work in at least half of its samples; perf report
# names it in the last judged; their samples add up to SUMMARY's count (given unless --keep).
# A last file of fewer than 20 samples is not judged (a command starved of the CPU on a
# loaded machine ends just past a turn: CI's load reached 56 on 2 cores), and said.
check_series() {
	local name=$1 dir=$2 min=$3 max=$4 summary=$5 f n w t prev=0 total=0 bad="" files
	local judged="" k=0 note=""
	files=$(cd "$dir" && ls -d perf.data.* | grep -v '\.jit$')
	n=$(wc -w <<<"$files")
	[ "$n" -ge "$min" ] && [ "$n" -le "$max" ] || bad="$n files: $files;"
	for f in $files; do
		k=$((k + 1))
		[[ $f =~ ^perf\.data\.20[0-9]{6}T[0-9]{6}\.[0-9]{3}Z$ ]] || bad="$bad name $f;"
		perf script -i "$dir/$f" -F time,ip,sym 2>/dev/null >"$TMP/script"
		n=$(grep -c ':' "$TMP/script")
		total=$((total + n))
		if [ "$k" = "$(wc -w <<<"$files")" ] && [ "$n" -lt 20 ] && [ "$k" -gt "$min" ]; then
			note=", the last of $n samples not judged"
			continue
		fi
		judged=$f
		w=$(awk '/:/ {s = 1} / rot_work$/ && s {k++; s = 0} END {print k + 0}' "$TMP/script")
		t=$(awk -F: '/:/ {gsub(/[^0-9.]/, "", $1); print $1; exit}' "$TMP/script")
		[ "$n" -gt 0 ] && [ $((w * 2)) -ge "$n" ] || bad="$bad $f: rot_work in $w of $n samples (perf script);"
		awk -v a="$prev" -v b="${t:-0}" 'BEGIN { exit !(b > a) }' || bad="$bad $f begins at $t, before $prev;"
		prev=${t:-0}
		"$TALLY" report "$dir/$f" >"$TMP/report" 2>&1 && grep -q ' rot_work ' "$TMP/report" ||
			bad="$bad tally report $f: $(head -2 "$TMP/report");"
	done
	perf report -i "$dir/$judged" --stdio 2>/dev/null | grep -q ' rot_work$' || bad="$bad perf report $judged;"
	[ -z "$summary" ] || [ "$total" = "$summary" ] || bad="$bad $total samples in the files, $summary in the summary;"
	[ -z "$bad" ] && pass "$name ($(wc -w <<<"$files") files, $total samples$note)" || fail "$name" "$bad"
}
samples_of() { sed -n 's/^tally record: \([0-9]*\) samples.*/\1/p' "$1"; }

# -- CMD, by time: 4.5 s in files of 1 s.
mkdir "$TMP/cmd"
"$TALLY" record -o "$TMP/cmd/perf.data" --rotate 1 -- "$TMP/work" 4.5 2>"$TMP/cmd.err"
check_series record_rotate_cmd_every_file_reads "$TMP/cmd" 4 6 "$(samples_of "$TMP/cmd.err")"
grep -q "written to [0-9]* files $TMP/cmd/perf.data.\*Z, the last $TMP/cmd/perf.data.20" "$TMP/cmd.err" &&
	pass record_rotate_summary_names_the_series ||
	fail record_rotate_summary_names_the_series "$(cat "$TMP/cmd.err")"
# A report of the series' prefix (perf.data by default) names the newest file.
tally_abs=$(realpath "$TALLY")
newest=$(ls -d "$TMP"/cmd/perf.data.*Z | tail -1)
expect_err record_rotate_report_of_the_prefix_names_the_newest 1 \
	"^tally: perf.data: no such file, but tally record --rotate wrote a series of files beside it, the newest perf.data.20.*Z (\`ls perf.data.\*Z\` lists them)" \
	sh -c 'cd "$1" && "$2" report' sh "$TMP/cmd" "$tally_abs"
[ "$(cd "$TMP/cmd" && "$tally_abs" report 2>&1 | sed -n 's/.*, the newest \([^ ]*\) .*/\1/p')" = "$(basename "$newest")" ] &&
	pass record_rotate_report_names_the_newest_by_name ||
	fail record_rotate_report_names_the_newest_by_name "$(cd "$TMP/cmd" && "$tally_abs" report 2>&1)"
# Each file's stacks, unwound while recording, read alone: tally report counts them all as
# unwound while recording, and at least 90% complete (rot_work's whole chain down to
# _start, which each file's synthesized mappings let the report judge). A file of fewer
# than 20 samples (the last, begun as the command ended) is not judged.
bad="" judged=0
for f in "$TMP"/cmd/perf.data.*Z; do
	"$TALLY" report "$f" >"$TMP/unwound.report" 2>&1
	read -r n u c < <(awk '/^figures: +samples / {n = $NF} /unwind: complete stacks/ {c = $NF}
		/unwind: unwound while recording/ {u = $NF} END {print n + 0, u + 0, c + 0}' "$TMP/unwound.report")
	[ "$n" -lt 20 ] && continue
	judged=$((judged + 1))
	[ "$u" = "$n" ] && [ $((c * 10)) -ge $((n * 9)) ] ||
		bad="$bad $(basename "$f"): $n samples, $u unwound, $c complete;"
done
[ -z "$bad" ] && [ $judged -ge 4 ] && pass "record_rotate_unwound_files_complete_alone ($judged files)" ||
	fail record_rotate_unwound_files_complete_alone "$judged files judged: $bad"
# No temporary left behind (each file was renamed into place whole).
left=$(ls -A "$TMP/cmd" | grep -v '^perf\.data\.20')
[ -z "$left" ] && pass record_rotate_leaves_no_temporaries || fail record_rotate_leaves_no_temporaries "$left"

# -p with --duration and --keep 2: the two newest are left, the last the one the summary names.
mkdir "$TMP/pid"
"$TMP/work" 30 &
wp=$!
"$TALLY" record -o "$TMP/pid/perf.data" -p $wp --duration 4.5 --rotate 1 --keep 2 2>"$TMP/pid.err"
kill $wp
wait $wp 2>/dev/null
check_series record_rotate_pid_keep_two "$TMP/pid" 2 2 ""
last=$(sed -n 's/.*, the last \(.*\)$/\1/p' "$TMP/pid.err")
newest=$(ls -d "$TMP"/pid/perf.data.*Z | tail -1)
grep -q "written to [56] files .*(the newest 2 kept)" "$TMP/pid.err" && [ -n "$last" ] && [ "$last" = "$newest" ] &&
	pass record_rotate_keep_deletes_the_oldest ||
	fail record_rotate_keep_deletes_the_oldest "last $last, newest $newest: $(cat "$TMP/pid.err")"

# -a, by size: files of at least 16 MiB (a file ends at the first drain past it).
mkdir "$TMP/all"
"$TMP/work" 30 &
wp=$!
"$TALLY" record -a --keep-stacks -o "$TMP/all/perf.data" --duration 3 --rotate 16M 2>"$TMP/all.err"
kill $wp
wait $wp 2>/dev/null
sizes=$(ls "$TMP"/all/perf.data.*Z | head -n -1 | xargs stat -c %s | sort -n | tr '\n' ' ')
if awk -v s="$sizes" 'BEGIN { n = split(s, v, " "); for (i = 1; i <= n; i++) if (v[i] < 16 * 1048576 || v[i] > 64 * 1048576) exit 1; exit !(n >= 2) }'; then
	pass "record_rotate_by_size (all but the last: $(wc -w <<<"$sizes") files, $(cut -d' ' -f1 <<<"$sizes") to $(awk '{print $NF}' <<<"$sizes") bytes)"
else
	fail record_rotate_by_size "sizes $sizes: $(cat "$TMP/all.err")"
fi
# Every file names the workload, started before tally: its mappings begin each file, and
# perf names rot_work in each file where the workload ran. On a loaded machine (CI runs four
# tests at once) the workload can miss the CPU for a whole file's quarter second, so a file
# with fewer than 10 of its samples is judged by the mapping alone, and said; at least half
# the files must be judged by name.
ok=0 n=0 named=0 short=""
for f in "$TMP"/all/perf.data.*Z; do
	n=$((n + 1))
	mapped=$(perf script -i "$f" --show-mmap-events 2>/dev/null | grep -c "MMAP.* $TMP/work\$") || true
	own=$(perf script -i "$f" -F pid 2>/dev/null | grep -cE "^ *$wp *$") || true
	if [ "$own" -lt 10 ]; then
		[ "$mapped" -gt 0 ] && ok=$((ok + 1))
		short="$short $(basename "$f"): $own samples;"
	elif [ "$mapped" -gt 0 ] && perf script -i "$f" -F comm,ip,sym 2>/dev/null | grep -q ' rot_work$'; then
		ok=$((ok + 1)) named=$((named + 1))
	fi
done
[ $n -ge 3 ] && [ $ok = $n ] && [ $((2 * named)) -ge $n ] &&
	pass "record_rotate_all_names_the_workload_in_each ($ok of $n files, $named by name${short:+, by mapping alone:$short})" ||
	fail record_rotate_all_names_the_workload_in_each "$ok of $n files, $named by name${short:+ (by mapping alone:$short)}: $(cat "$TMP/all.err")"

# --off-cpu: each file has the tracepoint's format and the switch event's attribute, so that
# perf script reads its switches and tally report charges the sleeps to their stack.
cat > "$TMP/nap.c" <<'C'
#include <stdlib.h>
#include <time.h>
static volatile long sink;
__attribute__((noinline)) static void nap_burn(void) { for (long i = 0; i < 2000000; i++) sink += i; }
__attribute__((noinline)) static void nap_sleep(void) { struct timespec t = { 0, 5000000 }; nanosleep(&t, 0); }
int main(int argc, char **argv)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		nap_burn();
		nap_sleep();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < atof(argv[1]));
	return 0;
}
C
mkdir "$TMP/off"
if gcc -O1 -g -o "$TMP/nap" "$TMP/nap.c" &&
	"$TALLY" record --off-cpu -o "$TMP/off/perf.data" --rotate 1 -- "$TMP/nap" 2.5 2>"$TMP/off.err"; then
	ok=0 n=0 last=$(ls "$TMP"/off/perf.data.*Z | tail -1)
	for f in "$TMP"/off/perf.data.*Z; do
		# a last file of fewer than 20 events is not judged (see check_series)
		[ "$f" = "$last" ] && [ "$(perf script -i "$f" -F time 2>/dev/null | grep -c ':')" -lt 20 ] && continue
		n=$((n + 1))
		perf script -i "$f" 2>/dev/null | grep -q 'sched:sched_switch' &&
			"$TALLY" report --metric off-cpu "$f" 2>&1 | grep -q ' nap_sleep ' && ok=$((ok + 1))
	done
	[ $n -ge 3 ] && [ $ok = $n ] && pass "record_rotate_off_cpu_in_every_file ($ok of $n files)" ||
		fail record_rotate_off_cpu_in_every_file "$ok of $n files: $(tail -2 "$TMP/off.err")"
else
	fail record_rotate_off_cpu_in_every_file "$(tail -2 "$TMP/off.err")"
fi

# SIGTERM ends the recording with the file being written finished (the command runs on).
mkdir "$TMP/term"
"$TALLY" record -o "$TMP/term/perf.data" --rotate 1 -- "$TMP/work" 4 2>"$TMP/term.err" &
tp=$!
wait_exec "$TMP/work 4"
sleep 2.5
kill -TERM $tp
wait $tp
rc=$?
check_series record_rotate_sigterm_finishes_the_file "$TMP/term" 2 4 "$(samples_of "$TMP/term.err")"
[ $rc = 0 ] && pass record_rotate_sigterm_exit_status || fail record_rotate_sigterm_exit_status "exit $rc"

# Bad values.
expect_err record_rotate_zero 2 "^tally: --rotate: expected seconds" "$TALLY" record --rotate 0 -- true
expect_err record_rotate_not_a_number 2 "^tally: --rotate: expected seconds" "$TALLY" record --rotate x -- true
expect_err record_rotate_size_too_small 2 "^tally: --rotate: .*at least 1M" "$TALLY" record --rotate 512K -- true
expect_err record_keep_without_rotate 2 "^tally: --keep: keeps the newest files of --rotate" "$TALLY" record --keep 2 -- true
expect_err record_keep_zero 2 "^tally: --keep: expected a number" "$TALLY" record --rotate 1 --keep 0 -- true

# Python: frames named in the last file too, its code objects written again after each
# turn (the BPF program's seen set starts anew).
PY=/usr/bin/python3.11
if ! [ -x $PY ] || ! [ -d /usr/lib/debug/.build-id ]; then
	skip record_rotate_python_frames_in_every_file "no $PY with its debug information (python3.11-dbg)"
	exit 0
fi
cat > "$TMP/rot.py" <<'PY'
import sys, time
def rot_leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def rot_outer(t):
    end = time.monotonic() + t
    while time.monotonic() < end:
        rot_leaf(20000)
rot_outer(float(sys.argv[1]))
PY
mkdir "$TMP/py"
# 3.5 s of the script after the interpreter's start: it ends within the fourth second. A file
# of fewer than 100 samples is not judged: a second's file has hundreds, and a fragment at
# either end (an interpreter slow to start on a loaded machine, 21 samples of which 16 in
# rot_leaf in a CI run; its end just past the fourth turn) is mostly start-up or exit.
"$TALLY" record -o "$TMP/py/perf.data" --rotate 1 -- $PY "$TMP/rot.py" 3.5 2>"$TMP/py.err"
ok=0 n=0 bad=""
for f in "$TMP"/py/perf.data.*Z; do
	[ "$(perf script -i "$f" -F time 2>/dev/null | grep -c ':')" -ge 100 ] || continue
	n=$((n + 1))
	"$TALLY" report "$f" >"$TMP/py.report" 2>&1
	# rot_leaf under rot_outer, both Python frames, in most of the file's samples.
	awk '/^ *[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+ +rot_leaf \[python\]/ {sub(/%/, "", $3); if ($3 + 0 >= 80) k = 1}
		/rot_outer \[python\]/ {o = 1} END {exit !(k && o)}' "$TMP/py.report" && ok=$((ok + 1)) ||
		bad="$bad $(basename "$f"): $(grep -m2 'rot_leaf\|^python:' "$TMP/py.report" | tr -s ' ');"
done
[ $n -ge 3 ] && [ $ok = $n ] && pass "record_rotate_python_frames_in_every_file ($ok of $n files)" ||
	fail record_rotate_python_frames_in_every_file "$ok of $n files:$bad $(tail -2 "$TMP/py.err")"
