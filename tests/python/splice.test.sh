# Python frames spliced into native stacks (the replay side, src/replay/sources/python/source.c),
# on recordings splice.py writes with known native and Python stacks: the runs of Python
# frames in place of each _PyEval_EvalFrameDefault activation, in order, native frames
# around them; names and lines against CPython's own co_lines() and go tool pprof's reading
# of tally's pprof; disagreements, unknown code, the match rule, cut and truncated stacks,
# exec and hostile payloads counted in the quality figures.
. tests/lib.sh

PY=/usr/bin/python3.11
[ -x "$PY" ] || { skip python_splice "no $PY"; exit 0; }
command -v go >/dev/null || { skip python_splice "no go (golang-go)"; exit 0; }
id=$(readelf -n "$PY" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
debug=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -f "$debug" ] || { skip python_splice "no debug file for $PY (python3.11-dbg)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"
"$PY" tests/python/splice.py "$TALLY" "$TMP" "$PY" "$debug" || fail python_splice "splice.py exited $?"
