# The target's memory is input (docs/python.md, "Bad input"): tally record of a CPython
# process whose structures lie, made so in place by the process itself with ctypes
# (py/lying_work.py), for every version's walk: 3.8-3.10's frame objects, 3.11's
# interpreter frames, 3.12's frames owned by the C stack, 3.13's moved fields (pyenv's
# builds; Debian's python3.11 too when its debug information is there). A code object whose
# name and line table point at something shaped like a str that is not one, and whose file
# points at unmapped memory; a frame chain made a cycle; the list of interpreters made one
# fake interpreter whose next is itself, while a new thread runs. Checked against what the process
# says of itself (py/lying_check.py): tally ends (no hang: a timeout would fail it), nothing
# the lies say is shown, the lied-about frames are marked "[read failed]", the cycle's
# samples counted as read failed with none of its frames, the fake interpreter's thread
# shown with none, and the honest phases' frames named and lined.
. tests/lib.sh

W=$ROOT/tests/python/py
command -v go >/dev/null || { skip python_lying "no go (golang-go)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"

# offsets PY: where _PyRuntimeState has interpreters.head and PyInterpreterState next, and
# the latter's size, as gdb reads them from the DWARF of PY's interpreter (pyenv's
# libpython; Debian's python3.11 by its debug file); nothing without gdb.
offsets() {
	local elf=$1 lib
	lib=$(ls "$(dirname "$(dirname "$1")")"/lib/libpython*.so.1.0 2>/dev/null | head -1)
	[ -n "$lib" ] && elf=$lib
	command -v gdb >/dev/null || return
	timeout 60 gdb -batch -nx -ex 'print (long)&((_PyRuntimeState *)0)->interpreters.head' \
		-ex 'print (long)&((PyInterpreterState *)0)->next' \
		-ex 'print sizeof(PyInterpreterState)' "$elf" 2>/dev/null |
		awk '/^\$[0-9]+ = [0-9]+$/ { n++; printf "%s ", $3 } END { exit n != 3 }'
}

# lying PY TAG: the workload under tally record, its pprof read by go tool pprof, checked.
lying() {
	local py=$1 tag=$2 n=$TMP/$2 offs
	offs=$(offsets "$py") || skip "python_lying_fake_interpreter_$tag" "no gdb, or no DWARF for $py"
	if ! timeout 120 "$TALLY" record -o "$n.data" -- "$py" "$W/lying_work.py" 0.5 $offs \
		>"$n.out" 2>"$n.err" || ! grep -q '^done$' "$n.out" ||
		! "$TALLY" export -f pprof -o "$n.pb.gz" "$n.data" 2>>"$n.err" ||
		! go tool pprof -traces -lines "$n.pb.gz" >"$n.traces" 2>>"$n.err" ||
		! "$TALLY" report "$n.data" >"$n.report" 2>>"$n.err"; then
		fail "python_lying_record_$tag" "$(cat "$n.out" "$n.err")"
		return
	fi
	local failed
	failed=$(awk '/python: stacks read failed/ { print $NF }' "$n.report")
	python3 "$W/lying_check.py" "$n.out" "$n.traces" "${failed:-0}" "$tag" ||
		fail "python_lying_check_$tag" "exit $?"
}

if [ -x /usr/bin/python3.11 ] && [ -d /usr/lib/debug/.build-id ]; then
	lying /usr/bin/python3.11 py311
fi
pyenv_each python_lying _pyenv lying 3.8 3.9 3.10 3.11 3.12 3.13

# A build whose objects' header is longer than a release build's (Py_TRACE_REFS puts two
# list pointers before ob_refcnt): pyenv's 3.13 run on a copy of its library whose
# _Py_DebugOffsets say what such a build's say (pyobject 32 bytes, ob_type at 24; the
# group's place in the block from 3.13's Include/internal/pycore_runtime.h). The interpreter
# never reads that block; tally refuses it by name, records native frames, no Python frame.
py=$(ls "$PYENV_VERSIONS"/3.13.*/bin/python3.13 2>/dev/null | head -1)
if [ -n "$py" ]; then
	mkdir "$TMP/tr"
	lib=$TMP/tr/libpython3.13.so.1.0
	cp "$(dirname "$(dirname "$py")")/lib/libpython3.13.so.1.0" "$lib"
	printf '\x20\0\0\0\0\0\0\0\x18' | dd of="$lib" bs=1 conv=notrunc 2>/dev/null \
		seek=$(($(elf_symbol_offset "$lib" _PyRuntime) + 352))
	LD_LIBRARY_PATH=$TMP/tr "$TALLY" record -q -o "$TMP/tr.data" -- "$py" -c 'sum(range(10**6))' \
		>/dev/null 2>"$TMP/tr.err"
	rc=$?
	"$TALLY" report "$TMP/tr.data" >"$TMP/tr.report" 2>&1
	[ $rc = 0 ] && [ "$(wc -l <"$TMP/tr.err")" = 1 ] &&
		grep -q "warning: process [0-9]* (.*/tr/libpython3.13.so.1.0): its objects' header is longer than a release build's (a build with Py_TRACE_REFS, --with-trace-refs), which tally's BPF program does not read; recording its native frames only" "$TMP/tr.err" &&
		! grep -q '\[python\]' "$TMP/tr.report" &&
		pass python_lying_trace_refs_build_is_refused_by_name ||
		fail python_lying_trace_refs_build_is_refused_by_name "exit $rc: $(cat "$TMP/tr.err")"
fi
