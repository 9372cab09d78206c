# Python frames for an ordinary user (docs/python.md, "Without privileges"): tally record
# run as nobody (kernel.perf_event_paranoid 2 and kernel.unprivileged_bpf_disabled here:
# no BPF) reads Python frames in ptrace mode, and says so and what BPF mode would need.
# Against the interpreters' own account (frames_check.py, as tests/python/frames.test.sh):
#   - for Debian's python3.11 and pyenv's 3.8-3.13: the chain main -> outer -> middle ->
#     inner complete and in order in >= 98% of its samples; for 3.11 also C functions
#     under the Python function and line that called them (names and lines from traceback);
#   - perf script reads the file, and its own DWARF unwinder walks the stack copies ptrace
#     mode took to the interpreter's eval loop;
#   - -p of a process of the same user: its threads' shares of the samples against their CPU
#     time (time.thread_time), a thread started while traced included; the signals sent to
#     it during the recording delivered; its output and exit status those of a run without
#     tally; not stopped nor traced once tally ends (--duration), nor once tally is killed;
#   - -p of another user's process: refused, saying why;
#   - a fork and an exec in the child: each process read, statuses and output unchanged;
#   - native frames for nobody (--no-python): samples recorded.
. tests/lib.sh

W=$ROOT/tests/python/py
PY=/usr/bin/python3.11
export PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}
for t in go setpriv unshare perf; do
	command -v $t >/dev/null || { skip python_unprivileged "no $t"; exit 0; }
done
[ "$(id -u)" = 0 ] || { skip python_unprivileged "the test drops to nobody from root"; exit 0; }
export GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"

chmod 711 "$TMP"
U=$TMP/u
mkdir "$U"
chown nobody:nogroup "$U"
cp "$W/ptrace_work.py" "$U/ptrace_work.py"

# as_nobody CMD...: CMD as nobody (scripts/as-nobody.sh: /root's pyenv readable); NOBODY,
# the same as a command, for background runs whose $! must be CMD's pid.
NOBODY=("$ROOT/scripts/as-nobody.sh" "$U")
as_nobody() { "${NOBODY[@]}" "$@"; }

# record PY NAME ARGS...: tally record as nobody of PY ARGS into U/NAME.data, its pprof read by
# go tool pprof into NAME.traces; the workload's output in NAME.out, tally's in NAME.err.
record() {
	local py=$1 name=$2
	shift 2
	if ! as_nobody "$TALLY" record -q -o "$U/$name.data" -- "$py" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		! "$TALLY" export -f pprof -o "$TMP/$name.pb.gz" "$U/$name.data" 2>>"$TMP/$name.err" ||
		! go tool pprof -traces -lines "$TMP/$name.pb.gz" >"$TMP/$name.traces" 2>>"$TMP/$name.err"; then
		fail "python_unprivileged_record_$name" "$(cat "$TMP/$name.err")"
		return 1
	fi
}

check_py() {
	python3 "$W/frames_check.py" "$1" "$TMP/$2.out" "$TMP/$2.traces" "$3" ||
		fail "python_unprivileged_check_$2" "exit $?"
}

# The message says the mode and what each needs.
says_mode() {
	local name=$1 tag=$2
	grep -q 'Python frames read in ptrace mode.*your own processes.*BPF mode.*root, or CAP_BPF and CAP_PERFMON' \
		"$TMP/$name.err" && pass "python_unprivileged_says_ptrace_mode_$tag" ||
		fail "python_unprivileged_says_ptrace_mode_$tag" "$(cat "$TMP/$name.err")"
}

chain_of() {
	local py=$1 tag=$2
	record "$py" "chain_$tag" "$W/frames_work.py" 1 chain || return
	says_mode "chain_$tag" "$tag"
	check_py chain "chain_$tag" "unprivileged_$tag"
}

if [ -x $PY ] && [ -d /usr/lib/debug/.build-id ]; then
	chain_of $PY py311
	record $PY calls_py311 "$W/frames_work.py" 0.4 && check_py calls calls_py311 unprivileged_py311
else
	skip python_unprivileged_py311 "no $PY with its debug information (python3.11-dbg)"
fi
for v in 3.8 3.9 3.10 3.12 3.13; do
	py=$(ls "$PYENV_ROOT"/versions/$v.*/bin/python$v 2>/dev/null | head -1)
	if [ -n "$py" ]; then
		chain_of "$py" "py${v/./}"
	else
		skip "python_unprivileged_py${v/./}" "no pyenv CPython $v under $PYENV_ROOT"
	fi
done

# perf script: its DWARF unwinder reaches _PyEval_EvalFrameDefault from the stack copies of
# the CPU samples (the Python records' samples, which perf 6.1 names unknown-software and
# later perfs bpf-output, are not samples of cost). PYREC matches their event.
PYREC='bpf-output|unknown-software'
if [ -s "$U/chain_py311.data" ]; then
	perf script -f -F event,ip,sym -i "$U/chain_py311.data" >"$TMP/perf.script" 2>"$TMP/perf.err"
	awk -v py="$PYREC" '/^ *[a-z-]+:/ {if (n && !bpf) {s++; e += eval}; n = 1; bpf = $0 ~ py; eval = 0; next}
		/_PyEval_EvalFrameDefault/ {eval = 1}
		END {if (n && !bpf) {s++; e += eval}
			printf "%d of %d samples unwound by perf to the eval loop\n", e, s
			exit !(s >= 100 && e >= 0.9 * s)}' "$TMP/perf.script" >"$TMP/perf.res" &&
		pass "python_unprivileged_perf_script_unwinds ($(cat "$TMP/perf.res"))" ||
		fail python_unprivileged_perf_script_unwinds "$(cat "$TMP/perf.res") $(head -3 "$TMP/perf.err")"
fi

# Native frames for nobody, Python frames off: the kernel's samples, user space only.
if as_nobody "$TALLY" record -q --no-python -o "$U/native.data" -- $PY "$W/frames_work.py" 0.3 chain \
	>/dev/null 2>"$TMP/native.err" &&
	"$TALLY" report "$U/native.data" >"$TMP/native.report" 2>&1 &&
	awk '/^figures: +samples / {n = $3} END {exit !(n >= 100)}' "$TMP/native.report"; then
	pass python_unprivileged_native_samples
else
	fail python_unprivileged_native_samples "$(cat "$TMP/native.err") $(head -5 "$TMP/native.report" 2>/dev/null)"
fi

# traced_or_stopped PID: the process is traced or in a stop.
traced_or_stopped() {
	grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$1/status" 2>/dev/null ||
		grep -q '^State:[[:space:]]*[tT]' "/proc/$1/status" 2>/dev/null
}

# -- CMD: the command's output and exit status as without tally.
$PY "$U/ptrace_work.py" 0.3 >"$TMP/plain.out" 2>/dev/null
plain_rc=$?
as_nobody "$TALLY" record -q -o "$U/cmd.data" -- $PY "$U/ptrace_work.py" 0.3 >"$TMP/cmd.out" 2>"$TMP/cmd.err"
rc=$?
[ $rc = $plain_rc ] && [ $rc = 7 ] && cmp -s "$TMP/cmd.out" "$TMP/plain.out" &&
	pass python_unprivileged_cmd_output_and_status ||
	fail python_unprivileged_cmd_output_and_status "exit $rc (plain $plain_rc): $(cat "$TMP/cmd.out" "$TMP/cmd.err")"

# A fork, and an exec in the child: three processes read, each status and line as without
# tally, the Python frames of nearly every sample.
cp "$W/ptrace_fork.py" "$U/ptrace_fork.py"
$PY "$U/ptrace_fork.py" >"$TMP/fork_plain.out" 2>&1
plain_fork_rc=$?
as_nobody "$TALLY" record -o "$U/fork.data" -- $PY "$U/ptrace_fork.py" >"$TMP/fork.out" 2>"$TMP/fork.err"
rc=$?
"$TALLY" report "$U/fork.data" >"$TMP/fork.report" 2>&1
if [ $rc = 3 ] && [ $plain_fork_rc = 3 ] && cmp -s "$TMP/fork.out" "$TMP/fork_plain.out" &&
	grep -q 'Python: 3 processes' "$TMP/fork.err" &&
	awk '/^figures: +samples / {n = $3} /python: samples with Python frames/ {p = $NF}
		END {exit !(n >= 300 && p >= 0.95 * n)}' "$TMP/fork.report"; then
	pass python_unprivileged_fork_and_exec
else
	fail python_unprivileged_fork_and_exec "exit $rc (plain $plain_fork_rc): $(cat "$TMP/fork.out" "$TMP/fork.err") $(grep -E 'samples|python' "$TMP/fork.report" | head -4)"
fi

# -p of nobody's own process, SIGUSR1 sent 3 times while recorded.
"${NOBODY[@]}" $PY "$U/ptrace_work.py" 3 3 >"$TMP/p.out" 2>"$TMP/p.cpu" &
target=$!
sleep 0.3
"${NOBODY[@]}" "$TALLY" record -q -p $target -o "$U/p.data" >"$TMP/p.err" 2>&1 &
rec=$!
for i in 1 2 3; do
	sleep 0.4
	kill -USR1 $target
done
wait $rec
rec_rc=$?
wait $target
rc=$?
if [ $rec_rc = 0 ] && [ $rc = $plain_rc ] && [ $rc = 7 ] &&
	[ "$(head -1 "$TMP/p.out")" = "$(head -1 "$TMP/plain.out")" ] && grep -qx 'usr1 3' "$TMP/p.out"; then
	pass python_unprivileged_pid_output_status_and_signals
else
	fail python_unprivileged_pid_output_status_and_signals "tally $rec_rc, target $rc (plain $plain_rc): $(cat "$TMP/p.out" "$TMP/p.err")"
fi
says_mode p pid
# Each thread's share of the samples against its share of the CPU time (3 sigma + 2%).
perf script -f -F tid,event -i "$U/p.data" 2>/dev/null | grep -Ev "$PYREC" | awk '{print $1}' |
	sort | uniq -c >"$TMP/p.tids"
awk 'FNR == NR {n[$2] = $1; total += $1; next}
	/^cpu / {cpu[$2] = $3; all += $3}
	END {ok = total >= 300 && all > 0; k = 0
		for (t in cpu) {p = cpu[t] / all; s = n[t] / total; e = 3 * sqrt(p * (1 - p) / total) + 0.02; k++
			printf "tid %s %.1f%% of samples, %.1f%% of CPU; ", t, 100 * s, 100 * p
			if (s - p > e || p - s > e) ok = 0}
		printf "%d samples", total
		exit !(ok && k == 3)}' "$TMP/p.tids" "$TMP/p.cpu" >"$TMP/p.shares" &&
	pass "python_unprivileged_thread_shares_follow_cpu_time ($(cat "$TMP/p.shares"))" ||
	fail python_unprivileged_thread_shares_follow_cpu_time "$(cat "$TMP/p.shares")"

# Let go: after tally's --duration the target runs on untraced; after tally is killed too.
# Python's names of its threads, read in ptrace mode as in BPF mode (python_names.c): the
# threads threading named, under those names (the renamed one under its last) in report
# --threads, by their native ids as the workload prints them.
cp "$W/threads_work.py" "$U/threads_work.py"
if [ -x $PY ] && as_nobody "$TALLY" record -q -o "$U/names.data" -- $PY "$U/threads_work.py" 0.3 \
	>"$TMP/names.out" 2>"$TMP/names.err" &&
	"$TALLY" report --threads "$U/names.data" >"$TMP/names.report" 2>>"$TMP/names.err"; then
	want=$(awk '$1 == "thread" { print $3, $2 } $1 == "renamed" { print $4, $3 }' "$TMP/names.out")
	missing=$(while read -r tid name; do
		awk -v t="$tid" -v n="$name" '$2 == t && $3 == n { f = 1 } END { exit !f }' "$TMP/names.report" ||
			echo "$name ($tid)"
	done <<<"$want")
	[ "$(wc -l <<<"$want")" = 3 ] && [ -z "$missing" ] &&
		pass "python_unprivileged_threads_named_as_python_names_them ($(tr '\n' ' ' <<<"$want"))" ||
		fail python_unprivileged_threads_named_as_python_names_them "want $want; missing $missing: $(grep -A8 '^Threads' "$TMP/names.report")"
else
	fail python_unprivileged_threads_named_as_python_names_them "$(cat "$TMP/names.err" 2>/dev/null)"
fi

let_go() {
	local name=$1 how=$2
	"${NOBODY[@]}" $PY "$U/ptrace_work.py" 3 >"$TMP/$name.out" 2>/dev/null &
	local target=$! rec state
	sleep 0.3
	if [ "$how" = duration ]; then
		as_nobody "$TALLY" record -q -p $target --duration 1 -o "$U/$name.data" >"$TMP/$name.err" 2>&1
	else
		"${NOBODY[@]}" "$TALLY" record -q -p $target -o "$U/$name.data" >"$TMP/$name.err" 2>&1 &
		rec=$!
		sleep 1
		kill -KILL $rec
		wait $rec 2>/dev/null
	fi
	sleep 0.2
	state=$(grep -E '^(State|TracerPid)' "/proc/$target/status" 2>/dev/null | tr '\n' ' ')
	if traced_or_stopped $target; then
		fail "python_unprivileged_let_go_$name" "target still held: $state"
		kill -KILL $target
		wait $target
		return
	fi
	wait $target
	local rc=$?
	[ $rc = 7 ] && [ "$(head -1 "$TMP/$name.out")" = "$(head -1 "$TMP/plain.out")" ] &&
		pass "python_unprivileged_let_go_$name (then: $state)" ||
		fail "python_unprivileged_let_go_$name" "target exit $rc: $(cat "$TMP/$name.out" "$TMP/$name.err")"
}
let_go after_duration duration
let_go after_kill kill

# -p of another user's process (this shell's own, root's): refused with the reason.
sleep 30 &
other=$!
out=$(as_nobody "$TALLY" record -q -p $other --duration 1 -o "$U/other.data" 2>&1)
rc=$?
kill $other
wait $other 2>/dev/null
[ $rc = 1 ] && grep -q "process $other: another user's.*only your own processes" <<<"$out" &&
	pass python_unprivileged_other_users_process_refused ||
	fail python_unprivileged_other_users_process_refused "exit $rc: $out"

# Nothing of nobody's left from this test's runs.
left=$(pgrep -u nobody -f "$U/" | tr '\n' ' ')
[ -z "$left" ] && pass python_unprivileged_nothing_left || fail python_unprivileged_nothing_left "left: $left"
