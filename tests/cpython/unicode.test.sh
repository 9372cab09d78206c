# str objects decoded from the bytes python3.11 holds them in (ASCII, Latin-1, BMP and
# astral text, lone surrogates, an interned name), with the layout read from the same
# interpreter's debug information, against the interpreter's own UTF-8 encoding.
. tests/lib.sh
. tests/cpython/driver.sh
python_writes unicode_text_matches_python strings.py "$TMP/strings"
out=$("$TMP/cpy_check" unicode "$PY311" "$TMP/strings" 2>&1)
[[ "$out" == *" strings, 0 mismatches" && "$out" != "0 strings"* ]] &&
	pass unicode_text_matches_python || fail unicode_text_matches_python "$(head -5 <<<"$out")"

# The same for pyenv's 3.8, 3.9 and 3.10 (ready bit and wstr as in 3.11), 3.12 and 3.13,
# whose str state has no ready bit (3.13's layout from its _Py_DebugOffsets and facts of
# ours).
for v in 3.8 3.9 3.10 3.12 3.13; do
	name=unicode_text_matches_python${v/./}
	lib=$(pyenv_lib $v)
	[ -n "$lib" ] || { skip $name "no pyenv CPython $v"; continue; }
	"$(dirname "$(dirname "$lib")")/bin/python$v" "$ROOT/tests/cpython/py/strings.py" "$TMP/strings$v" 2>"$TMP/py.err" ||
		{ fail $name "python$v: $(head -3 "$TMP/py.err")"; continue; }
	out=$("$TMP/cpy_check" unicode "$lib" "$TMP/strings$v" 2>&1)
	[[ "$out" == *" strings, 0 mismatches" && "$out" != "0 strings"* ]] &&
		pass "$name ($out)" || fail $name "$(head -5 <<<"$out")"
done
