# Python frames in tally's reports, end to end: tally record of CPython 3.11 (Debian's, its
# layout from python3.11-dbg's DWARF), 3.8, 3.9, 3.10 and 3.12 (pyenv's: their own DWARF)
# and 3.13 (pyenv's: its _Py_DebugOffsets) running workloads of our own whose call structure is known, against
# the interpreter's own account of it (docs/python.md, "Python frames in reports"):
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
#     (sys.setprofile) and steps give, within the sampling error, and the callers of
#     their samples' frames, every one a caller -> callee pair sys.setprofile saw;
# and for 3.11:
#   - sys.setprofile's call counts against the USDT probes, read by bpftrace;
#   - the kind in every output: [python] in the report, _[p] in folded --kinds, the flame
#     graph's Python class, speedscope.
# Each check names its version (3.11's keep their old names); a version missing here is
# skipped with the reason (a failure under CI).
. tests/lib.sh
. tests/python/interpreters.sh

PY=/usr/bin/python3.11
W=$ROOT/tests/python/py
command -v go >/dev/null || { skip python_frames "no go (golang-go)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"

# record PY NAME ARGS...: tally record of PY ARGS into NAME.data, its pprof read by go tool
# pprof into NAME.traces; the workload's output in NAME.out.
record() {
	local py=$1 name=$2
	shift 2
	if ! "$TALLY" record -q -o "$TMP/$name.data" -- "$py" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		! "$TALLY" export -f pprof -o "$TMP/$name.pb.gz" "$TMP/$name.data" 2>>"$TMP/$name.err" ||
		! go tool pprof -traces -lines "$TMP/$name.pb.gz" >"$TMP/$name.traces" 2>>"$TMP/$name.err"; then
		fail "python_frames_record_$name" "$(cat "$TMP/$name.err")"
		return 1
	fi
}

# check_py WHAT NAME TAG: frames_check.py's WHAT check of NAME's recording.
check_py() {
	python3 "$W/frames_check.py" "$1" "$TMP/$2.out" "$TMP/$2.traces" $3 ||
		fail "python_frames_check_$2" "exit $?"
}

# The samples that kept native frames in a churn recording, counted: a small share.
kept_native() {
	local name=$1 tag=$2
	[ -s "$TMP/$name.data" ] || return
	"$TALLY" report "$TMP/$name.data" >"$TMP/$name.report" 2>&1
	awk '/^figures: +samples / {n = $3} /python: stacks (inconsistent|not recorded)|python: code unknown/ {k += $NF}
		END {printf "%d of %d samples kept native frames\n", k, n; exit !(n > 100 && k <= n / 10)}' \
		"$TMP/$name.report" >"$TMP/$name.kept" &&
		pass "python_frames_kept_native_are_few$tag ($(cat "$TMP/$name.kept"))" ||
		fail "python_frames_kept_native_are_few$tag" "$(cat "$TMP/$name.kept") $(head -3 "$TMP/$name.report")"
}

# split_of PY TAG: the split, light's share of the samples in light and heavy against
# calls x steps, and the callers of their samples' frames against the caller -> callee
# pairs, both from sys.setprofile (TAG: "" or "py312"...).
split_of() {
	local py=$1 tag=${2:+_$2} n=$TMP/split${2:+_$2}
	if record "$py" "split${2:+_$2}" "$W/split_work.py" 120 &&
		"$TALLY" report --top 100 "$n.data" >"$n.report" 2>&1; then
		check_py split "split${2:+_$2}" "$2"
		read -r _ _ nl _ nh _ kl kh <"$n.out"
		awk -v nl="$nl" -v nh="$nh" -v kl="$kl" -v kh="$kh" '
			/^Top functions by total/ {t = 1}
			t && $5 == "light" && $6 == "[python]" {l = $4}
			t && $5 == "heavy" && $6 == "[python]" {h = $4}
			END {n = l + h; p = nl * kl / (nl * kl + nh * kh); s = n ? l / n : 0
				e = 3 * sqrt(p * (1 - p) / (n ? n : 1)) + 0.01
				printf "light %.1f%% of %d samples, calls x steps say %.1f%% +- %.1f\n", 100 * s, n, 100 * p, 100 * e
				exit !(n >= 200 && s - p <= e && p - s <= e)}' "$n.report" >"$n.res" &&
			pass "python_frames_split_agrees_with_call_counts$tag ($(cat "$n.res"))" ||
			fail "python_frames_split_agrees_with_call_counts$tag" "$(cat "$n.res") $(cat "$n.out")"
	else
		fail "python_frames_split$tag" "$(cat "$n.out" "$n.report")"
	fi
}

# frames_of PY TAG: the chain, calls, churn and split checks of one interpreter (TAG: "" or
# "py312"), and that tally recorded its Python frames at all.
frames_of() {
	local py=$1 tag=$2 s=${2:+_$2}
	record "$py" "chain$s" "$W/frames_work.py" 1 chain && check_py chain "chain$s" "$tag"
	record "$py" "calls$s" "$W/frames_work.py" 0.4 && check_py calls "calls$s" "$tag"
	record "$py" "churn$s" "$W/churn_work.py" 1.5 && check_py churn "churn$s" "$tag"
	kept_native "churn$s" "$s"
	split_of "$py" "$tag"
}

for_each_python frames_of python_frames ""

# 3.13 without any debug information (its libpython stripped, as distributions ship it):
# the layout from its _Py_DebugOffsets alone, the chain as complete. LD_LIBRARY_PATH wins
# over the executable's RUNPATH, which the maps of the same command confirm.
py=$(ls "$PYENV_VERSIONS"/3.13.*/bin/python3.13 2>/dev/null | head -1)
if [ -n "$py" ]; then
	mkdir "$TMP/lib313"
	objcopy --strip-debug --remove-section .gnu_debuglink --remove-section .note.gnu.build-id \
		"$(dirname "$(dirname "$py")")/lib/libpython3.13.so.1.0" "$TMP/lib313/libpython3.13.so.1.0"
	LD_LIBRARY_PATH=$TMP/lib313 "$py" -c 'print(open("/proc/self/maps").read())' >"$TMP/maps313"
	if readelf -S "$TMP/lib313/libpython3.13.so.1.0" | grep -q debug_info ||
		! grep -q "$TMP/lib313/libpython3.13" "$TMP/maps313"; then
		fail python_frames_py313_stripped "the stripped copy is not what python3.13 maps"
	else
		LD_LIBRARY_PATH=$TMP/lib313 DEBUGINFOD_URLS= record "$py" chain_py313s "$W/frames_work.py" 1 chain &&
			check_py chain chain_py313s py313_without_debug_info
		grep -q warning "$TMP/chain_py313s.err" &&
			fail python_frames_py313_stripped_quiet "$(cat "$TMP/chain_py313s.err")"
	fi
fi
# A debug build (--with-pydebug: Debian's python3.11d, its DWARF inside it, which gives its
# layout; tally's table refuses such builds): the chain as complete.
if [ -x /usr/bin/python3.11d ]; then
	record /usr/bin/python3.11d chain_py311d "$W/frames_work.py" 1 chain &&
		check_py chain chain_py311d py311_debug_build
fi
[ -x $PY ] && [ -d /usr/lib/debug/.build-id ] || exit 0

# The call counts themselves against CPython's USDT probes, read by bpftrace (tally probes
# count misses most function__entry hits of this python3.11: see docs/python.md).
if command -v bpftrace >/dev/null && [ -s "$TMP/split.out" ]; then
	timeout 120 bpftrace -e 'usdt:'$PY':python:function__entry /str(arg1) == "light" || str(arg1) == "heavy"/ { @[str(arg1)] = count(); }' \
		-c "$PY $W/split_work.py 120" >"$TMP/usdt.out" 2>&1
	usdt=$(awk '$1 == "@[light]:" {l = $2} $1 == "@[heavy]:" {h = $2} END {print "light " l " heavy " h}' "$TMP/usdt.out")
	prof=$(awk '$1 == "calls" {print "light " $3 " heavy " $5}' "$TMP/split.out")
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
