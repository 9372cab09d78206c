# tally annotate of an interpreter's bytecode (the agent's VM frames, with the listing the
# agent writes): examples/stackvm.c profiled exactly and by sampling, against the
# interpreter's own per-instruction counts and disassembly (its TALLY_AGENT_DISABLE
# build, in which no line of the agent runs); the HTML page against the text, through
# Python's HTML parser and through headless Chromium's DOM; hostile names and texts.
. tests/lib.sh

libs=$(sed -n "s/^LIBS := //p" "$ROOT/Makefile")
san=$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined)
cflags="-std=gnu11 -O2 -Wall -Wextra -Werror -I$ROOT/include"
if ! cc $cflags -DTALLY_AGENT_DISABLE -o "$TMP/stackvm-off" "$ROOT/examples/stackvm.c" 2>"$TMP/cc.err" ||
	! cc $cflags $san -o "$TMP/stackvm" "$ROOT/examples/stackvm.c" "$ROOT/$BUILD/libtally.a" $libs 2>>"$TMP/cc.err" ||
	! cc $cflags $san -o "$TMP/hostile" tests/report/annotate_bytecode_prog.c "$ROOT/$BUILD/libtally.a" $libs 2>>"$TMP/cc.err"; then
	fail annotate_bytecode_builds "$(head -5 "$TMP/cc.err")"
	exit 0
fi
rows=tests/report/annotate_html_rows.py

# The oracle, per function: "PC COUNT TEXT" for each instruction in order, from the
# interpreter's --disasm and its --lines counts (an instruction's line is its function's
# first line plus its index; the first instruction of every function runs).
"$TMP/stackvm-off" -n 30 --lines | grep : >"$TMP/lines"
"$TMP/stackvm-off" -n 30 --disasm >"$TMP/disasm"
oracle() { # FUNCTION
	awk -v f="$1" 'FNR == NR { split($1, a, ":"); if (a[1] == f) { n[a[2]] = $2; if (!min || a[2] < min) min = a[2] } next }
		/^[a-z]+:$/ { inside = $1 == f ":"; k = 0; next }
		inside { pc = $1; sub(/:$/, "", pc); $1 = ""; print pc, n[min + k] + 0, substr($0, 2); k++ }' \
		"$TMP/lines" "$TMP/disasm"
}
# The same from a text annotation: "PC WEIGHT TEXT".
listed() { python3 $rows --rows "$1"; }

"$TMP/stackvm" -n 30 --exact "$TMP/e.pb.gz" --listing "$TMP/vm.lst" >"$TMP/run.out" 2>&1 ||
	fail annotate_bytecode_exact_run "$(cat "$TMP/run.out")"
ok=1
for f in main hot warm cold fib; do
	"$TALLY" annotate --color never --listing "$TMP/vm.lst" --function $f "$TMP/e.pb.gz" >"$TMP/$f.txt" 2>&1 || ok=0
	"$TALLY" annotate --html --listing "$TMP/vm.lst" --function $f -o "$TMP/$f.html" "$TMP/e.pb.gz" 2>>"$TMP/$f.txt" || ok=0
	# the text listing prints a weight as it is, and no weight as blank: same oracle
	if [ "$(listed "$TMP/$f.txt")" != "$(oracle $f)" ] || [ -z "$(oracle $f)" ]; then
		ok=0
		echo "$f: $(diff <(listed "$TMP/$f.txt") <(oracle $f) | head -4 | tr '\n' ' ')" >>"$TMP/why"
	fi
	python3 $rows "$TMP/$f.html" "$TMP/$f.txt" >>"$TMP/why.html" 2>&1 || { ok=0; echo "$f" >>"$TMP/why.html"; }
done
[ $ok = 1 ] && [ ! -s "$TMP/why" ] && pass annotate_bytecode_exact_weights_are_the_interpreters_counts ||
	fail annotate_bytecode_exact_weights_are_the_interpreters_counts "$(cat "$TMP/why" 2>/dev/null; head -3 "$TMP/hot.txt")"
[ $ok = 1 ] && [ ! -s "$TMP/why.html" ] && pass annotate_bytecode_html_carries_the_text_weights ||
	fail annotate_bytecode_html_carries_the_text_weights "$(cat "$TMP/why.html" 2>/dev/null)"

# Sampling: per-pc samples from sample_pprof. Each function's samples in the page are the
# samples the stream has with it innermost, and fall on instructions the run executes.
# The run is long enough (0.4 s of CPU) for cold's share to get samples under load: the
# sampler takes one per time slice the interpreter gets, and with -n 300 a loaded core
# left it about 8, none of them cold's in 3 of 15 runs (the stop's CI of d7633a3).
"$TMP/stackvm" -n 3000 --sample "$TMP/s.folded" --hz 9999 --sample-pprof "$TMP/s.pb.gz" \
	--listing "$TMP/vm.lst" >"$TMP/run.out" 2>&1 || fail annotate_bytecode_sampled_run "$(cat "$TMP/run.out")"
why=
for f in hot warm cold; do
	"$TALLY" annotate --color never --listing "$TMP/vm.lst" --function $f "$TMP/s.pb.gz" >"$TMP/s$f.txt" 2>&1
	"$TALLY" annotate --html --listing "$TMP/vm.lst" --function $f -o "$TMP/s$f.html" "$TMP/s.pb.gz" 2>>"$TMP/s$f.txt"
	python3 $rows "$TMP/s$f.html" "$TMP/s$f.txt" >"$TMP/rows.out" 2>&1 || why+="$f: $(cat "$TMP/rows.out") "
	sum=$(listed "$TMP/s$f.txt" | awk '{ s += $2 } END { print s + 0 }')
	stream=$(awk -v f=$f '{ n = split($1, a, ";"); if (a[n] == f) s += $2 } END { print s + 0 }' "$TMP/s.folded")
	[ "$sum" -gt 0 ] && [ "$sum" = "$stream" ] || why+="$f: $sum samples in the page, $stream in the stream "
	cold=$(join <(listed "$TMP/s$f.txt" | awk '$2 > 0 { print $1 }' | sort) \
		<(oracle $f | awk '$2 == 0 { print $1 }' | sort))
	[ -z "$cold" ] || why+="$f: samples at pcs that never ran: $cold "
done
[ -z "$why" ] && pass annotate_bytecode_sampled_weights_agree_with_the_stream ||
	fail annotate_bytecode_sampled_weights_agree_with_the_stream "$why"

# Without the listing: the pcs that carry weight, with it, and no instruction text.
"$TALLY" annotate --color never --function hot "$TMP/e.pb.gz" >"$TMP/nolist.txt" 2>&1
want=$(oracle hot | awk '$2 > 0 { print $1, $2 }')
got=$(listed "$TMP/nolist.txt" | awk '{ print $1, $2 }')
[ -n "$want" ] && [ "$got" = "$want" ] && grep -q 'no listing of its instructions' "$TMP/nolist.txt" &&
	pass annotate_bytecode_without_listing_shows_weighed_pcs ||
	fail annotate_bytecode_without_listing_shows_weighed_pcs "$(diff <(echo "$got") <(echo "$want") | head -4)"

# Hostile names and texts: markup is text in the page, a line break in a name is matched.
if "$TMP/hostile" "$TMP/h.pb.gz" "$TMP/h.lst" >"$TMP/h.want" 2>"$TMP/h.err"; then
	"$TALLY" annotate --color never --listing "$TMP/h.lst" --function '<script>' "$TMP/h.pb.gz" >"$TMP/h.txt" 2>&1
	"$TALLY" annotate --html --listing "$TMP/h.lst" --function '<script>' -o "$TMP/h.html" "$TMP/h.pb.gz" 2>>"$TMP/h.txt"
	got=$(listed "$TMP/h.txt" | awk '$2 > 0 { print $1, $2 }')
	python3 $rows "$TMP/h.html" "$TMP/h.txt" >"$TMP/rows.out" 2>&1 &&
		[ "$got" = "$(head -2 "$TMP/h.want")" ] && grep -q '<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>' "$TMP/h.html" &&
		grep -qF '<td>&lt;img src=x onerror=alert(2)&gt;</td>' "$TMP/h.html" &&
		pass annotate_bytecode_html_escapes_hostile_names ||
		fail annotate_bytecode_html_escapes_hostile_names "$(cat "$TMP/rows.out") $got $(head -3 "$TMP/h.txt")"
	"$TALLY" annotate --color never --listing "$TMP/h.lst" --function $'two\nlines' "$TMP/h.pb.gz" >"$TMP/two.txt" 2>&1
	[ "$(listed "$TMP/two.txt")" = "$(printf 'a 0 a b\nb 3 c')" ] && pass annotate_bytecode_name_with_line_break ||
		fail annotate_bytecode_name_with_line_break "$(cat "$TMP/two.txt")"
else
	fail annotate_bytecode_html_escapes_hostile_names "$(cat "$TMP/h.err")"
fi

# What Chromium renders: its DOM, serialized again, holds the same rows, and no element
# came from a name or an instruction text.
if [ -x /usr/bin/chromium ]; then
	ok=1
	for page in hot h; do
		timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run \
			--disable-background-networking --user-data-dir="$TMP/chromium" \
			--dump-dom "file://$TMP/$page.html" >"$TMP/$page.dom" 2>"$TMP/chromium.err" || ok=0
		python3 $rows "$TMP/$page.dom" "$TMP/$page.txt" >>"$TMP/dom.out" 2>&1 || ok=0
	done
	[ $ok = 1 ] && grep -q '<title>tally annotate: &lt;script&gt;' "$TMP/h.dom" &&
		pass annotate_bytecode_html_renders_in_chromium ||
		fail annotate_bytecode_html_renders_in_chromium "$(cat "$TMP/dom.out"; tail -2 "$TMP/chromium.err")"
else
	skip annotate_bytecode_html_renders_in_chromium "no /usr/bin/chromium"
fi

# And as a person sees it (tests/report/annotate_browser.js, driving Chromium): no errors,
# no requests, a row per instruction, the hottest one (the oracle's first largest count)
# shaded and bold, the others without weight unshaded.
. tests/report/flamegraph_playwright.sh
if [ $PW_OK = 1 ]; then
	hot=$(oracle hot | sort -k2,2nr -s | head -1 | cut -d' ' -f1)
	timeout 120 node tests/report/annotate_browser.js "$PW" "$TMP/chromium-pw" "$TMP/hot.html" \
		"$hot" "$(oracle hot | wc -l)" >"$TMP/pw.out" 2>&1
	sed -n 's/^\(PASS\|FAIL\): annotate_html_/\1: annotate_bytecode_html_/p' "$TMP/pw.out"
	[ "$(grep -c '^PASS' "$TMP/pw.out")" = 3 ] || fail annotate_bytecode_html_browser "$(tail -3 "$TMP/pw.out")"
else
	skip annotate_bytecode_html_in_playwright "no playwright-core in $NPM_DIR (run scripts/install-deps.sh test) or no /usr/bin/chromium"
fi

# Bad listings are refused with the file and the line, never half-read.
printf 'x\n\n000000000000001b <hot>:\n      1c:\tb\n      1b:\ta\n' >"$TMP/order.lst"
printf 'x\n\n000000000000001b <hot>:\n      1b:\ta\nwhat is this\n' >"$TMP/junk.lst"
sed 's/<hot>/<other>/' "$TMP/vm.lst" >"$TMP/none.lst"
expect_err annotate_bytecode_listing_out_of_order 1 "order.lst: line 5: pc 0x1b does not follow" \
	"$TALLY" annotate --listing "$TMP/order.lst" --function hot "$TMP/e.pb.gz"
expect_err annotate_bytecode_listing_junk_line 1 "junk.lst: line 5: neither an instruction" \
	"$TALLY" annotate --listing "$TMP/junk.lst" --function hot "$TMP/e.pb.gz"
expect_err annotate_bytecode_listing_without_the_function 1 "none.lst: no function hot" \
	"$TALLY" annotate --listing "$TMP/none.lst" --function hot "$TMP/e.pb.gz"
