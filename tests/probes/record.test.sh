# tally record -e usdt: a sample at every probe hit, unwound by tally's CFI unwinder while
# recording. Oracles: the test program itself (it knows its call paths and how often each
# fires), bpftrace (hits per probe site), perf script (perf reading tally's recording),
# and on CPython bpftrace and tally probes count (hits of python:function__return).
# Recordings are small enough that no test depends on how fast tally drains; and the
# target is stopped whenever its ring is half full, so none may lose a sample anyway.
. tests/lib.sh

OUT=$CORPUS/probes
mkdir -p "$OUT"
PY=/usr/bin/python3.11
SRC=$ROOT/tests/probes/paths.c

build() { # OUT FLAGS...
	local out=$1
	shift
	if [ ! -e "$out" ] || [ "$SRC" -nt "$out" ] || [ "$ROOT/include/tally/trace.h" -nt "$out" ]; then
		gcc -O2 -g -fomit-frame-pointer -pthread "$@" -I"$ROOT/include" "$SRC" -o "$out"
	fi
}
build "$OUT/paths" && build "$OUT/paths_nopie" -no-pie || fail record_build "compiling paths.c"
P=$OUT/paths

# folded FILE: tally's folded stacks, the frames above main (or worker) kept.
folded() {
	"$TALLY" export -f folded "$1" | sed -E 's/^.*;(main|worker);/\1;/'
}
complete() { # FILE: every stack complete
	"$TALLY" report "$1" | grep -Eq '^unwind: +[0-9]+ stacks: 100% complete,'
}

# ---- a command, one thread: two call paths, exact hits on complete stacks ----
"$TALLY" record -e usdt:tally_test:hit -o "$TMP/one.data" -- "$P" 300 200 >"$TMP/one.out" 2>"$TMP/one.err"
rc=$?
want=$'main;run;path_a;path_b 300\nmain;run;path_c 200'
got=$(folded "$TMP/one.data")
[ $rc = 0 ] && [ "$got" = "$want" ] && complete "$TMP/one.data" &&
	"$TALLY" export -f folded "$TMP/one.data" | grep -q '^_start;.*;main;run;path_c 200$' \
	&& pass record_usdt_exact_hits_on_complete_stacks \
	|| fail record_usdt_exact_hits_on_complete_stacks "rc $rc: $got $(cat "$TMP/one.err")"
grep -qx 'tally record: 500 samples, 0 lost, .*' "$TMP/one.err" &&
	grep -qx 'tally record: usdt:tally_test:hit: 500 hits' "$TMP/one.err" \
	&& pass record_usdt_summary_counts_hits || fail record_usdt_summary_counts_hits "$(cat "$TMP/one.err")"
out=$("$TALLY" report "$TMP/one.data")
grep -qE '^ +60\.00% +300 +60\.00% +300 +path_b ' <<<"$out" && grep -qE '^total: +500 hits/count' <<<"$out" \
	&& pass record_usdt_report_weights_hits || fail record_usdt_report_weights_hits "$(head -20 <<<"$out")"

# perf reading the same samples (the chains tally unwound while recording): the same stacks.
if command -v perf >/dev/null; then
	theirs=$(perf script -i "$TMP/one.data" -F ip,sym 2>/dev/null | awk '
		NF == 0 { if (s != "") n[s]++; s = ""; next }
		{ s = (s == "") ? $2 : $2 ";" s }
		END { if (s != "") n[s]++; for (k in n) print k, n[k] }' | sed -E 's/^.*;main;/main;/' | sort)
	[ "$theirs" = "$want" ] && pass record_usdt_perf_script_unwinds_the_same \
		|| fail record_usdt_perf_script_unwinds_the_same "$theirs"
else
	skip record_usdt_perf_script_unwinds_the_same "needs perf"
fi

# bpftrace: hits per probe site (its ustack walks frame pointers, which this build lacks,
# so the site's function is the comparison). A non-PIE build: its sites are link-time
# addresses, which addr2line names.
if command -v bpftrace >/dev/null; then
	bt=$(timeout 300 bpftrace -e "usdt:$OUT/paths_nopie:tally_test:hit { @[reg(\"ip\")] = count(); }" \
		-c "$OUT/paths_nopie 300 200" 2>/dev/null | sed -nE 's/^@\[([0-9]+)\]: ([0-9]+)$/\1 \2/p' |
		while read -r ip n; do echo "$(addr2line -f -e "$OUT/paths_nopie" "$(printf '0x%x' "$ip")" | head -1) $n"; done | sort)
	"$TALLY" record -q -e usdt:tally_test:hit -o "$TMP/np.data" -- "$OUT/paths_nopie" 300 200 >/dev/null 2>&1
	mine=$("$TALLY" export -f folded "$TMP/np.data" | awk '{ n = split($1, f, ";"); print f[n], $2 }' | sort)
	[ -n "$bt" ] && [ "$bt" = "$mine" ] && [ "$mine" = $'path_b 300\npath_c 200' ] \
		&& pass record_usdt_sites_match_bpftrace || fail record_usdt_sites_match_bpftrace "bpftrace '$bt', tally '$mine'"
else
	skip record_usdt_sites_match_bpftrace "needs bpftrace"
fi

# A kernel without ref_ctr support (forced): the semaphore raised through /proc/PID/mem.
TALLY_PROBES_NO_REFCTR=1 "$TALLY" record -e usdt:tally_test:hit -o "$TMP/nr.data" -- "$P" 30 20 >/dev/null 2>"$TMP/nr.err"
got=$(folded "$TMP/nr.data")
[ "$got" = $'main;run;path_a;path_b 30\nmain;run;path_c 20' ] && grep -q 'raising them through /proc/PID/mem' "$TMP/nr.err" \
	&& pass record_usdt_semaphore_by_hand || fail record_usdt_semaphore_by_hand "$got $(cat "$TMP/nr.err")"

# ---- threads: every thread's hits, below worker ----
"$TALLY" record -q -e 'usdt:tally_test:*' -o "$TMP/thr.data" -- "$P" 100 50 4 >"$TMP/thr.out" 2>&1
got=$(folded "$TMP/thr.data")
[ "$got" = $'worker;run;path_a;path_b 400\nworker;run;path_c 200' ] && complete "$TMP/thr.data" \
	&& pass record_usdt_follows_threads || fail record_usdt_follows_threads "$got $(cat "$TMP/thr.out")"

# ---- -p: a running process whose threads wait for GOFILE ----
rm -f "$TMP/go"
"$P" 100 50 2 "$TMP/go" >"$TMP/p.out" 2>&1 &
pid=$!
for _ in $(seq 12000); do [ "$(readlink /proc/$pid/exe)" = "$P" ] && break; sleep 0.01; done
"$TALLY" record -e usdt:tally_test -o "$TMP/p.data" -p $pid >"$TMP/rec.out" 2>"$TMP/rec.err" &
rec=$!
for _ in $(seq 12000); do grep -q '^tally: recording' "$TMP/rec.err" && break; sleep 0.01; done
touch "$TMP/go"
wait $pid
wait $rec
rc=$?
got=$(folded "$TMP/p.data")
[ $rc = 0 ] && [ "$got" = $'worker;run;path_a;path_b 200\nworker;run;path_c 100' ] && complete "$TMP/p.data" \
	&& pass record_usdt_pid_with_threads || fail record_usdt_pid_with_threads "rc $rc: $got $(cat "$TMP/rec.err")"

# ---- CPython: as many samples as hits, as bpftrace and probes count see them ----
cp "$ROOT/tests/probes/workload.py" "$TMP/script.py"
if [ ! -x "$PY" ] || ! command -v bpftrace >/dev/null; then
	skip record_usdt_python_hits_match_bpftrace "needs $PY and bpftrace"
else
	# bpftrace counts the hits of the very process tally records: attached by path to a
	# private copy of the interpreter (no other process runs it), before tally starts it.
	# (A separate bpftrace -c run is no oracle: its python3.11 makes one more codecs
	# setstate call at start-up than one started by tally or by hand.)
	cp "$PY" "$TMP/pyrec"
	timeout 600 bpftrace -e "usdt:$TMP/pyrec:python:function__return { @n = count(); }
		BEGIN { printf(\"ready\\n\"); }" >"$TMP/bt.out" 2>&1 &
	bt=$!
	for _ in $(seq 12000); do grep -q '^ready' "$TMP/bt.out" && break; sleep 0.01; done
	"$TALLY" record -e usdt:python:function__return -o "$TMP/py.data" -- "$TMP/pyrec" "$TMP/script.py" >/dev/null 2>"$TMP/py.err"
	kill -INT $bt
	wait $bt
	samples=$(sed -nE 's/^tally record: ([0-9]+) samples, 0 lost.*/\1/p' "$TMP/py.err")
	hits=$(sed -nE 's/^tally record: usdt:python:function__return: ([0-9]+) hits$/\1/p' "$TMP/py.err")
	theirs=$(sed -nE 's/^@n: ([0-9]+)$/\1/p' "$TMP/bt.out")
	total=$("$TALLY" report "$TMP/py.data" | sed -nE 's/^total: +([0-9]+) .*/\1/p')
	# And tally probes count, on another run of the same command.
	counted=$("$TALLY" probes count python:function__return -- "$TMP/pyrec" "$TMP/script.py" 2>/dev/null |
		awk '$1 == "python:function__return" {print $2}')
	[ -n "$samples" ] && [ "$samples" -gt 1000 ] && [ "$samples" = "$hits" ] && [ "$samples" = "$theirs" ] &&
		[ "$samples" = "$counted" ] && [ "$samples" = "$total" ] && pass record_usdt_python_hits_match_bpftrace \
		|| fail record_usdt_python_hits_match_bpftrace "samples '$samples' hits '$hits' bpftrace '$theirs' probes count '$counted' report '$total': $(cat "$TMP/py.err" "$TMP/bt.out")"
	# Where function__return fires from: inside CPython's eval loop, below main.
	out=$("$TALLY" export -f folded "$TMP/py.data")
	grep -q '^_start;.*;Py_BytesMain;.*;_PyEval_EvalFrameDefault;dtrace_function_return [0-9]*$' <<<"$out" \
		&& pass record_usdt_python_stacks_reach_main || fail record_usdt_python_stacks_reach_main "$(head -3 <<<"$out")"
fi

# ---- probes count --args: a global read at its link-time address plus the load bias ----
out=$("$TALLY" probes count --args tally_test:hit -- "$P" 300 200 2>&1)
grep -qx '    arg1: 0 (167), 1 (167), 2 (166)' <<<"$out" && readelf -n "$P" | grep -q -- '-8@level(%rip)' \
	&& pass count_args_reads_rip_relative_global || fail count_args_reads_rip_relative_global "$out"
out=$("$TALLY" probes count --args tally_test:hit -- "$OUT/paths_nopie" 3 0 2>&1)
grep -qx '    arg1: 0 (1), 1 (1), 2 (1)' <<<"$out" \
	&& pass count_args_reads_global_without_pie || fail count_args_reads_global_without_pie "$out"

# ---- errors ----
expect_err record_usdt_no_such_probe 1 "tally: no probe matches 'nosuch:probe'" \
	"$TALLY" record -e usdt:nosuch:probe -o "$TMP/x.data" -- "$P" 1 1
expect_err record_usdt_binary_without_notes 1 'tally: .*true: no USDT probes' \
	"$TALLY" record -e usdt:a:b -o "$TMP/x.data" -- /bin/true
expect_err record_usdt_refuses_frequency 2 '-F cannot be combined' \
	"$TALLY" record -F 99 -e usdt:tally_test:hit -o "$TMP/x.data" -- "$P" 1 1
expect_err record_usdt_refuses_sampling_event 2 'cycles cannot be combined' \
	"$TALLY" record -e cycles -e usdt:tally_test:hit -o "$TMP/x.data" -- "$P" 1 1
expect_err record_usdt_needs_provider 2 'expected usdt:PROVIDER\[:NAME\]' \
	"$TALLY" record -e usdt: -o "$TMP/x.data" -- "$P" 1 1
expect_err record_usdt_one_process 2 'give one -p PID' \
	"$TALLY" record -e usdt:tally_test:hit -o "$TMP/x.data" -p 1,2
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	nobody=$(mktemp -d /tmp/tally-nobody.XXXXXX)
	chmod 777 "$nobody"
	expect_err record_usdt_without_privileges_says_what_to_change 1 'needs root or CAP_PERFMON' \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TALLY" record -e usdt:tally_test:hit -o "$nobody/x.data" -- "$P" 1 1
	rm -rf "$nobody"
else
	skip record_usdt_without_privileges_says_what_to_change "needs root and setpriv"
fi
