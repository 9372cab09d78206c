# DWARF this reader does not follow yet (split DWARF, dwz alternate files) is reported as
# unsupported, and the answer falls back to symbol tables: never a wrong file or line.
. tests/lib.sh
src=tests/elf/src/inline.c
leaf_of() { nm "$1" | awk '$3 == "leaf" { print "0x" $1 }'; }

(cd "$TMP" && gcc -O2 -g -gsplit-dwarf "$ROOT/$src" -o split)
out=$("$TALLY" symbolize -e "$TMP/split" "$(leaf_of "$TMP/split")" 2>"$TMP/err")
grep -q "split DWARF (.dwo/.dwp) is not supported" "$TMP/err" &&
	[[ "$out" == $'leaf\n??:0:0'* ]] && pass split_dwarf_is_reported_not_guessed ||
	fail split_dwarf_is_reported_not_guessed "$(cat "$TMP/err") / $out"

gcc -O2 -g "$src" -o "$TMP/a"
gcc -O1 -g "$src" -o "$TMP/b"
if dwz -m "$TMP/common.debug" "$TMP/a" "$TMP/b" 2>"$TMP/dwz.err" &&
	readelf -S "$TMP/a" | grep -q gnu_debugaltlink; then
	out=$("$TALLY" symbolize -e "$TMP/a" "$(leaf_of "$TMP/a")" 2>"$TMP/err")
	grep -q "dwz alternate debug files" "$TMP/err" && [[ "$out" == $'leaf\n??:0:0'* ]] &&
		pass dwz_alternate_file_is_reported_not_guessed ||
		fail dwz_alternate_file_is_reported_not_guessed "$(cat "$TMP/err") / $out"
else
	fail dwz_alternate_file_is_reported_not_guessed "dwz made no alternate file: $(cat "$TMP/dwz.err")"
fi
