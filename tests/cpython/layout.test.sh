# CPython's layout, field by field against gdb reading the interpreter's debug information
# (offsets, sizes, bit-fields, addresses) and readelf (symbol sizes): 3.11's and 3.12's read
# from that same debug information, 3.13's from its _Py_DebugOffsets (and facts of ours),
# so that gdb checks those member by member; 3.13 stripped of its debug information gives
# the same layout; and the refusals: no debug information, another version, a module that
# is not the interpreter, a 3.13 whose _Py_DebugOffsets lie.
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

# oracle ELF NAMES_FILE: "name value" for each name, from gdb and readelf. The version:
# Py_Version as gdb reads it, or before 3.11 (none) $HEXVER, sys.hexversion as the
# interpreter itself says; the variant and line-table format follow from it (layout.h).
oracle() {
	local elf=$1 dbg name type path hex minor
	dbg=$(debug_file "$elf")
	hex=${HEXVER:-$(gdb -batch -nx -ex 'printf "%lu\n", (unsigned long)Py_Version' "$elf" 2>/dev/null)}
	minor=$(((hex >> 16) & 255))
	echo "version_hex $((hex))"
	echo "variant $((minor >= 11 ? minor - 10 : minor - 4))"
	echo "linetable_format $((minor >= 11 ? 0 : minor == 10 ? 2 : 1))"
	: >"$TMP/gdb.cmds"
	while read -r name; do
		case $name in
		variant | version_hex | linetable_format) ;;
		runtime_addr) echo "printf \"$name %lu\\n\", (unsigned long)&_PyRuntime" ;;
		code_type_addr) echo "printf \"$name %lu\\n\", (unsigned long)&PyCode_Type" ;;
		eval_*) ;;
		sizeof.*) echo "printf \"$name %lu\\n\", (unsigned long)sizeof(${name#sizeof.})" ;;
		*.bit | *.bits) ;;
		*) type=${name%%.*} path=${name#*.}
		   # a struct with no typedef of its own
		   [ "$type" = _gil_runtime_state ] && type="struct $type"
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

# agrees_with_gdb NAME ELF [table]: every field tally reads equals gdb's (and readelf's)
# answer. With "table", tally's own table is read as if ELF had no debug information: the
# .cold part's range, which only the debug file's symbols give, is left out.
agrees_with_gdb() {
	local name=$1 elf=$2 mode=${3:-layout}
	if ! "$TMP/cpy_check" "$mode" "$elf" >"$TMP/got.all" 2>"$TMP/err"; then
		fail "$name" "$(cat "$TMP/err")"
		return
	fi
	if [ "$mode" = table ] && ! grep -qx 'source table' "$TMP/got.all"; then
		fail "$name" "the layout did not come from the table: $(tail -1 "$TMP/got.all")"
		return
	fi
	grep -v '^source \|^eval_cold_' "$TMP/got.all" >"$TMP/got"
	[ "$mode" = table ] || cp "$TMP/got.all" "$TMP/got"
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
# Tally's table for 3.11, as an interpreter without debug information would be read:
# Debian's release build and pyenv's (below) give gdb's offsets too.
agrees_with_gdb table_for_debian_python311_matches_gdb "$PY311" table
# The debug build of the same package, with its own debug information.
[ -x /usr/bin/python3.11-dbg ] &&
	agrees_with_gdb layout_of_python311_debug_build_matches_gdb /usr/bin/python3.11-dbg

# An interpreter linked against libpython3.11.so: the library is the module that holds
# _PyRuntime; the executable is refused as not the interpreter.
for lib in /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 /root/.pyenv/versions/3.11.*/lib/libpython3.11.so.1.0; do
	[ -f "$lib" ] || continue
	agrees_with_gdb "layout_of_libpython311_matches_gdb($lib)" "$lib"
	agrees_with_gdb "table_for_libpython311_matches_gdb($lib)" "$lib" table
done
exe=$(ls /root/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | head -1)
[ -n "$exe" ] && expect_err executable_linked_against_libpython_is_not_the_interpreter 1 \
	"$exe: not a CPython interpreter (it does not define _PyRuntime)" "$TMP/cpy_check" layout "$exe"
expect_err module_without_pyruntime_is_not_the_interpreter 1 \
	"/bin/true: not a CPython interpreter (it does not define _PyRuntime)" \
	"$TMP/cpy_check" layout /bin/true

# No debug information: Debian's interpreter without its build-id and debuglink (so
# nothing leads to python3.11-dbg's file) is read by the table, gdb's offsets above.
objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink "$PY311" "$TMP/python3.11"
"$TMP/cpy_check" table "$PY311" | grep -v '^source ' >"$TMP/table.want"
DEBUGINFOD_URLS= "$TMP/cpy_check" layout "$TMP/python3.11" >"$TMP/nodebug" 2>&1 &&
	grep -q '^PyThreadState.cframe 56$' "$TMP/nodebug" && cmp -s "$TMP/table.want" "$TMP/nodebug" &&
	pass no_debug_info_layout_from_the_table ||
	fail no_debug_info_layout_from_the_table "$(diff "$TMP/table.want" "$TMP/nodebug" | head -4)"
# A build whose objects are not the table's sizes (here PyCode_Type's basic size made
# 192): refused, saying which type disagrees and what to install.
cp "$TMP/python3.11" "$TMP/python3.11-other"
printf '\xc0' | dd of="$TMP/python3.11-other" bs=1 seek=$(($(elf_symbol_offset "$PY311" PyCode_Type) + 32)) \
	conv=notrunc 2>/dev/null
DEBUGINFOD_URLS= expect_err table_refuses_a_build_of_other_sizes 1 \
	"$TMP/python3.11-other: no debug information for CPython's structures, and tally's table for its version does not fit it (its PyCode_Type gives objects of 192 bytes, not 184); install .*python3.11-dbg" \
	"$TMP/cpy_check" layout "$TMP/python3.11-other"

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
	[ "$own" = /usr/bin/python3.11-dbg ] && table="a debug build: it defines _Py_RefTotal" ||
		table=".*"
	DEBUGINFOD_URLS= expect_err stripped_interpreter_without_debug_file_says_what_to_install 1 \
		"$TMP/stripped: no debug information for CPython's structures (build-id $id), and tally's table for its version does not fit it ($table); install" \
		"$TMP/cpy_check" layout "$TMP/stripped"
	break
done

# Another version: refused by name, the version as the interpreter itself reports it.
# Always: Debian's interpreter with its Py_Version made 3.14.0's.
cp "$PY311" "$TMP/python3.14"
printf '\xf0\x00\x0e\x03' | dd of="$TMP/python3.14" bs=1 seek="$(elf_symbol_offset "$PY311" Py_Version)" \
	conv=notrunc 2>/dev/null
expect_err other_version_is_refused_naming_it 1 \
	"$TMP/python3.14: CPython 3.14 (Py_Version 0x030e00f0); only CPython 3.8 to 3.13's frames are understood" \
	"$TMP/cpy_check" layout "$TMP/python3.14"
# Before 3.11 the version is PY_VERSION, whose address Py_GetVersion() loads: by a lea in a
# position-independent build, by a mov of an absolute address in one linked without -pie.
# Both read from a stand-in built here (tests/cpython/src/fake_getversion.c): a 3.7 refused
# by name, a 3.9 release candidate taken as 3.9 (then refused for what it lacks, naming
# 3.9's debug package).
for pie in "-fpie -pie" "-fno-pie -no-pie"; do
	tag=$([ "$pie" = "-fpie -pie" ] && echo pie || echo no_pie)
	cc -O2 $pie -DVERSION='"3.7.2"' -o "$TMP/fake37_$tag" "$ROOT/tests/cpython/src/fake_getversion.c" &&
	cc -O2 $pie -DVERSION='"3.9.0rc2"' -o "$TMP/fake39_$tag" "$ROOT/tests/cpython/src/fake_getversion.c" ||
		{ fail "version_read_from_py_getversion_$tag" "cc failed"; continue; }
	expect_err "python37_version_read_from_py_getversion_$tag" 1 \
		"fake37_$tag: CPython 3.7 (PY_VERSION 0x030702f0); only CPython 3.8 to 3.13" \
		"$TMP/cpy_check" layout "$TMP/fake37_$tag"
	DEBUGINFOD_URLS= expect_err "python39rc_version_read_from_py_getversion_$tag" 1 \
		"fake39_$tag: no debug information for CPython's structures.*install .*python3.9-dbg" \
		"$TMP/cpy_check" layout "$TMP/fake39_$tag"
done

# The other versions installed here (pyenv), each refused with the version it reports.
for lib in /root/.pyenv/versions/*/lib/libpython3.*.so.1.0; do
	[ -f "$lib" ] || continue
	v=$(basename "$lib" .so.1.0) v=${v#libpython} v=${v%m}
	case $v in 3.8 | 3.9 | 3.1[0-3]) continue ;; esac
	py=$(dirname "$(dirname "$lib")")/bin/python$v
	hex=$(LD_LIBRARY_PATH=$(dirname "$lib") "$py" -c 'import sys; print("0x%08x" % sys.hexversion)')
	if [ "${v#*.}" -lt 7 ]; then
		pat="$lib: a CPython older than 3.7 (it has no _PyRuntime)"
	elif [ "${v#*.}" -lt 11 ]; then
		pat="$lib: CPython $v (PY_VERSION $hex); only CPython 3.8 to 3.13"
	else
		pat="$lib: CPython $v (Py_Version $hex); only CPython 3.8 to 3.13"
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

# pyenv's 3.12 and 3.13 (shared libpython with its own DWARF): gdb checks every field of
# 3.12's layout (read from that DWARF) and of 3.13's (read from its _Py_DebugOffsets,
# member by member against what gdb says of the same members).
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
for v in 3.12 3.13; do
	lib=$(ls "$PYENV"/$v.*/lib/libpython$v.so.1.0 2>/dev/null | head -1)
	if [ -z "$lib" ]; then
		skip "layout_of_python${v/./}_matches_gdb" "no pyenv CPython $v under $PYENV"
		continue
	fi
	agrees_with_gdb "layout_of_python${v/./}_matches_gdb" "$lib"
	[ $v = 3.12 ] && agrees_with_gdb table_for_python312_matches_gdb "$lib" table
done
# 3.12 keeps no offsets of its own: stripped, its layout comes from tally's table, the one
# gdb agreed with; with its PyUnicode_Type's basic size changed, the table does not fit
# and it is refused saying why and what to install.
lib=$(ls "$PYENV"/3.12.*/lib/libpython3.12.so.1.0 2>/dev/null | head -1)
if [ -n "$lib" ]; then
	objcopy --strip-debug --remove-section .gnu_debuglink --remove-section .note.gnu.build-id \
		"$lib" "$TMP/libpython3.12.so"
	"$TMP/cpy_check" table "$lib" | grep -v '^source ' | grep -v '^eval_cold_' >"$TMP/table312.want"
	DEBUGINFOD_URLS= "$TMP/cpy_check" layout "$TMP/libpython3.12.so" 2>&1 | grep -v '^eval_cold_' >"$TMP/nodebug312"
	grep -q '^PyThreadState.native_thread_id 144$' "$TMP/nodebug312" &&
		cmp -s "$TMP/table312.want" "$TMP/nodebug312" &&
		pass python312_without_debug_info_layout_from_the_table ||
		fail python312_without_debug_info_layout_from_the_table "$(diff "$TMP/table312.want" "$TMP/nodebug312" | head -4)"
	printf '\x48' | dd of="$TMP/libpython3.12.so" bs=1 conv=notrunc 2>/dev/null \
		seek=$(($(elf_symbol_offset "$lib" PyUnicode_Type) + 32))
	DEBUGINFOD_URLS= expect_err python312_of_other_sizes_says_what_to_install 1 \
		"libpython3.12.so: no debug information for CPython's structures, and tally's table for its version does not fit it (its PyUnicode_Type gives objects of 72 bytes, not 64); install .*python3.12-dbg" \
		"$TMP/cpy_check" layout "$TMP/libpython3.12.so"
fi
# pyenv's 3.8, 3.9 and 3.10 (frame objects; no Py_Version, their version read from the
# PY_VERSION that Py_GetVersion formats): the layout from their DWARF and tally's table for
# each, field by field against gdb, the version against the interpreter's sys.hexversion;
# stripped of all debug information, the layout comes from the table; a copy whose
# PY_VERSION does not read as a version is refused saying so.
for v in 3.8 3.9 3.10; do
	name=python${v/./}
	lib=$(ls "$PYENV"/$v.*/lib/libpython$v.so.1.0 2>/dev/null | head -1)
	if [ -z "$lib" ]; then
		[ "${CI:-}" = true ] && fail "layout_of_${name}_matches_gdb" "no pyenv CPython $v under $PYENV (CI)" ||
			skip "layout_of_${name}_matches_gdb" "no pyenv CPython $v under $PYENV"
		continue
	fi
	py=$(dirname "$(dirname "$lib")")/bin/python$v
	HEXVER=$(LD_LIBRARY_PATH=$(dirname "$lib") "$py" -c 'import sys; print(sys.hexversion)')
	export HEXVER
	agrees_with_gdb "layout_of_${name}_matches_gdb" "$lib"
	agrees_with_gdb "table_for_${name}_matches_gdb" "$lib" table
	unset HEXVER
	objcopy --strip-debug --remove-section .gnu_debuglink --remove-section .note.gnu.build-id \
		"$lib" "$TMP/lib$name.so"
	"$TMP/cpy_check" table "$lib" | grep -v '^source \|^eval_cold_' >"$TMP/table$name.want"
	DEBUGINFOD_URLS= "$TMP/cpy_check" layout "$TMP/lib$name.so" 2>&1 | grep -v '^eval_cold_' >"$TMP/nodebug$name"
	! readelf -S "$TMP/lib$name.so" | grep -q debug_info && grep -q '^PyFrameObject.f_lasti ' "$TMP/nodebug$name" &&
		cmp -s "$TMP/table$name.want" "$TMP/nodebug$name" &&
		pass "${name}_without_debug_info_layout_from_the_table" ||
		fail "${name}_without_debug_info_layout_from_the_table" "$(diff "$TMP/table$name.want" "$TMP/nodebug$name" | head -4)"
	# Its PyCode_Type's basic size made 184: the table does not fit, refused saying why.
	printf '\xb8' | dd of="$TMP/lib$name.so" bs=1 conv=notrunc 2>/dev/null \
		seek=$(($(elf_symbol_offset "$lib" PyCode_Type) + 32))
	DEBUGINFOD_URLS= expect_err "${name}_of_other_sizes_says_what_to_install" 1 \
		"lib$name.so: no debug information for CPython's structures, and tally's table for its version does not fit it (its PyCode_Type gives objects of 184 bytes, not 176); install .*python$v-dbg" \
		"$TMP/cpy_check" layout "$TMP/lib$name.so"
done
# The version string's first digit made an "x": no version to read, refused saying so.
lib=$(ls "$PYENV"/3.10.*/lib/libpython3.10.so.1.0 2>/dev/null | head -1)
if [ -n "$lib" ]; then
	cp "$lib" "$TMP/noversion.so"
	offs=$(grep -abo '3\.10\.[0-9]*' "$lib" | cut -d: -f1)
	for off in $offs; do
		printf 'x' | dd of="$TMP/noversion.so" bs=1 seek="$off" conv=notrunc 2>/dev/null
	done
	if [ -z "$offs" ]; then
		fail python310_without_a_readable_version_is_refused "no \"3.10.N\" in $lib"
	else
		expect_err python310_without_a_readable_version_is_refused 1 \
			"noversion.so: a CPython older than 3.11 (it has no Py_Version) whose version could not be read from Py_GetVersion; only CPython 3.8 to 3.13" \
			"$TMP/cpy_check" layout "$TMP/noversion.so"
	fi
fi

lib=$(ls "$PYENV"/3.13.*/lib/libpython3.13.so.1.0 2>/dev/null | head -1)
[ -n "$lib" ] || { skip python313_debug_offsets "no pyenv CPython 3.13 under $PYENV"; exit 0; }

# 3.13's layout from _Py_DebugOffsets is the one its DWARF gives, field by field; and a
# copy stripped of all debug information (nothing to find a debug file by) gives it too.
"$TMP/cpy_check" layout "$lib" >"$TMP/offs" 2>&1
"$TMP/cpy_check" layout-dwarf "$lib" >"$TMP/dwarf" 2>&1
n=$(grep -c '^[_A-Za-z]*\.' "$TMP/offs")
[ "$n" -ge 30 ] && cmp -s "$TMP/offs" "$TMP/dwarf" &&
	pass "python313_debug_offsets_agree_with_its_dwarf ($n fields)" ||
	fail python313_debug_offsets_agree_with_its_dwarf "$(diff "$TMP/offs" "$TMP/dwarf" | head -6)"
objcopy --strip-debug --remove-section .gnu_debuglink --remove-section .note.gnu.build-id \
	"$lib" "$TMP/libpython3.13.so"
DEBUGINFOD_URLS= "$TMP/cpy_check" layout "$TMP/libpython3.13.so" >"$TMP/stripped" 2>&1
! readelf -S "$TMP/libpython3.13.so" | grep -q debug_info &&
	cmp -s "$TMP/offs" "$TMP/stripped" && pass python313_without_debug_info_gives_the_same_layout ||
	fail python313_without_debug_info_gives_the_same_layout "$(diff "$TMP/offs" "$TMP/stripped" | head -4)"
DEBUGINFOD_URLS= expect_err python313_layout_dwarf_without_debug_info_says_what_to_install 1 \
	"no debug information for CPython's structures, and tally's table for its version does not fit it (no entry for CPython 3.13); install .*python3.13-dbg" \
	"$TMP/cpy_check" layout-dwarf "$TMP/libpython3.13.so"

# A 3.13 whose _Py_DebugOffsets lie is refused with what is wrong: _PyRuntime's file
# offset from its symbol and the section that holds it.
rt=$(readelf -sW --dyn-syms "$lib" | awk '$8 == "_PyRuntime" { print $2; exit }')
read -r secaddr secoff < <(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\]//' |
	awk '$1 == ".PyRuntime" { print $3, $4 }')
at=$((0x$rt - 0x$secaddr + 0x$secoff))
# patch NAME OFFSET BYTES: a copy of the library with BYTES (printf escapes) at _PyRuntime +
# OFFSET.
patch() {
	cp "$lib" "$TMP/$1.so"
	printf "$3" | dd of="$TMP/$1.so" bs=1 seek=$((at + $2)) conv=notrunc 2>/dev/null
}
patch cookie 0 'ydebugpy'
expect_err python313_bad_debug_cookie_is_refused 1 \
	"cookie.so: _PyRuntime does not begin with _Py_DebugOffsets (no \"xdebugpy\" cookie)" \
	"$TMP/cpy_check" layout "$TMP/cookie.so"
patch version 8 '\xf0\x00\x0c\x03'
expect_err python313_debug_offsets_of_another_version_are_refused 1 \
	"version.so: _Py_DebugOffsets is of another version than Py_Version (0x30c00f0)" \
	"$TMP/cpy_check" layout "$TMP/version.so"
patch ft 16 '\x01'
expect_err python313_free_threaded_is_refused_naming_it 1 \
	"ft.so: CPython 3.13 built free-threaded (Py_GIL_DISABLED), whose frames tally does not read" \
	"$TMP/cpy_check" layout "$TMP/ft.so"
# thread_state.current_frame (the 5th of its group, at 184) past thread_state's size.
patch frame 184 '\x00\x00\x00\x01'
expect_err python313_offset_outside_its_structure_is_refused 1 \
	"frame.so: _Py_DebugOffsets puts a field outside its structure: thread_state.current_frame (0x1000000)" \
	"$TMP/cpy_check" layout "$TMP/frame.so"
# thread_state.size (at 152) implausibly large.
patch size 152 '\x00\x00\x00\x00\x01'
expect_err python313_implausible_structure_size_is_refused 1 \
	"size.so: _Py_DebugOffsets gives a structure of implausible size: thread_state" \
	"$TMP/cpy_check" layout "$TMP/size.so"
head -c 100 "$TMP/cookie.so" >"$TMP/short"
expect_err python313_short_debug_offsets_are_refused 1 "short: _Py_DebugOffsets is cut short" \
	"$TMP/cpy_check" offsets "$TMP/short"
