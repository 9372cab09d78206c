# README.md is the front door: its quick start is the one `tally --help` shows (the same
# command lines, in the same order), and its layout table follows the tree (a row for
# every module under src/ and every top-level folder, and no row for a path that is gone).
. tests/lib.sh

readme=$ROOT/README.md
# The command lines of --help's quick start: each line's text from "tally " on.
"$TALLY" --help | awk '/^Quick start/ { on = 1; next } on && !/^  / { exit }
	on { sub(/^.*  tally /, "tally "); print }' >"$TMP/help"
# README's: the first sh block under "## Quick start", comments and trailing blanks cut.
awk '/^## Quick start/ { on = 1; next } on && /^## / { exit }
	on && /^```sh/ { block = 1; next } block && /^```/ { exit }
	block { sub(/ *#.*$/, ""); sub(/ +$/, ""); print }' "$readme" >"$TMP/readme"
if [ "$(wc -l <"$TMP/help")" -ge 6 ] && cmp -s "$TMP/help" "$TMP/readme"; then
	pass readme_quick_start_is_helps
else
	fail readme_quick_start_is_helps "$(diff "$TMP/help" "$TMP/readme" | head -8)"
fi

# The paths of the layout table's rows, "src/elf" for "| `src/elf/` |".
sed -n '/^## Layout/,/^## /s/^| `\([^`]*\)` |.*/\1/p' "$readme" | sed 's:/$::' >"$TMP/rows"
missing= gone=
for d in "$ROOT"/src/*/; do
	d=${d#"$ROOT"/}
	grep -qx "${d%/}" "$TMP/rows" || missing+=" ${d%/}"
done
# Top-level folders git tracks, hidden ones (CI's) aside.
for d in $(git -C "$ROOT" ls-files 2>/dev/null | sed -n 's:^\([^.][^/]*\)/.*:\1:p' | sort -u); do
	grep -q "^$d\(/\|$\)" "$TMP/rows" || missing+=" $d"
done
while read -r row; do
	[[ "$row" == *MODULE* ]] || [ -d "$ROOT/$row" ] || gone+=" $row"
done <"$TMP/rows"
if [ -s "$TMP/rows" ] && [ -z "$missing$gone" ]; then
	pass readme_layout_follows_tree
else
	fail readme_layout_follows_tree "no row for:${missing:- -}; no such folder:${gone:- -}"
fi
