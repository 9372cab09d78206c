# Python frames recorded at the sample instant (docs/python.md, "Recording Python frames"):
# tally record of CPython 3.11 scripts, with the interpreter itself as the oracle (the
# workload prints its code objects' addresses, names, first lines and line tables, and its
# threads' ids; CPython's co_lines() maps each recorded instruction to its line), perf
# script reading the same payloads, and the target's safety: SIGKILL of tally leaves it
# running to its end, never stopped; an exit mid-run is a clean end.
. tests/lib.sh

PY=/usr/bin/python3.11
WORK=$ROOT/tests/python/py/capture_work.py
PYDATA="python3 $ROOT/tests/python/pydata.py"
if ! [ -x $PY ] || ! [ -d /usr/lib/debug/.build-id ]; then
	skip python_capture "no $PY with its debug information (python3.11-dbg)"
	exit 0
fi

# A CPU-bound script with a second thread, under tally record -- CMD.
"$TALLY" record -o "$TMP/w.data" -- $PY "$WORK" 1 >"$TMP/w.out" 2>"$TMP/w.err"
rc=$?
if [ $rc != 0 ] || ! grep -q '^result ' "$TMP/w.out"; then
	fail python_capture_command "exit $rc: $(cat "$TMP/w.err")"
	exit 0
fi
if grep -q warning "$TMP/w.err"; then
	fail python_capture_command_quiet "$(cat "$TMP/w.err")"
else
	pass python_capture_command_quiet
fi
if $PYDATA "$TMP/w.data" >"$TMP/w.py" 2>"$TMP/w.pyerr"; then
	check python_capture_matches_interpreter \
		python3 "$ROOT/tests/python/py/capture_check.py" "$TMP/w.out" "$TMP/w.py" "$WORK"
else
	fail python_capture_payload "$(cat "$TMP/w.pyerr")"
fi
grep -q 'Python: 1 process, [1-9][0-9]* stacks, [1-9][0-9]* code objects, 0 lost' "$TMP/w.err" &&
	pass python_capture_summary || fail python_capture_summary "$(cat "$TMP/w.err")"

# perf script reads the file: the bpf-output samples whose payload is a stack (TPY1, type
# 1) are those of the payload reader, thread by thread and microsecond by microsecond.
# A sample's first line: COMM TID [CPU] TIME: ...
perf script -i "$TMP/w.data" -F tid,time,event,bpf-output 2>"$TMP/ps.err" | awk '
	{ for (k = 2; k < NF; k++)
		if ($k ~ /^\[[0-9]+\]$/ && $(k + 1) ~ /^[0-9]+\.[0-9]+:$/) {
			tid = $(k - 1); time = $(k + 1); sub(":", "", time)
		} }
	/BPF output: 0000: 54 50 59 31 01 00/ { print tid, time }' | sort >"$TMP/ps.stacks"
awk '$1 == "stack" { printf "%d %d.%06d\n", $4, $2 / 1e9, ($2 % 1e9) / 1e3 }' "$TMP/w.py" |
	sort >"$TMP/py.stacks"
if [ -s "$TMP/ps.stacks" ] && cmp -s "$TMP/ps.stacks" "$TMP/py.stacks"; then
	pass python_capture_perf_script
else
	fail python_capture_perf_script "perf script: $(wc -l <"$TMP/ps.stacks") stacks, the \
payload reader $(wc -l <"$TMP/py.stacks"); $(head -2 "$TMP/ps.err")"
fi

# Names and paths beyond ASCII (PEP 393 kinds 1, 2 and 4 in the interpreter), as UTF-8:
# what the interpreter says its code objects are called and where they come from.
mkdir -p "$TMP/dír😀"
cat >"$TMP/dír😀/names.py" <<'PY'
def größe(n):
    return sum(i * i for i in range(n))
def 名前(n):
    return größe(n)
for _ in range(60):
    名前(100000)
for f in (größe, 名前):
    print("%x %s %s" % (id(f.__code__), f.__code__.co_qualname, f.__code__.co_filename))
PY
"$TALLY" record -q -o "$TMP/u.data" -- $PY "$TMP/dír😀/names.py" >"$TMP/u.out" 2>"$TMP/u.err"
$PYDATA "$TMP/u.data" | awk '$1 == "code" { print $4, $7, $8 }' >"$TMP/u.codes"
missing=$(grep -v -x -F -f "$TMP/u.codes" "$TMP/u.out")
[ "$(wc -l <"$TMP/u.out")" = 2 ] && [ -z "$missing" ] && pass python_capture_utf8_names ||
	fail python_capture_utf8_names "not recorded: $missing $(cat "$TMP/u.err")"

# A thread that never runs Python (a native thread running strlen over 200 MB, four times)
# in a Python process: its samples have empty Python stacks, the main thread's do not.
"$TALLY" record -q -o "$TMP/t.data" -- $PY -c '
import ctypes, threading
libc = ctypes.CDLL(None)
n = 200_000_000
buf = ctypes.create_string_buffer(n)
ctypes.memset(buf, 0x61, n - 1)
for _ in range(4):
    tid = ctypes.c_ulong()
    libc.pthread_create(ctypes.byref(tid), None, ctypes.cast(libc.strlen, ctypes.c_void_p), buf)
    libc.pthread_join(tid, None)
print(threading.get_native_id())' >"$TMP/t.out" 2>"$TMP/t.err"
$PYDATA "$TMP/t.data" | awk -v main="$(cat "$TMP/t.out")" '
	$1 == "stack" && $4 != main { other++; full += $6 > 0 }
	$1 == "stack" && $4 == main { mine += $6 > 0 }
	END { print other + 0, full + 0, mine + 0 }' >"$TMP/t.counts"
read -r other full mine <"$TMP/t.counts"
[ "$other" -gt 5 ] && [ "$full" = 0 ] && [ "$mine" -gt 0 ] && pass python_capture_native_thread ||
	fail python_capture_native_thread "native thread: $other stacks, $full with Python frames; main: $mine $(cat "$TMP/t.err")"

# --no-python: one event in the file, as before Python frames existed.
"$TALLY" record -q --no-python -o "$TMP/off.data" -- $PY -c 'sum(range(10**6))' 2>"$TMP/off.err"
n=$(perf evlist -i "$TMP/off.data" 2>/dev/null | wc -l)
[ "$n" = 1 ] && ! [ -s "$TMP/off.err" ] && pass python_capture_off ||
	fail python_capture_off "$n events: $(cat "$TMP/off.err")"

# stacks_of DATA PID QUALNAME: how many stacks of PID have QUALNAME innermost, the records
# in time order (the file has each CPU's ring as drained: capture_check.py).
stacks_of() {
	$PYDATA "$1" | sort -s -n -k2,2 | awk -v pid="$2" -v q="$3" '
		$1 == "code" && $3 == pid { name[$4] = $7 }
		$1 == "stack" && $3 == pid && $6 > 0 { split($7, f, ":"); n += name[f[1]] == q }
		END { print n + 0 }'
}

# A child that becomes Python later (sh forks, the child execs the interpreter) and a fork
# of a Python process: both have their stacks.
cat >"$TMP/forker.py" <<'PY'
import os
def child_work():
    return sum(i * i for i in range(3_000_000))
def parent_work():
    return sum(i * i for i in range(3_000_000))
pid = os.fork()
if pid == 0:
    print("child", os.getpid(), child_work() > 0, flush=True)
    os._exit(0)
print("parent", os.getpid(), parent_work() > 0, flush=True)
os.waitpid(pid, 0)
PY
"$TALLY" record -q -o "$TMP/f.data" -- sh -c "sleep 0.05; $PY $TMP/forker.py; true" \
	>"$TMP/f.out" 2>"$TMP/f.err"
parent=$(awk '$1 == "parent" { print $2 }' "$TMP/f.out")
child=$(awk '$1 == "child" { print $2 }' "$TMP/f.out")
if [ -z "$parent" ] || [ -z "$child" ]; then
	fail python_capture_exec_fork "no output: $(cat "$TMP/f.err")"
else
	np=$(stacks_of "$TMP/f.data" "$parent" "parent_work.<locals>.<genexpr>")
	nc=$(stacks_of "$TMP/f.data" "$child" "child_work.<locals>.<genexpr>")
	[ "$np" -gt 20 ] && [ "$nc" -gt 20 ] && pass python_capture_exec_fork ||
		fail python_capture_exec_fork "stacks in <genexpr>: parent $np, child $nc"
fi

# -p PID: a running interpreter, recorded for 1.5 s once samples flow (loading the BPF
# program and the layout comes first and is long on a loaded machine): most of its main
# thread's stacks are in beta.
$PY "$WORK" 8 >"$TMP/p.out" 2>&1 &
target=$!
trap 'kill_children TERM; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do grep -q '^thread main' "$TMP/p.out" && break; sleep 0.1; done
"$TALLY" record -p $target -o "$TMP/p.data" 2>"$TMP/p.err" &
rec=$!
# (the recording grows in a temporary file beside p.data, renamed to it at the end: by a
# few hundred bytes a sample, each drain's written as it ends)
for _ in $(seq 100); do
	[ "$(stat -c %s "$TMP"/.p.data.* 2>/dev/null || echo 0)" -gt 65536 ] && break
	sleep 0.1
done
sleep 1.5
kill -INT $rec 2>/dev/null
wait $rec
wait $target
n=$(stacks_of "$TMP/p.data" $target beta)
all=$($PYDATA "$TMP/p.data" | awk -v pid=$target '$1 == "stack" && $4 == pid && $6 > 0' | wc -l)
[ "$n" -gt 10 ] && [ $((2 * n)) -gt "$all" ] && grep -q '^result ' "$TMP/p.out" &&
	pass python_capture_attach ||
	fail python_capture_attach "$n of $all stacks in beta: $(cat "$TMP/p.err")"

# SIGKILL of tally mid-run: the script is never stopped and runs to its end. Its state is
# looked at every 20 ms while tally lives and after it is gone.
"$TALLY" record -q -o "$TMP/k.data" -- $PY "$WORK" 1.5 >"$TMP/k.out" 2>/dev/null &
rec=$!
for _ in $(seq 100); do grep -q '^thread main' "$TMP/k.out" && break; sleep 0.05; done
target=$(pgrep -P $rec)
stopped=0
for i in $(seq 40); do
	[ "$i" = 15 ] && kill -9 $rec
	st=$(awk '/^State:/ { print $2 }' "/proc/$target/status" 2>/dev/null)
	case $st in T | t) stopped=1 ;; esac
	sleep 0.02
done
wait $rec 2>/dev/null
for _ in $(seq 100); do grep -q '^result ' "$TMP/k.out" && break; sleep 0.05; done
[ -n "$target" ] && [ $stopped = 0 ] && grep -q '^result [1-9]' "$TMP/k.out" &&
	pass python_capture_sigkill_harmless ||
	fail python_capture_sigkill_harmless "target '$target', stopped $stopped: $(cat "$TMP/k.out")"

# A script that leaves in the middle of its work (os._exit from deep frames): a clean end,
# its status is tally's, and the file reads to its end.
"$TALLY" record -q -o "$TMP/x.data" -- $PY -c '
import os, time
def deep(n):
    if n:
        return deep(n - 1)
    t = time.process_time() + 0.3
    while time.process_time() < t:
        pass
    os._exit(3)
deep(50)' 2>"$TMP/x.err"
rc=$?
n=$(stacks_of "$TMP/x.data" "$($PYDATA "$TMP/x.data" | awk '$1 == "stack" { print $3; exit }')" deep)
[ $rc = 3 ] && [ "$n" -gt 20 ] && ! [ -s "$TMP/x.err" ] && pass python_capture_exit_midway ||
	fail python_capture_exit_midway "exit $rc, $n stacks in deep: $(cat "$TMP/x.err")"

# An interpreter without debug information (a copy with no build-id, so that its debug
# file is not found) that tally's table does not fit either (its code objects made 192
# bytes): one warning saying why and what to install, native recording goes on.
objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink $PY "$TMP/python3.11"
printf '\xc0' | dd of="$TMP/python3.11" bs=1 seek=$(($(elf_symbol_offset $PY PyCode_Type) + 32)) \
	conv=notrunc 2>/dev/null
PYTHONHOME=/usr "$TALLY" record -q -o "$TMP/n.data" -- "$TMP/python3.11" -c 'sum(range(10**6))' \
	2>"$TMP/n.err"
rc=$?
w=$(grep -c 'warning: process [0-9]* (.*python3.11): .*recording its native frames only' "$TMP/n.err")
[ $rc = 0 ] && [ "$w" = 1 ] && [ "$(wc -l <"$TMP/n.err")" = 1 ] &&
	grep -q "table for its version does not fit it (its PyCode_Type gives objects of 192 bytes, not 184); install" "$TMP/n.err" &&
	pass python_capture_no_debug_info ||
	fail python_capture_no_debug_info "exit $rc: $(cat "$TMP/n.err")"

# Not root: no BPF. One line when Python shows up, saying that ptrace mode reads the frames
# and what BPF mode would need (tests/python/unprivileged.test.sh checks the frames).
mkdir -m 777 "$TMP/nobody"
chmod 755 "$TMP"
setpriv --reuid=65534 --regid=65534 --clear-groups "$TALLY" record -q \
	-o "$TMP/nobody/u.data" -- $PY -c 'sum(range(10**6))' 2>"$TMP/u.err"
rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$TMP/u.err")" = 1 ] &&
	grep -q 'Python frames read in ptrace mode.*BPF mode.*needs root, or CAP_BPF and CAP_PERFMON' "$TMP/u.err" &&
	pass python_capture_not_root || fail python_capture_not_root "exit $rc: $(cat "$TMP/u.err")"
