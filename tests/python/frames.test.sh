# Python frames in tally's reports, end to end: tally record of CPython 3.11 running
# workloads of our own whose call structure is known, against the interpreter's own
# account of it (docs/python.md, "Python frames in reports"):
#   - the chain main -> outer -> middle -> inner complete and in order in >= 98% of the
#     samples taken inside it;
#   - C functions called from Python (math.factorial, sorted with a key calling back into
#     Python, json.dumps's C encoder, a compiled pattern's findall) under the Python
#     function and line that called them, names and lines equal to what traceback's
#     walk_stack and each frame's code give at those call sites (frames_work.py prints
#     them), read from tally's pprof by go tool pprof;
#   - frames that change fast (recursion, generators resumed from C, exceptions) in three
#     threads: every sample with Python frames agrees with its native stack;
#   - the split of time between two functions against the share their call counts
#     (sys.setprofile, checked against the USDT probes through bpftrace) and steps give,
#     within the sampling error;
#   - the kind in every output: [python] in the report, _[p] in folded --kinds, the flame
#     graph's Python class, speedscope.
. tests/lib.sh

PY=/usr/bin/python3.11
W=$ROOT/tests/python/py
if ! [ -x $PY ] || ! [ -d /usr/lib/debug/.build-id ]; then
	skip python_frames "no $PY with its debug information (python3.11-dbg)"
	exit 0
fi
command -v go >/dev/null || { skip python_frames "no go (golang-go)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"

# record NAME ARGS...: tally record of python3.11 ARGS into NAME.data, its pprof read by
# go tool pprof into NAME.traces; the workload's output in NAME.out.
record() {
	local name=$1
	shift
	if ! "$TALLY" record -q -o "$TMP/$name.data" -- $PY "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		! "$TALLY" export -f pprof -o "$TMP/$name.pb.gz" "$TMP/$name.data" 2>>"$TMP/$name.err" ||
		! go tool pprof -traces -lines "$TMP/$name.pb.gz" >"$TMP/$name.traces" 2>>"$TMP/$name.err"; then
		fail "python_frames_record_$name" "$(cat "$TMP/$name.err")"
		return 1
	fi
}

check_py() { python3 "$W/frames_check.py" "$@" || fail "python_frames_check_$1" "exit $?"; }

record chain "$W/frames_work.py" 1 chain && check_py chain "$TMP/chain.out" "$TMP/chain.traces"
record calls "$W/frames_work.py" 0.4 && check_py calls "$TMP/calls.out" "$TMP/calls.traces"
record churn "$W/churn_work.py" 1.5 && check_py churn "$TMP/churn.out" "$TMP/churn.traces"

# The samples that kept native frames in the churn, counted: a small share of the whole.
if [ -s "$TMP/churn.data" ]; then
	"$TALLY" report "$TMP/churn.data" >"$TMP/churn.report" 2>&1
	awk '/^figures: +samples / {n = $3} /python: stacks (inconsistent|not recorded)|python: code unknown/ {k += $NF}
		END {printf "%d of %d samples kept native frames\n", k, n; exit !(n > 100 && k <= n / 10)}' \
		"$TMP/churn.report" >"$TMP/churn.kept" &&
		pass "python_frames_kept_native_are_few ($(cat "$TMP/churn.kept"))" ||
		fail python_frames_kept_native_are_few "$(cat "$TMP/churn.kept") $(head -3 "$TMP/churn.report")"
fi

# The split: light's share of the samples in light and heavy against calls x steps.
if "$TALLY" record -q -o "$TMP/split.data" -- $PY "$W/split_work.py" 120 >"$TMP/split.out" 2>&1 &&
	"$TALLY" report --top 100 "$TMP/split.data" >"$TMP/split.report" 2>&1; then
	read -r _ _ nl _ nh _ kl kh <"$TMP/split.out"
	awk -v nl="$nl" -v nh="$nh" -v kl="$kl" -v kh="$kh" '
		/^Top functions by total/ {t = 1}
		t && $5 == "light" && $6 == "[python]" {l = $4}
		t && $5 == "heavy" && $6 == "[python]" {h = $4}
		END {n = l + h; p = nl * kl / (nl * kl + nh * kh); s = n ? l / n : 0
			e = 3 * sqrt(p * (1 - p) / (n ? n : 1)) + 0.01
			printf "light %.1f%% of %d samples, calls x steps say %.1f%% +- %.1f\n", 100 * s, n, 100 * p, 100 * e
			exit !(n >= 200 && s - p <= e && p - s <= e)}' "$TMP/split.report" >"$TMP/split.res" &&
		pass "python_frames_split_agrees_with_call_counts ($(cat "$TMP/split.res"))" ||
		fail python_frames_split_agrees_with_call_counts "$(cat "$TMP/split.res") $(cat "$TMP/split.out")"
else
	fail python_frames_split "$(cat "$TMP/split.out")"
fi

# The call counts themselves against CPython's USDT probes, read by bpftrace (tally probes
# count misses most function__entry hits of this python3.11: see docs/python.md).
if command -v bpftrace >/dev/null && [ -s "$TMP/split.out" ]; then
	timeout 120 bpftrace -e 'usdt:'$PY':python:function__entry /str(arg1) == "light" || str(arg1) == "heavy"/ { @[str(arg1)] = count(); }' \
		-c "$PY $W/split_work.py 120" >"$TMP/usdt.out" 2>&1
	usdt=$(awk '$1 == "@[light]:" {l = $2} $1 == "@[heavy]:" {h = $2} END {print "light " l " heavy " h}' "$TMP/usdt.out")
	prof=$(awk '{print "light " $3 " heavy " $5}' "$TMP/split.out")
	[ "$usdt" = "$prof" ] && pass "python_frames_call_counts_agree_with_usdt ($usdt)" ||
		fail python_frames_call_counts_agree_with_usdt "usdt: $usdt, sys.setprofile: $prof $(tail -3 "$TMP/usdt.out")"
else
	skip python_frames_call_counts_agree_with_usdt "no bpftrace"
fi

# The kind in every output of the same recording.
if [ -s "$TMP/calls.data" ]; then
	"$TALLY" report --top 500 "$TMP/calls.data" >"$TMP/calls.report" 2>&1
	grep -q '^ .*  use_factorial \[python\]  (.*/frames_work.py:[0-9]*)$' "$TMP/calls.report" &&
		grep -q '^python:   [0-9]* stacks with Python frames' "$TMP/calls.report" &&
		pass python_frames_report_kind || fail python_frames_report_kind "$(head -30 "$TMP/calls.report")"
	"$TALLY" export -f folded --kinds "$TMP/calls.data" >"$TMP/calls.folded" 2>&1
	grep -q ';use_factorial_\[p\];.*math_factorial' "$TMP/calls.folded" &&
		pass python_frames_folded_kind || fail python_frames_folded_kind "$(head -3 "$TMP/calls.folded")"
	"$TALLY" flamegraph -o "$TMP/calls.svg" "$TMP/calls.data" 2>"$TMP/svg.err"
	grep -q '<g class="y" data-w="[0-9]*"><title>use_factorial' "$TMP/calls.svg" &&
		grep -q '<g class="legend y">' "$TMP/calls.svg" &&
		pass python_frames_flamegraph_kind || fail python_frames_flamegraph_kind "$(cat "$TMP/svg.err")"
	"$TALLY" export -f speedscope -o "$TMP/calls.json" "$TMP/calls.data" 2>"$TMP/ss.err"
	grep -q '"name":"use_factorial \[python\]","file":"[^"]*frames_work.py","line":[0-9]' "$TMP/calls.json" &&
		pass python_frames_speedscope_kind || fail python_frames_speedscope_kind "$(cat "$TMP/ss.err")"
fi
