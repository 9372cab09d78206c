# str objects decoded from the bytes python3.11 holds them in (ASCII, Latin-1, BMP and
# astral text, lone surrogates, an interned name), with the layout read from the same
# interpreter's debug information, against the interpreter's own UTF-8 encoding.
. tests/lib.sh
. tests/cpython/driver.sh
python_writes unicode_text_matches_python strings.py "$TMP/strings"
out=$("$TMP/cpy_check" unicode "$PY311" "$TMP/strings" 2>&1)
[[ "$out" == *" strings, 0 mismatches" && "$out" != "0 strings"* ]] &&
	pass unicode_text_matches_python || fail unicode_text_matches_python "$(head -5 <<<"$out")"
