# tally flamegraph: the SVG against its folded input, and in headless Chromium (through
# playwright-core from npm, which scripts/install-deps.sh installs): loads without script
# errors, hover, click-to-zoom, reset, search with the matched share, a screenshot.
. tests/lib.sh

. tests/report/flamegraph_playwright.sh

# A profile with native, inline and kernel frames, names that need escaping (markup, a
# CDATA end, bytes that are not UTF-8) and a frame long enough to be cut.
printf '%s\n' \
	'main;parse_input;read_line;sys_read_[k] 150' \
	'main;parse_input;read_line 50' \
	'main;parse_input;tokenize 100' \
	'main;compute_hash;mix_[i] 300' \
	'main;compute_hash;mix_[i];rotate_[i] 100' \
	'main;compute_hash 200' \
	'main;report<&'"'"'a "x">;printf 40' \
	'main;]]><script>alert(1)</script> 5' \
	'main 10' \
	'idle 45' >"$TMP/prof.folded"
printf 'main;bad\xff\xfename 2\n' >>"$TMP/prof.folded"

svg="$TMP/prof.svg"
if "$TALLY" flamegraph "$TMP/prof.folded" -o "$svg" --title 'Test <graph>' --subtitle 'sub & title' \
	2>"$TMP/err"; then
	pass flamegraph_writes_svg
else
	fail flamegraph_writes_svg "$(cat "$TMP/err")"
fi

grep -q '<text id="title"[^>]*>Test &lt;graph&gt;</text>' "$svg" &&
	grep -q '<text id="subtitle"[^>]*>sub &amp; title</text>' "$svg" &&
	pass flamegraph_title_and_subtitle || fail flamegraph_title_and_subtitle

grep -q '<title>\]\]&gt;&lt;script&gt;alert(1)&lt;/script&gt;$' "$svg" && ! grep -q '<script>alert' "$svg" &&
	grep -q "bad$(printf '\xef\xbf\xbd\xef\xbf\xbd')name" "$svg" &&
	pass flamegraph_escapes_names || fail flamegraph_escapes_names

"$TALLY" flamegraph "$TMP/prof.folded" --title 'Test <graph>' --subtitle 'sub & title' >"$TMP/again.svg" &&
	cmp -s "$svg" "$TMP/again.svg" && pass flamegraph_is_deterministic ||
	fail flamegraph_is_deterministic "stdout output differs from -o output"

# The same function gets the same colour in an unrelated profile.
printf 'other;compute_hash 7\nx;y;z 3\n' >"$TMP/other.folded"
"$TALLY" flamegraph "$TMP/other.folded" -o "$TMP/other.svg"
colour() { grep -A1 "<title>$2\$" "$1" | grep -o 'fill="#[0-9a-f]*"' | head -1; }
c1=$(colour "$svg" compute_hash) c2=$(colour "$TMP/other.svg" compute_hash)
[ -n "$c1" ] && [ "$c1" = "$c2" ] && [ "$c1" != "$(colour "$svg" parse_input)" ] &&
	pass flamegraph_colour_depends_on_name_only || fail flamegraph_colour_depends_on_name_only "$c1 $c2"

# minwidth: 4000 one-sample frames beside a big one are pruned by default, kept with 0.
{
	echo "main;big 1000000"
	for i in $(seq 4000); do echo "main;tiny$i 1"; done
} >"$TMP/wide.folded"
"$TALLY" flamegraph "$TMP/wide.folded" -o "$TMP/pruned.svg"
"$TALLY" flamegraph "$TMP/wide.folded" --minwidth 0 -o "$TMP/full.svg"
np=$(grep -c '^<g class="[a-z]" data-w=' "$TMP/pruned.svg") nf=$(grep -c '^<g class="[a-z]" data-w=' "$TMP/full.svg")
[ "$np" -eq 3 ] && [ "$nf" -eq 4003 ] && pass flamegraph_minwidth_prunes ||
	fail flamegraph_minwidth_prunes "default $np frames, --minwidth 0 $nf"

# A 5,000-deep stack (deep recursion) is drawn whole: root, main, 5,000 frames, and x.
awk 'BEGIN { s = "main"; for (i = 0; i < 5000; i++) s = s ";f" (i % 7); print s, 5; print "main;x 5" }' \
	>"$TMP/deep.folded"
"$TALLY" flamegraph "$TMP/deep.folded" -o "$TMP/deep.svg" 2>"$TMP/err" &&
	[ "$(grep -c '^<g class="[a-z]" data-w=' "$TMP/deep.svg")" -eq 5003 ] &&
	grep -q 'maxdepth: 5001,' "$TMP/deep.svg" && pass flamegraph_deep_stack ||
	fail flamegraph_deep_stack "$(cat "$TMP/err")"

: >"$TMP/empty.folded"
err=$("$TALLY" flamegraph "$TMP/empty.folded" -o "$TMP/empty.svg" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == "tally: $TMP/empty.folded: "* ]] && [ ! -e "$TMP/empty.svg" ] &&
	pass flamegraph_empty_profile_is_an_error || fail flamegraph_empty_profile_is_an_error "exit $rc: $err"

err=$("$TALLY" flamegraph --minwidth x "$TMP/prof.folded" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$err" = "tally: --minwidth: not a width: x
Run 'tally help flamegraph' for usage." ] && pass flamegraph_bad_option_is_usage_error ||
	fail flamegraph_bad_option_is_usage_error "exit $rc: $err"

"$TALLY" flamegraph --inverted "$TMP/prof.folded" -o "$TMP/icicle.svg" &&
	pass flamegraph_inverted_writes || fail flamegraph_inverted_writes

# In the browser. The matched share of ^(mix|rotate)$ is mix's 400 of 1002 (rotate is
# inside mix, counted once).
if [ $PW_OK = 0 ]; then
	skip flamegraph_in_chromium "no playwright-core in $NPM_DIR (run scripts/install-deps.sh test) or no /usr/bin/chromium"
else
	for mode in flame icicle; do
		file=$svg inverted=false
		[ $mode = icicle ] && file=$TMP/icicle.svg inverted=true
		cat >"$TMP/spec-$mode.json" <<-JSON
		{ "svg": "$file", "folded": "$TMP/prof.folded", "screenshot": "$TMP/$mode.png",
		  "total": 1002, "zoom": "compute_hash", "zoom_child": "mix", "sibling": "parse_input",
		  "hover": "read_line", "search": "^(mix|rotate)\$", "matched_pct": "39.92",
		  "inverted": $inverted }
		JSON
		timeout 120 node tests/report/flamegraph_browser.js "$PW" "$TMP/chromium-$mode" \
			"$TMP/spec-$mode.json" || echo "FAIL: flamegraph_browser_$mode: exit $?"
	done
fi
