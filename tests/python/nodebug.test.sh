# Python frames from interpreters without debug information, as distributions and
# containers ship them: the layout comes from tally's table for the version (docs/python.md;
# tests/cpython/layout.test.sh checks the table against gdb). The same checks as
# frames.test.sh's chain, calls and churn, against the interpreter's own account of its
# stacks:
#   - Debian's python3.11 with nothing leading to python3.11-dbg's file (a copy without its
#     build-id and debuglink);
#   - pyenv's 3.8, 3.9, 3.10, 3.11 and 3.12 run on their libpython stripped of all but the
#     dynamic symbols (strip --strip-all), so that neither DWARF nor .symtab is there (3.8-3.10
#     have no Py_Version either: their version comes from Py_GetVersion's code).
# (3.13 needs no table: frames.test.sh records it stripped.)
. tests/lib.sh

W=$ROOT/tests/python/py
command -v go >/dev/null || { skip python_nodebug "no go (golang-go)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go" DEBUGINFOD_URLS=

# record NAME PYTHON SCRIPT ARGS...: tally record of PYTHON running SCRIPT ARGS into
# NAME.data, tally's warnings in NAME.err, the pprof as go tool pprof reads it in
# NAME.traces, the workload's output in NAME.out.
record() {
	local name=$1 py=$2
	shift 2
	if ! "$TALLY" record -q -o "$TMP/$name.data" -- "$py" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" ||
		! "$TALLY" export -f pprof -o "$TMP/$name.pb.gz" "$TMP/$name.data" 2>>"$TMP/$name.err" ||
		! go tool pprof -traces -lines "$TMP/$name.pb.gz" >"$TMP/$name.traces" 2>>"$TMP/$name.err"; then
		fail "python_nodebug_record_$name" "$(head -3 "$TMP/$name.err")"
		return 1
	fi
	# A layout the table does not give would be a warning and no Python frame.
	if grep -q 'warning' "$TMP/$name.err"; then
		fail "python_nodebug_record_$name" "$(head -3 "$TMP/$name.err")"
		return 1
	fi
}

# renames NAME MODULE SYMBOLS: NAME.renames, the C functions the calls check looks for as
# a stripped MODULE shows them (MODULE!fn_ADDRESS, from its unwind tables), each with its
# name; readelf reads their addresses from SYMBOLS, the same code with its symbol table.
renames() {
	readelf -sW "$3" 2>/dev/null | awk -v m="$2" '$4 == "FUNC" && $2 != "0000000000000000" {
			name = $8; sub(/\.lto_priv\.[0-9]+$/, "", name)
			if (name ~ /^(math_factorial|builtin_sorted|encoder_call|_sre_SRE_Pattern_findall)$/)
				{ a = $2; sub(/^0+/, "", a); printf "%s!fn_%s %s\n", m, a, name }
		}' >"$TMP/$1.renames"
}

# check NAME PYTHON: the chain, calls and churn checks with PYTHON, named after NAME.
check() {
	local name=$1 py=$2 mode
	for mode in chain calls churn; do
		case $mode in
		chain) record "$name.$mode" "$py" "$W/frames_work.py" 1 chain || continue ;;
		calls) record "$name.$mode" "$py" "$W/frames_work.py" 0.4 || continue ;;
		churn) record "$name.$mode" "$py" "$W/churn_work.py" 1.5 || continue ;;
		esac
		python3 "$W/frames_check.py" $mode "$TMP/$name.$mode.out" "$TMP/$name.$mode.traces" \
			"$name" "$TMP/$name.renames" || fail "python_nodebug_check_$name.$mode" "exit $?"
	done
}

if [ -x /usr/bin/python3.11 ]; then
	mkdir -p "$TMP/debian"
	objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink \
		/usr/bin/python3.11 "$TMP/debian/python3.11"
	id=$(readelf -n /usr/bin/python3.11 | awk '/Build ID/ { print $3 }')
	renames py311_debian_without_debug_info python3.11 \
		"/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	check py311_debian_without_debug_info "$TMP/debian/python3.11"
else
	skip python_nodebug_debian "no /usr/bin/python3.11"
fi

# pyenv's 3.8-3.12 on their libpython stripped; tags starting py312 tell the checks of
# 3.12's activations, py38, py39 and py310 of the frame-object versions'.
for v in 3.8 3.9 3.10 3.11 3.12; do
	home=$(ls -d /root/.pyenv/versions/$v.* 2>/dev/null | tail -1)
	tag=py${v/./}_pyenv_stripped
	if [ -z "$home" ]; then
		[ "${CI:-}" = true ] && fail "python_nodebug_$tag" "no pyenv CPython $v (CI)" ||
			skip "python_nodebug_$tag" "no pyenv CPython $v under /root/.pyenv/versions"
		continue
	fi
	lib=libpython$v.so.1.0
	mkdir -p "$TMP/lib$v"
	strip --strip-all -o "$TMP/lib$v/$lib" "$home/lib/$lib"
	# The interpreter runs on the stripped library, which has neither .symtab nor DWARF.
	if readelf -SW "$TMP/lib$v/$lib" | grep -q ' \.\(symtab\|debug_info\) ' ||
		! LD_LIBRARY_PATH=$TMP/lib$v ldd "$home/bin/python$v" | grep -q "=> $TMP/lib$v/$lib "; then
		fail "python_nodebug_$tag" "$(LD_LIBRARY_PATH=$TMP/lib$v ldd "$home/bin/python$v" | grep python)"
		continue
	fi
	renames "$tag" "$lib" "$home/lib/$lib"
	LD_LIBRARY_PATH=$TMP/lib$v check "$tag" "$home/bin/python$v"
done
