# CPython 3.11's layout from the interpreter's debug information, field by field against
# gdb reading the same debug information (offsets, sizes, bit-fields, addresses) and
# readelf (symbol sizes); and the refusals: no debug information, another version, a
# module that is not the interpreter.
. tests/lib.sh
. tests/cpython/driver.sh
cpy_check_build cpython_layout_builds

# The separate debug file by build-id, as gdb finds it (else the ELF holds its own).
debug_file() {
	local id
	id=$(readelf -n "$1" | awk '/Build ID/ { print $3 }')
	local f=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -f "$f" ] && echo "$f" || echo "$1"
}

# oracle ELF NAMES_FILE: "name value" for each name, from gdb and readelf.
oracle() {
	local elf=$1 dbg name type path
	dbg=$(debug_file "$elf")
	: >"$TMP/gdb.cmds"
	while read -r name; do
		case $name in
		version_hex) echo "printf \"$name %lu\\n\", (unsigned long)Py_Version" ;;
		runtime_addr) echo "printf \"$name %lu\\n\", (unsigned long)&_PyRuntime" ;;
		code_type_addr) echo "printf \"$name %lu\\n\", (unsigned long)&PyCode_Type" ;;
		eval_*) ;;
		sizeof.*) echo "printf \"$name %lu\\n\", (unsigned long)sizeof(${name#sizeof.})" ;;
		*.bit | *.bits) ;;
		*) type=${name%%.*} path=${name#*.}
		   echo "printf \"$name %lu\\n\", (unsigned long)&(($type *)0)->$path" ;;
		esac
	done <"$2" >"$TMP/gdb.cmds"
	gdb -batch -nx -x "$TMP/gdb.cmds" "$elf" 2>"$TMP/gdb.err"
	# "/*     32: 2   |       4 */        unsigned int kind : 3;": byte 32, bit 2, 3 bits
	gdb -batch -nx -ex 'ptype /o PyASCIIObject' "$elf" 2>/dev/null |
		sed -n 's|^/\* *\([0-9]*\): *\([0-9]*\) *[|] *[0-9]* \*/ *unsigned int \([a-z]*\) : \([0-9]*\);.*|\1 \2 \3 \4|p' |
		while read -r byte bit field bits; do
			echo "PyASCIIObject.state.$field.bit $((byte * 8 + bit))"
			echo "PyASCIIObject.state.$field.bits $bits"
		done
	local lo=0 hi=0 clo=0 chi=0 value size sym
	while read -r value size sym; do
		if [ "$sym" = _PyEval_EvalFrameDefault ] && [ $lo = 0 ]; then
			lo=$((16#$value)) hi=$((16#$value + size))
		elif [ "$sym" = _PyEval_EvalFrameDefault.cold ] && [ $clo = 0 ]; then
			clo=$((16#$value)) chi=$((16#$value + size))
		fi
	done < <({ readelf -sW "$elf"; [ "$dbg" != "$elf" ] && readelf -sW "$dbg"; } |
		 awk '$8 ~ /^_PyEval_EvalFrameDefault/ { print $2, $3, $8 }')
	printf 'eval_lo %d\neval_hi %d\neval_cold_lo %d\neval_cold_hi %d\n' $lo $hi $clo $chi
}

# agrees_with_gdb NAME ELF: every field tally reads equals gdb's (and readelf's) answer.
agrees_with_gdb() {
	local name=$1 elf=$2
	if ! "$TMP/cpy_check" layout "$elf" >"$TMP/got" 2>"$TMP/err"; then
		fail "$name" "$(cat "$TMP/err")"
		return
	fi
	awk '{ print $1 }' "$TMP/got" >"$TMP/names"
	oracle "$elf" "$TMP/names" | awk 'NR == FNR { asked[$1] = 1; next } $1 in asked' \
		"$TMP/names" - | sort -u >"$TMP/want"
	sort "$TMP/got" >"$TMP/got.sorted"
	local nwant ngot
	nwant=$(wc -l <"$TMP/want") ngot=$(wc -l <"$TMP/got")
	if [ "$nwant" -ne "$ngot" ]; then
		fail "$name" "gdb answered $nwant of $ngot fields: $(head -3 "$TMP/gdb.err")"
	elif cmp -s "$TMP/want" "$TMP/got.sorted"; then
		pass "$name"
	else
		fail "$name" "$(diff "$TMP/want" "$TMP/got.sorted" | head -8)"
	fi
}

if [ ! -x "$PY311" ] || ! command -v gdb >/dev/null; then
	skip cpython_layout_matches_gdb "needs $PY311 (python3.11-dbg) and gdb"
	exit 0
fi

# Debian's interpreter: stripped, its DWARF 5 (LTO, compressed) in python3.11-dbg's file.
agrees_with_gdb layout_of_debian_python311_matches_gdb "$PY311"
# The debug build of the same package, with its own debug information.
[ -x /usr/bin/python3.11-dbg ] &&
	agrees_with_gdb layout_of_python311_debug_build_matches_gdb /usr/bin/python3.11-dbg

# An interpreter linked against libpython3.11.so: the library is the module that holds
# _PyRuntime; the executable is refused as not the interpreter.
for lib in /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 /root/.pyenv/versions/3.11.*/lib/libpython3.11.so.1.0; do
	[ -f "$lib" ] || continue
	agrees_with_gdb "layout_of_libpython311_matches_gdb($lib)" "$lib"
done
exe=$(ls /root/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | head -1)
[ -n "$exe" ] && expect_err executable_linked_against_libpython_is_not_the_interpreter 1 \
	"$exe: not a CPython interpreter (it does not define _PyRuntime)" "$TMP/cpy_check" layout "$exe"
expect_err module_without_pyruntime_is_not_the_interpreter 1 \
	"/bin/true: not a CPython interpreter (it does not define _PyRuntime)" \
	"$TMP/cpy_check" layout /bin/true

# No debug information: Debian's interpreter without its build-id and debuglink (so
# nothing leads to python3.11-dbg's file) says what to install.
objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink "$PY311" "$TMP/python3.11"
DEBUGINFOD_URLS= expect_err no_debug_info_says_what_to_install 1 \
	"$TMP/python3.11: no debug information for CPython's structures; install .*python3.11-dbg" \
	"$TMP/cpy_check" layout "$TMP/python3.11"

# The debug file by build-id under a debug directory given by the caller: an interpreter
# with its own DWARF (python3.11-dbg's, or pyenv's libpython) stripped of it, its debug
# file only there.
for own in /usr/bin/python3.11-dbg /root/.pyenv/versions/3.11.*/lib/libpython3.11.so.1.0; do
	[ -f "$own" ] || continue
	id=$(readelf -n "$own" | awk '/Build ID/ { print $3 }')
	[ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] && continue
	mkdir -p "$TMP/dbg/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$own" "$TMP/dbg/.build-id/${id:0:2}/${id:2}.debug"
	objcopy --strip-debug --remove-section .gnu_debuglink "$own" "$TMP/stripped"
	"$TMP/cpy_check" layout "$own" >"$TMP/own" 2>&1
	"$TMP/cpy_check" layout "$TMP/stripped" "$TMP/dbg" >"$TMP/byid" 2>&1
	cmp -s "$TMP/own" "$TMP/byid" && grep -q '^PyThreadState.cframe ' "$TMP/byid" &&
		pass debug_file_by_build_id_under_debug_dir_gives_the_same_layout ||
		fail debug_file_by_build_id_under_debug_dir_gives_the_same_layout "$(diff "$TMP/own" "$TMP/byid" | head -4)"
	DEBUGINFOD_URLS= expect_err stripped_interpreter_without_debug_file_says_what_to_install 1 \
		"$TMP/stripped: no debug information for CPython's structures (build-id $id); install" \
		"$TMP/cpy_check" layout "$TMP/stripped"
	break
done

# Another version: refused by name, the version as the interpreter itself reports it.
# Always: Debian's interpreter with its Py_Version made 3.12.1's.
off=$(readelf -sW "$PY311" | awk '$8 == "Py_Version" { print $2; exit }')
fileoff=
while read -r o v s; do
	if [ $((0x$off)) -ge $((v)) ] && [ $((0x$off)) -lt $((v + s)) ]; then
		fileoff=$((0x$off - v + o))
		break
	fi
done < <(readelf -lW "$PY311" | awk '$1 == "LOAD" { print $2, $3, $5 }')
cp "$PY311" "$TMP/python3.12"
printf '\xf0\x01\x0c\x03' | dd of="$TMP/python3.12" bs=1 seek="$fileoff" conv=notrunc 2>/dev/null
expect_err other_version_is_refused_naming_it 1 \
	"$TMP/python3.12: CPython 3.12 (Py_Version 0x030c01f0); only CPython 3.11's frames are understood" \
	"$TMP/cpy_check" layout "$TMP/python3.12"
# The other versions installed here (pyenv), each refused with the version it reports.
for lib in /root/.pyenv/versions/*/lib/libpython3.*.so.1.0; do
	[ -f "$lib" ] || continue
	v=$(basename "$lib" .so.1.0) v=${v#libpython} v=${v%m}
	[ "$v" = 3.11 ] && continue
	py=$(dirname "$(dirname "$lib")")/bin/python$v
	hex=$(LD_LIBRARY_PATH=$(dirname "$lib") "$py" -c 'import sys; print("0x%08x" % sys.hexversion)')
	if [ "${v#*.}" -lt 7 ]; then
		pat="$lib: a CPython older than 3.7 (it has no _PyRuntime)"
	elif [ "${v#*.}" -lt 11 ]; then
		pat="$lib: a CPython older than 3.11 (it has no Py_Version)"
	else
		pat="$lib: CPython $v (Py_Version $hex); only CPython 3.11"
	fi
	expect_err "python_${v}_is_refused_naming_its_version" 1 "$pat" "$TMP/cpy_check" layout "$lib"
done

# The check callers make on every mapped module: the module exports _PyRuntime, as
# readelf sees its dynamic symbols.
modules=$(ls "$PY311" /usr/bin/python3.11-dbg /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 \
	/root/.pyenv/versions/*/lib/libpython3.*.so.1.0 /root/.pyenv/versions/3.11.*/bin/python3.11 \
	/lib/x86_64-linux-gnu/libc.so.6 /bin/true 2>/dev/null)
for m in $modules; do
	readelf --dyn-syms -W "$m" | awk -v m="$m" '$8 == "_PyRuntime" && $7 != "UND" { found = 1 }
		END { print m, found ? "yes" : "no" }'
done >"$TMP/is.want"
# shellcheck disable=SC2086
"$TMP/cpy_check" is $modules >"$TMP/is.got" 2>&1
grep -q ' yes$' "$TMP/is.want" && grep -q ' no$' "$TMP/is.want" && cmp -s "$TMP/is.want" "$TMP/is.got" &&
	pass is_interpreter_agrees_with_readelf ||
	fail is_interpreter_agrees_with_readelf "$(diff "$TMP/is.want" "$TMP/is.got" | head -4)"
