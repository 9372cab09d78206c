# tally probes list/count against readelf -n, readelf -l and bpftrace, on our own test
# programs and on Debian's /usr/bin/python3.11 (whose probes use semaphores).
. tests/lib.sh

T=$ROOT/tests/trace
OUT=$CORPUS/probes
mkdir -p "$OUT"
PY=/usr/bin/python3.11

build() { # OUT CC FLAGS... -- SOURCES...
	local out=$1 cc=$2 flags=() f
	shift 2
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	for f in "$@" "$ROOT/include/tally/trace.h"; do
		if [ "$f" -nt "$out" ] || [ ! -e "$out" ]; then
			"$cc" "${flags[@]}" -I"$ROOT/include" "$@" -o "$out"
			return
		fi
	done
}
build "$OUT/fire" gcc -O2 -- "$T/fire.c" &&
	build "$OUT/twin" clang -O2 -- "$T/twin.c" &&
	build "$OUT/libmulti1.so" gcc -O2 -fPIC -shared -DLIB=1 -- "$T/multi_lib.c" &&
	build "$OUT/libmulti2.so" gcc -O2 -fPIC -shared -DLIB=2 -- "$T/multi_lib.c" &&
	build "$OUT/multi" gcc -O2 -L"$OUT" -Wl,-rpath,"$OUT" -- "$T/multi_main.c" "$T/multi_a.c" -lmulti1 -lmulti2 &&
	build "$OUT/a64.o" clang --target=aarch64-linux-gnu -ffreestanding -O2 -c -- "$ROOT/tests/probes/a64.c" ||
	fail probes_build "compiling the test programs"

# readelf's view, one line per probe: provider:name location semaphore arguments.
readelf_probes() {
	readelf -n "$1" | python3 -c '
import re, sys
p = n = loc = sem = None
for line in sys.stdin:
    line = line.strip()
    if line.startswith("Provider:"): p = line.split()[1]
    elif line.startswith("Name:"): n = line.split()[1]
    elif line.startswith("Location:"):
        m = re.match(r"Location: (0x[0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: (0x[0-9a-f]+)", line)
        loc, sem = int(m[1], 16), int(m[2], 16)
    elif line.startswith("Arguments:"):
        print("%s:%s %x %x %s" % (p, n, loc, sem, line[len("Arguments:"):].strip()))'
}
# tally's view, the same fields.
tally_probes() {
	"$TALLY" probes list "$1" | python3 -c '
import sys
for line in sys.stdin:
    f = line.split()
    if line.startswith("  ") and len(f) >= 5 and ":" in f[0] and f[0] != "PROBE":
        num = lambda v: 0 if v == "-" else int(v, 16)
        print("%s %x %x %s" % (f[0], num(f[1]), num(f[3]), " ".join(f[5:])))'
}
# tally's file offsets, checked against readelf -l: PT_LOAD segments map address to offset.
offsets_ok() {
	"$TALLY" probes list "$1" | python3 -c '
import sys
segs = []
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "LOAD":
        segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
def off(a):
    for o, v, size in segs:
        if v <= a < v + size:
            return o + a - v
    return -1
checked = bad = 0
for line in sys.stdin:
    f = line.split()
    if not (line.startswith("  ") and len(f) >= 5 and ":" in f[0] and f[1].startswith("0x")):
        continue
    checked += 1
    if off(int(f[1], 16)) != int(f[2], 16):
        print("probe offset:", line.strip()); bad += 1
    if f[3] != "-" and off(int(f[3], 16)) != int(f[4], 16):
        print("semaphore offset:", line.strip()); bad += 1
sys.exit(0 if checked and not bad else 1)' <(readelf -lW "$1")
}

for f in "$OUT/fire" "$OUT/twin" "$OUT/multi" "$OUT/libmulti1.so" "$OUT/a64.o" "$PY"; do
	name=list_matches_readelf_$(basename "$f")
	[ -e "$f" ] || { fail "$name" "$f missing"; continue; }
	a=$(readelf_probes "$f" | sort) b=$(tally_probes "$f" | sort)
	# In an object file readelf shows relocated addresses; tally shows none.
	[ "${f%.o}" != "$f" ] && a=$(awk '{$2 = 0; print}' <<<"$a") b=$(awk '{$2 = 0; print}' <<<"$b")
	[ -n "$a" ] && [ "$a" = "$b" ] && pass "$name" || fail "$name" "$(diff <(echo "$a") <(echo "$b") | head -4 | tr '\n' ' ')"
	[ "$f" = "$OUT/a64.o" ] && continue
	out=$(offsets_ok "$f") && pass "list_offsets_match_segments_$(basename "$f")" \
		|| fail "list_offsets_match_segments_$(basename "$f")" "$out"
done

# Decoded arguments: aarch64 forms from clang, and x86-64 registers of several widths.
out=$("$TALLY" probes list "$OUT/a64.o")
grep -qE 'arg[0-9]+: (u|s)[0-9]+ (mem\[(sp|x[0-9]+)[+-][0-9]+\]|reg (x[0-9]+|sp)|-?[0-9]+)' <<<"$out" &&
	! grep -q 'arg[0-9]*: .*?' <<<"$out" && pass list_decodes_aarch64 || fail list_decodes_aarch64 "$(head -20 <<<"$out")"
out=$("$TALLY" probes list "$PY")
grep -q 'python:line .* 8@%r14 8@%rax -4@%ebp' <<<"$out" && grep -q 'arg2: s32 reg rbp\[31:0\]' <<<"$out" \
	&& pass list_decodes_python || fail list_decodes_python "$(head -12 <<<"$out")"

# list -p: every object of a running process.
"$OUT/multi" 1 >/dev/null # warm
"$OUT/fire" 1 wait >/dev/null 2>&1 &
fp=$!
for _ in $(seq 1000); do [ "$(readlink /proc/$fp/exe)" = "$OUT/fire" ] && break; sleep 0.01; done
out=$("$TALLY" probes list -p $fp)
kill $fp 2>/dev/null
wait $fp 2>/dev/null
grep -q "^$OUT/fire: 2 probes" <<<"$out" && grep -q 'tally_test:fire ' <<<"$out" \
	&& pass list_pid_finds_mapped_objects || fail list_pid_finds_mapped_objects "$out"

# ---- count: exact, against bpftrace on CPython's own probes ----
cp "$ROOT/tests/probes/workload.py" "$TMP/script.py"
if [ ! -x "$PY" ] || ! command -v bpftrace >/dev/null; then
	skip python_counts_match_bpftrace "needs $PY and bpftrace"
else
	mine=$("$TALLY" probes count 'python:*' -- "$PY" "$TMP/script.py" 2>&1)
	theirs=$(timeout 300 bpftrace -e "usdt:$PY:python:line { @line = count(); }
		usdt:$PY:python:function__return { @function__return = count(); }" -c "$PY $TMP/script.py" 2>&1)
	for p in line function__return; do
		m=$(awk -v p="python:$p" '$1 == p {print $2}' <<<"$mine")
		t=$(sed -nE "s/^@$p: ([0-9]+)/\\1/p" <<<"$theirs")
		[ -n "$m" ] && [ "$m" = "$t" ] && [ "$m" -gt 1000 ] && pass "python_${p}_count_matches_bpftrace" \
			|| fail "python_${p}_count_matches_bpftrace" "tally '$m', bpftrace '$t': $(tail -3 <<<"$theirs" | tr '\n' ' ')"
	done
	# One row per probe, every python probe listed, sorted.
	rows=$(grep -c '^python:' <<<"$mine")
	[ "$rows" = "$(readelf -n "$PY" | awk '/Name:/ {print $2}' | sort -u | wc -l)" ] &&
		[ "$(grep '^python:' <<<"$mine" | awk '{print $1}')" = "$(grep '^python:' <<<"$mine" | awk '{print $1}' | sort)" ] \
		&& pass count_prints_one_sorted_row_per_probe || fail count_prints_one_sorted_row_per_probe "$mine"
fi

# --duration ends a command that would run forever; the command starts with the caller's
# signal mask, not tally's (which blocks SIGINT, SIGTERM and SIGCHLD).
start=$(date +%s)
out=$(timeout 60 "$TALLY" probes count --duration 1 python:line -- "$PY" -c '
import signal, sys, time
print("blocked", sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])), flush=True)
while True: time.sleep(0.001)' 2>&1)
took=$(($(date +%s) - start))
grep -qx 'blocked \[\]' <<<"$out" && grep -qE '^python:line [1-9][0-9]*$' <<<"$out" && [ $took -le 10 ] \
	&& pass count_duration_ends_command_with_clean_signal_mask \
	|| fail count_duration_ends_command_with_clean_signal_mask "${took}s: $out"

# Threads: every thread counted, those that exist when tally attaches and those created
# later (followed with ptrace), and thread creation still works in the target.
build "$OUT/threads" gcc -O2 -pthread -- "$T/threads.c" || fail threads_build
touch "$TMP/go.now"
out=$("$TALLY" probes count tally_test:thread -- "$OUT/threads" 1000 3 4 "$TMP/go.now" 2>&1)
[ "$out" = $'fired 8000\ntally_test:thread 8000' ] && pass count_command_counts_every_thread \
	|| fail count_command_counts_every_thread "$out"
"$OUT/threads" 1000 3 4 "$TMP/go.p" >"$TMP/threads.out" 2>&1 &
tp=$!
for _ in $(seq 1000); do [ "$(readlink /proc/$tp/exe)" = "$OUT/threads" ] && break; sleep 0.01; done
"$TALLY" probes count tally_test:thread -p $tp >"$TMP/tc.out" 2>"$TMP/tc.err" &
tc=$!
for _ in $(seq 1000); do grep -q '^tally: counting' "$TMP/tc.err" && break; sleep 0.01; done
touch "$TMP/go.p"
wait $tp
rc=$?
wait $tc
[ $rc = 0 ] && [ "$(cat "$TMP/threads.out")" = "fired 8000" ] &&
	[ "$(cat "$TMP/tc.out")" = "tally_test:thread 8000" ] && pass count_pid_counts_existing_and_new_threads \
	|| fail count_pid_counts_existing_and_new_threads "rc $rc: $(cat "$TMP/threads.out" "$TMP/tc.out" "$TMP/tc.err" | tr '\n' ' ')"

# --args: decoded from the sampled registers and stack.
out=$("$TALLY" probes count --args 'tally_test:multi' -- "$OUT/multi" 30 2>&1)
grep -qx 'tally_test:multi 120' <<<"$out" &&
	grep -qx '    arg1: 0 (30), 1 (30), 2 (30), 3 (30)' <<<"$out" \
	&& pass count_args_top_values || fail count_args_top_values "$out"
out=$("$TALLY" probes count --args 'tally_test:start' -- "$OUT/fire" 4321 2>&1)
grep -qx '    arg0: 4321 (1)' <<<"$out" && pass count_args_reads_register || fail count_args_reads_register "$out"
# (python:line, not function__entry: CPython 3.11 fires the latter only when its C eval
# loop is entered, which it does for every call only while line tracing is on.)
# fib's calls come in bursts with pauses between them: hits whose arguments find the ring
# full are dropped (and said to be), and a burst as long as the whole workload left fib out
# of the top values whenever tally drained slowly (under ASan, on a busy machine).
cat >"$TMP/paced.py" <<'PY'
import time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
for _ in range(40):
    fib(10)
    time.sleep(0.005)
PY
out=$("$TALLY" probes count --args 'python:line' -- "$PY" "$TMP/paced.py" 2>&1)
grep -qE '^    arg1: "fib" \([0-9]+\)' <<<"$out" && pass count_args_shows_python_function_names \
	|| fail count_args_shows_python_function_names "$out"

# ---- errors ----
expect_err count_no_such_probe 1 "tally: no probe matches 'nosuch:probe'" \
	"$TALLY" probes count nosuch:probe -- "$OUT/fire" 1
expect_err count_binary_without_notes 1 'no USDT probes' "$TALLY" probes count -- /bin/true
expect_err list_not_elf 1 "tally: $TMP/script.py: " "$TALLY" probes list "$TMP/script.py"
expect_err count_pid_without_probes 1 "tally: process $$: no USDT probes" "$TALLY" probes count -p $$
expect_err count_no_such_process 1 'tally: no such process' "$TALLY" probes count -p 999999999
expect_err count_needs_target 2 'count needs either -p PID or -- CMD' "$TALLY" probes count python:line
expect_err count_command_not_found 1 'tally: no-such-command-here: command not found' \
	"$TALLY" probes count -- no-such-command-here
# Hostile notes: a bad operand, a descriptor cut inside its strings, a size past the section.
corrupt() { # OUT PYTHON-EXPRESSION-ON-d (the file's bytes)
	cp "$OUT/fire" "$1"
	python3 -c "
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
note = d.find(b'stapsdt\\0', d.find(b'tally_test') - 200) - 12
$2
open(sys.argv[1], 'wb').write(d)" "$1"
}
corrupt "$TMP/bad_operand" "i = d.find(b'8@%rax'); d[i:i+6] = b'8@%zzz'"
expect_err list_bad_operand_names_note_and_argument 1 \
	"tally: $TMP/bad_operand: stapsdt note at 0x[0-9a-f]*: arg0: cannot parse \"8@%zzz\" as an x86-64 operand" \
	"$TALLY" probes list "$TMP/bad_operand"
corrupt "$TMP/cut_desc" "d[note+4:note+8] = (26).to_bytes(4, 'little')"
expect_err list_truncated_note_is_refused 1 "tally: $TMP/cut_desc: stapsdt note at 0x[0-9a-f]*: descriptor of 26 bytes ends inside" \
	"$TALLY" probes list "$TMP/cut_desc"
corrupt "$TMP/huge_desc" "d[note+4:note+8] = (0x7fffffff).to_bytes(4, 'little')"
expect_err list_note_past_section_is_refused 1 "tally: $TMP/huge_desc: note at 0x[0-9a-f]* runs past" \
	"$TALLY" probes list "$TMP/huge_desc"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	expect_err count_without_privileges_says_what_to_change 1 'needs root or CAP_PERFMON' \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$TALLY" probes count -- "$OUT/fire" 1
else
	skip count_without_privileges_says_what_to_change "needs root and setpriv"
fi
