# tally probes count on Debian's /usr/bin/python3.11 function__entry (a semaphore-guarded
# probe), with and without --args, for -- CMD and -p PID, against bpftrace and against the
# script's own count of the calls (sys.setprofile). CPython 3.11 fires function__entry
# only where the interpreter is entered from C (python/cpython#98894: inlined
# Python-to-Python calls skip it); under sys.setprofile every call is entered that way.
. tests/lib.sh

PY=/usr/bin/python3.11
N=360
# With GO set the script, its start-up done, creates READY and waits for GO (-p: the
# tracer attaches between the two, so that it sees the calls and only them).
cat >"$TMP/calls.py" <<PYEOF
import os, sys, time
go = os.environ.get("GO")
if go:
    open(os.environ["READY"], "w").close()
while go and not os.access(go, os.F_OK):
    time.sleep(0.01)
n = 0
def prof(frame, event, arg):
    global n
    if event == "call" and frame.f_code.co_name == "f":
        n += 1
def f():
    pass
sys.setprofile(prof)
for i in range($N):
    f()
sys.setprofile(None)
print("calls", n, file=sys.stderr, flush=True)
os._exit(0)  # at once: what --args reads must be read before the process is gone
PYEOF

count_of() { awk '$1 == "python:function__entry" {print $2}' <<<"$1"; }
calls_of() { sed -nE 's/^calls ([0-9]+)$/\1/p' <<<"$1"; }
# The hits whose arg1 (the function's name) is "f", from --args's value list.
f_hits_of() { sed -nE 's/^ *arg1: .*"f" \(([0-9]+)\).*/\1/p' <<<"$1"; }
BT_PROBE="usdt:$PY:python:function__entry { @n = count(); }"
bt_count() { sed -nE 's/^@n: ([0-9]+)$/\1/p' <<<"$1"; }

# The semaphore of python:function__entry ($PY is not PIE: at its link-time address), which
# the kernel raises in the target once a tracer's uprobe is in (uprobe ref_ctr_offset).
SEM=$(readelf -n "$PY" 2>/dev/null | awk '/Name: function__entry/ { on = 1 }
	on && /Semaphore:/ { print $NF; exit }')
semaphore_of() { # PID: the semaphore's value in PID's memory, or nothing
	python3 - "$1" "$SEM" 2>/dev/null <<'PY'
import sys
with open("/proc/%s/mem" % sys.argv[1], "rb") as f:
    f.seek(int(sys.argv[2], 16))
    print(int.from_bytes(f.read(2), "little"))
PY
}

# Starts the script, and once it is ready the tracer given as "$@" -p PID in the
# background; once its line WAIT_FOR is in its output and its probe is in (the semaphore
# raised: a tracer's line can come before its probes, and the script, released too soon,
# ran and exited before bpftrace attached, in one CI run), releases the script and waits.
run_pid() { # OUTFILE WAIT_FOR TRACER...
	local out=$1 want=$2 i
	shift 2
	rm -f "$TMP/go" "$TMP/ready"
	GO="$TMP/go" READY="$TMP/ready" "$PY" "$TMP/calls.py" 2>"$TMP/script.err" &
	local py=$!
	for ((i = 0; i < 500; i++)); do
		[ -e "$TMP/ready" ] && break
		sleep 0.02
	done
	"$@" -p "$py" >"$out" 2>&1 &
	local tracer=$!
	for ((i = 0; i < 500; i++)); do
		grep -q "$want" "$out" && break
		sleep 0.02
	done
	for ((i = 0; i < 500; i++)); do
		[ "$(semaphore_of "$py")" = 1 ] && break
		sleep 0.02
	done
	touch "$TMP/go"
	wait "$py"
	wait "$tracer"
}

if [ ! -x "$PY" ] || ! command -v bpftrace >/dev/null; then
	skip python_function_entry "needs $PY and bpftrace"
else
	# ---- -- CMD ----
	theirs=$(timeout 120 bpftrace -e "$BT_PROBE" -c "$PY $TMP/calls.py" 2>&1)
	bt=$(bt_count "$theirs")
	for args in "" --args; do
		name=python_function_entry_cmd${args:+_args}
		mine=$(timeout 120 "$TALLY" probes count 'python:function__entry' $args -- "$PY" "$TMP/calls.py" 2>&1)
		m=$(count_of "$mine") calls=$(calls_of "$mine")
		[ "$calls" = "$N" ] && [ -n "$m" ] && [ "$m" = "$bt" ] && [ "$m" -ge "$N" ] &&
			pass "${name}_matches_bpftrace" ||
			fail "${name}_matches_bpftrace" "tally '$m', bpftrace '$bt', script '$calls': $mine $theirs"
	done
	# Every hit's name decoded, the last ones before the exit too (three runs: without
	# the strings read at the exit stop, most runs lose some).
	for run in 1 2 3; do
		[ "$run" = 1 ] || mine=$(timeout 120 "$TALLY" probes count 'python:function__entry' --args -- "$PY" "$TMP/calls.py" 2>&1)
		f=$(f_hits_of "$mine")
		[ "$f" = "$N" ] || break
	done
	[ "$f" = "$N" ] && pass python_function_entry_cmd_args_names_every_call ||
		fail python_function_entry_cmd_args_names_every_call "run $run: 'f' $f times of $N: $mine"

	# ---- -p PID ----
	run_pid "$TMP/bt.out" "Attaching" timeout 120 bpftrace -e "$BT_PROBE"
	bt=$(bt_count "$(cat "$TMP/bt.out")")
	for args in "" --args; do
		name=python_function_entry_pid${args:+_args}
		run_pid "$TMP/mine.out" "counting" timeout 120 "$TALLY" probes count 'python:function__entry' $args
		mine=$(cat "$TMP/mine.out") m=$(count_of "$(cat "$TMP/mine.out")")
		calls=$(calls_of "$(cat "$TMP/script.err")")
		[ "$calls" = "$N" ] && [ -n "$m" ] && [ "$m" = "$bt" ] && [ "$m" -ge "$N" ] &&
			pass "${name}_matches_bpftrace" ||
			fail "${name}_matches_bpftrace" "tally '$m', bpftrace '$bt', script '$calls': $mine $(cat "$TMP/bt.out")"
	done
	f=$(f_hits_of "$mine")
	[ "$f" = "$N" ] && pass python_function_entry_pid_args_names_every_call ||
		fail python_function_entry_pid_args_names_every_call "'f' $f times of $N: $mine"
fi
