# SIGINT, SIGTERM and SIGKILL of tally in every mode that attaches to a target (issue 18
# §5): record -p, record -- CMD, record -e usdt: (-p and -- CMD), probes count (-p and
# -- CMD), record -a (with -- CMD, and with --duration beside a running target), record
# --off-cpu (-p and -- CMD). Whatever the signal, the target runs to its normal end (its marker file says so,
# its status is 0), is never left stopped (its state, sampled every 50 ms from tally's end
# to its own, is never T or t: while tally lives, and while the kernel tears a killed
# tally down, a ptrace stop of the target is tally's work and short), and its probe's semaphore, which the kernel (uprobe
# ref_ctr_offset) raised while tally was attached, is back to 0: read from /proc/PID/mem.
# After SIGINT/SIGTERM the recording is complete (perf script reads it; -a recordings,
# the whole machine's, are read without unwinding, which takes perf minutes on a loaded
# machine, and must hold samples of the target) and a command's status is tally's.
# suite: alone: records the whole machine (-a) and samples the target's state every 50 ms
. tests/lib.sh

gcc -O1 -g -no-pie -I"$ROOT/include" -o "$TMP/target" tests/reliability/target.c ||
	{ fail signals_build_target; exit 0; }
SEM=$(nm "$TMP/target" | awk '$3 == "tally_sem.rel.tick" { print "0x" $1 }')
[ -n "$SEM" ] || { fail signals_semaphore_symbol "no tally_sem.rel.tick in target"; exit 0; }

# semaphore PID: the 16-bit semaphore of rel:tick in PID's memory (non-PIE: at $SEM)
semaphore() {
	python3 - "$1" "$SEM" <<'P' 2>/dev/null
import sys
with open("/proc/%s/mem" % sys.argv[1], "rb") as f:
    f.seek(int(sys.argv[2], 16))
    print(int.from_bytes(f.read(2), "little"))
P
}
state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }

LEFT=()
trap 'kill_ids KILL "${LEFT[@]}"; rm -rf "$TMP"' EXIT

# one MODE SIG: runs the target under tally in MODE, sends SIG to tally once it is
# attached, lets the target end once its semaphore is down (or 10 s after the signal),
# and checks its life from the signal to its end.
one() {
	local mode=$1 sig=$2 name="signal_${1}_$2" dir=$TMP/$1.$2 tp= tl= why=
	mkdir -p "$dir"
	local run=("$TMP/target" "$dir/end" "$dir/marker" "$dir/pid")
	case $mode in
	record_pid | usdt_pid | count_pid | all_duration | offcpu_pid)
		"${run[@]}" &
		tp=$!
		LEFT+=("$(proc_id $tp)")
		for _ in $(seq 100); do [ -s "$dir/pid" ] && break; sleep 0.02; done ;;
	esac
	case $mode in
	record_pid) "$TALLY" record -q -o "$dir/out.data" -p $tp 2>"$dir/err" & ;;
	record_cmd) "$TALLY" record -q -o "$dir/out.data" -- "${run[@]}" 2>"$dir/err" & ;;
	usdt_pid) "$TALLY" record -q -e usdt:rel:tick -o "$dir/out.data" -p $tp 2>"$dir/err" & ;;
	usdt_cmd) "$TALLY" record -q -e usdt:rel:tick -o "$dir/out.data" -- "${run[@]}" 2>"$dir/err" & ;;
	count_pid) "$TALLY" probes count rel:tick -p $tp >"$dir/count" 2>"$dir/err" & ;;
	count_cmd) "$TALLY" probes count rel:tick -- "${run[@]}" >"$dir/count" 2>"$dir/err" & ;;
	all_cmd) "$TALLY" record -q -a -F 250 -o "$dir/out.data" -- "${run[@]}" 2>"$dir/err" & ;;
	all_duration) "$TALLY" record -q -a -F 250 --duration 60 -o "$dir/out.data" 2>"$dir/err" & ;;
	offcpu_pid) "$TALLY" record -q --off-cpu -o "$dir/out.data" -p $tp 2>"$dir/err" & ;;
	offcpu_cmd) "$TALLY" record -q --off-cpu -o "$dir/out.data" -- "${run[@]}" 2>"$dir/err" & ;;
	esac
	tl=$!
	LEFT+=("$(proc_id $tl)")
	for _ in $(seq 100); do [ -s "$dir/pid" ] && break; sleep 0.02; done
	local pid
	pid=$(cat "$dir/pid" 2>/dev/null)
	[ -n "$pid" ] || { fail "$name" "the target did not start: $(cat "$dir/err")"; return; }
	LEFT+=("$(proc_id $pid)")
	# Attached: the semaphore raised (usdt modes), or samples flowing (native ones: the
	# recording, a temporary file beside out.data until its end, past what tally writes
	# before enabling its events: the machine's mappings with -a), then a second more.
	case $mode in
	usdt_* | count_*)
		for _ in $(seq 150); do [ "$(semaphore $pid)" = 1 ] && break; sleep 0.02; done
		[ "$(semaphore $pid)" = 1 ] || why="semaphore never raised ($(semaphore $pid))" ;;
	*)
		local least=$((64 << 10)) # some hundred samples unwound while recording
		[[ $mode == all_* ]] && least=$((4 << 20))
		for _ in $(seq 200); do
			[ "$(stat -c %s "$dir"/.out.data.* 2>/dev/null || echo 0)" -gt $least ] && break
			sleep 0.05
		done
		sleep 1 ;;
	esac
	kill -$sig $tl
	# From tally's end to the target's: never stopped; the semaphore down within 10 s
	# (tally may be slow to tear down under ASan), after which the target may end.
	local stopped= sem_down= i=0 st
	while [ -d /proc/$pid ] && [ "$(state $pid)" != Z ] && [ $i -lt 600 ]; do
		st=$(state $pid)
		case "$(state $tl)" in
		'' | Z) [[ "$st" == [Tt] ]] && stopped=$st ;;
		esac
		[ -z "$sem_down" ] && [ "$(semaphore $pid)" = 0 ] && sem_down=$((i * 50))
		{ [ -n "$sem_down" ] || [ $i -ge 200 ]; } && touch "$dir/end"
		sleep 0.05
		i=$((i + 1))
	done
	[ $i -ge 600 ] && why="the target did not end within 30 s (state $(state $pid))" &&
		kill -KILL $pid $tl 2>/dev/null
	wait $tl 2>/dev/null
	local rc=$?
	local trc=0
	[ -n "$tp" ] && { wait $tp; trc=$?; }
	[ -z "$why" ] && [ -n "$stopped" ] && why="target seen in state $stopped"
	[ -z "$why" ] && [ -z "$sem_down" ] && why="semaphore not back to 0 within 10 s"
	[ -z "$why" ] && [ "$(cat "$dir/marker" 2>/dev/null)" != "ran to the end" ] &&
		why="the target did not run to its end"
	[ -z "$why" ] && [ $trc != 0 ] && why="the target exited $trc"
	if [ -z "$why" ] && [ $sig != KILL ]; then
		[ $rc = 0 ] || why="tally exited $rc: $(head -c 300 "$dir/err")"
		case $mode in
		record_* | usdt_* | offcpu_*)
			perf script -i "$dir/out.data" >/dev/null 2>"$dir/perr" ||
				why="perf script cannot read the recording: $(head -c 200 "$dir/perr")" ;;
		all_*)
			if ! perf script -F pid -i "$dir/out.data" >"$dir/pids" 2>"$dir/perr"; then
				why="perf script cannot read the recording: $(head -c 200 "$dir/perr")"
			elif ! grep -qE "^ *$pid *$" "$dir/pids"; then
				why="no sample of the target (pid $pid) in the recording"
			fi ;;
		count_*)
			grep -qE '^rel:tick [1-9][0-9]*$' "$dir/count" || why="no count: $(cat "$dir/count")" ;;
		esac
	fi
	[ -z "$why" ] && [ $sig = KILL ] && [ $rc != 137 ] && why="tally exited $rc after SIGKILL"
	[ -z "$why" ] && pass "$name" || fail "$name" "$why"
}

for mode in record_pid record_cmd usdt_pid usdt_cmd count_pid count_cmd all_cmd all_duration \
	offcpu_pid offcpu_cmd; do
	for sig in INT TERM KILL; do
		one $mode $sig
	done
done
