# tally diff --flamegraph: the differential flame graph has AFTER's shape, is red where self
# weight grew and blue where it shrank, says what only BEFORE had, and works in Chromium.
. tests/lib.sh

printf 'main;a 100\nmain;b 100\nmain;c 50\nmain;e 30\nidle 10\n' >"$TMP/before.folded"
printf 'main;a 150\nmain;b 60\nmain;c 50\nmain;d 20\nidle 10\n' >"$TMP/after.folded"
svg=$TMP/diff.svg
if "$TALLY" diff "$TMP/before.folded" "$TMP/after.folded" --flamegraph "$svg" >/dev/null 2>"$TMP/err"; then
	pass flamegraph_diff_writes_svg
else
	fail flamegraph_diff_writes_svg "$(cat "$TMP/err")"
fi

fill_of() { grep -A4 "<title>$2\$" "$1" | grep -o 'fill="#[0-9a-f]*"' | head -1 | sed 's/fill="#//; s/"//'; }
weight_of() { grep "<title>$2\$" "$1" | sed 's/.*data-w="\([0-9]*\)".*/\1/'; }
rgb() { printf '%d %d %d' "0x${1:0:2}" "0x${1:2:2}" "0x${1:4:2}"; }

[ "$(weight_of "$svg" a)" = 150 ] && [ "$(weight_of "$svg" b)" = 60 ] && [ "$(weight_of "$svg" d)" = 20 ] &&
	[ "$(weight_of "$svg" main)" = 280 ] && ! grep -q '<title>e$' "$svg" &&
	pass flamegraph_diff_has_after_shape || fail flamegraph_diff_has_after_shape

read -r ar ag ab <<<"$(rgb "$(fill_of "$svg" a)")"
read -r br bg bb <<<"$(rgb "$(fill_of "$svg" b)")"
read -r cr cg cb <<<"$(rgb "$(fill_of "$svg" c)")"
read -r dr dg db <<<"$(rgb "$(fill_of "$svg" d)")"
[ "$ar" -gt $((ag + 100)) ] && [ "$bb" -gt $((br + 100)) ] && [ "$cr" -eq "$cg" ] && [ "$cg" -eq "$cb" ] &&
	[ "$dr" -gt $((dg + 50)) ] && [ "$dg" -gt "$ag" ] &&
	pass flamegraph_diff_colours_growth_and_shrinkage ||
	fail flamegraph_diff_colours_growth_and_shrinkage "a=$ar,$ag,$ab b=$br,$bg,$bb c=$cr,$cg,$cb d=$dr,$dg,$db"

grep -A3 '<title>a$' "$svg" | grep -q '^before: 100 samples, 34.48%$' &&
	grep -A3 '<title>d$' "$svg" | grep -q '^not in before$' &&
	grep -q '<text id="gone"[^>]*>not drawn, only in before: 30 samples</text>' "$svg" &&
	pass flamegraph_diff_tooltips_and_gone || fail flamegraph_diff_tooltips_and_gone

# --normalize: BEFORE twice as long, same shares: c (unchanged share) stays neutral.
awk '{ $NF = $NF * 2; print }' "$TMP/before.folded" >"$TMP/before2.folded"
"$TALLY" diff "$TMP/before2.folded" "$TMP/after.folded" --normalize --flamegraph "$TMP/norm.svg" >/dev/null
"$TALLY" diff "$TMP/before2.folded" "$TMP/after.folded" --flamegraph "$TMP/raw.svg" >/dev/null
read -r nr ng nb <<<"$(rgb "$(fill_of "$TMP/norm.svg" c)")"
read -r rr rg rb <<<"$(rgb "$(fill_of "$TMP/raw.svg" c)")"
[ "$nr" -eq "$ng" ] && [ "$ng" -eq "$nb" ] && [ "$rb" -gt "$rr" ] &&
	pass flamegraph_diff_normalize || fail flamegraph_diff_normalize "normalized c=$nr,$ng,$nb raw c=$rr,$rg,$rb"

. tests/report/flamegraph_playwright.sh
if [ $PW_OK = 1 ]; then
	cat >"$TMP/spec.json" <<-JSON
	{ "svg": "$svg", "folded": "$TMP/after.folded", "screenshot": "$TMP/diff.png", "total": 290,
	  "zoom": "main", "zoom_child": "a", "sibling": "idle", "hover": "b", "search": "^[ab]\$",
	  "matched_pct": "72.41", "inverted": false }
	JSON
	timeout 120 node tests/report/flamegraph_browser.js "$PW" "$TMP/chromium" "$TMP/spec.json" ||
		echo "FAIL: flamegraph_diff_browser: exit $?"
else
	skip flamegraph_diff_in_chromium "no playwright-core or no /usr/bin/chromium"
fi
