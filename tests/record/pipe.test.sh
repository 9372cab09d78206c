# perf.data in the pipe format (perf record -o -: a 16-byte header, then attributes,
# features and build-ids as records among the kernel's), from a file and from stdin.
# Oracles: perf inject, which turns the stream into the file format (tally must read both
# alike), and perf script, which counts the samples.
. tests/lib.sh

gcc -O2 -g -o "$TMP/deep" "$ROOT/tests/record/deep.c" || { fail build_deep; exit 0; }

# the share of complete stacks in a report's first line
complete_share() { awk '/^unwind: / {for (i = 1; i < NF; i++) if ($(i + 1) == "complete,") {sub("%", "", $i); print $i; exit}}' "$1"; }
samples() { awk '{n += $NF} END {print n + 0}' "$1"; }

for z in "" -z; do
	name=pipe${z:+_compressed}
	perf record -q $z -e cpu-clock -F 1000 --call-graph dwarf,32768 -o - "$TMP/deep" 150 \
		2>/dev/null >"$TMP/$name.data"
	if [ "$(head -c 8 "$TMP/$name.data")" != PERFILE2 ]; then
		fail "${name}_recorded" "perf record -o - wrote no stream"
		continue
	fi
	perf inject -o "$TMP/$name.file.data" <"$TMP/$name.data" 2>/dev/null
	"$TALLY" export -f folded -o "$TMP/$name.folded" "$TMP/$name.data" 2>"$TMP/err" \
		|| fail "${name}_read" "$(cat "$TMP/err")"
	"$TALLY" export -f folded -o "$TMP/$name.file.folded" "$TMP/$name.file.data" 2>"$TMP/err" \
		|| fail "${name}_injected_read" "$(cat "$TMP/err")"
	theirs=$(perf script -i "$TMP/$name.data" -F time 2>/dev/null | grep -c ':')
	ours=$(samples "$TMP/$name.folded")
	[ -s "$TMP/$name.folded" ] && cmp -s "$TMP/$name.folded" "$TMP/$name.file.folded" \
		&& [ "$ours" -gt 50 ] && [ "$ours" = "$theirs" ] \
		&& pass "${name}_same_as_perf_inject_file" \
		|| fail "${name}_same_as_perf_inject_file" "tally=$ours perf script=$theirs; $(diff "$TMP/$name.folded" "$TMP/$name.file.folded" | head -4)"
	"$TALLY" report "$TMP/$name.data" >"$TMP/$name.report" 2>&1
	awk -v c="$(complete_share "$TMP/$name.report")" 'BEGIN {exit !(c >= 99)}' \
		&& grep -q "f12" "$TMP/$name.report" \
		&& pass "${name}_stacks_complete" || fail "${name}_stacks_complete" "$(head -3 "$TMP/$name.report")"
done

# Straight from perf record's stdout; tee keeps a copy for perf script to count.
perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o - "$TMP/deep" 150 2>/dev/null \
	| tee "$TMP/tee.data" | "$TALLY" export -f folded - >"$TMP/stdin.folded" 2>"$TMP/err"
rc=$?
theirs=$(perf script -i "$TMP/tee.data" -F time 2>/dev/null | grep -c ':')
ours=$(samples "$TMP/stdin.folded")
[ $rc -eq 0 ] && [ "$ours" -gt 50 ] && [ "$ours" = "$theirs" ] \
	&& [ "$(grep -c ';f12' "$TMP/stdin.folded")" -gt 0 ] \
	&& pass pipe_from_stdin || fail pipe_from_stdin "rc=$rc tally=$ours perf=$theirs $(cat "$TMP/err")"
"$TALLY" report - <"$TMP/tee.data" >"$TMP/stdin.report" 2>"$TMP/err" \
	&& [ "$(head -1 "$TMP/stdin.report")" = "$("$TALLY" report "$TMP/tee.data" 2>&1 | head -1)" ] \
	&& pass pipe_report_stdin_equals_file || fail pipe_report_stdin_equals_file "$(cat "$TMP/err")"

# Cut short (a pipe closed early) it is an error naming the file, or a shorter profile:
# never a crash.
crashed=""
for n in 12 100 3000 100000; do
	head -c $n "$TMP/pipe.data" >"$TMP/cut.data"
	"$TALLY" report "$TMP/cut.data" >/dev/null 2>"$TMP/err"
	rc=$?
	{ [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "^tally: $TMP/cut.data: " "$TMP/err"; }; } \
		|| crashed+=" $n bytes: rc=$rc $(head -3 "$TMP/err");"
done
[ -z "$crashed" ] && pass pipe_cut_short_is_an_error_not_a_crash \
	|| fail pipe_cut_short_is_an_error_not_a_crash "$crashed"
