# tally report (and the other outputs) on perf.data: tally's own recordings and perf's,
# unwound by tally; figures checked against go tool pprof on the exported profile.
. tests/lib.sh

# 900 rounds (1.4 s): the samples of a process's start (execve, ld.so), 2-5 on a virtual
# machine where exec is slow, stay well under the 1% the whole-chain checks allow (at the
# default 300 they took 1.0-1.3%).
gcc -O2 -g -o "$TMP/deep" "$ROOT/tests/record/deep.c" || { fail build_deep; exit 0; }
# Stack copies kept (--keep-stacks): the outputs' --unwind=cfi|fp unwind them.
"$TALLY" record -q --keep-stacks -o "$TMP/tally.data" -- "$TMP/deep" 900 >/dev/null || fail record_deep
perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$TMP/perf.data" "$TMP/deep" 900 >/dev/null 2>&1 \
	|| fail perf_record_deep

# total% of a function in the report's "Top functions by total" table
total_pct() { awk -v f="$2" '/^Top functions by total/ {on = 1; next}
	on && $5 ~ "^" f "(\\.|$)" {sub("%", "", $3); print $3; exit}' "$1"; }
figure() { awk -v k="$2" 'index($0, k) {print $NF; exit}' "$1"; }
# the share of complete stacks in the report's first line, without the % sign
complete_share() { awk '/^unwind: / {for (i = 1; i < NF; i++) if ($(i + 1) == "complete,") {sub("%", "", $i); print $i; exit}}' "$1"; }

for rec in tally perf; do
	out="$TMP/$rec.report"
	if ! "$TALLY" report --top 40 "$TMP/$rec.data" >"$out" 2>"$TMP/err"; then
		fail "report_${rec}_recording" "$(cat "$TMP/err")"
		continue
	fi
	complete=$(complete_share "$out")
	main=$(total_pct "$out" main)
	f12=$(total_pct "$out" f12)
	if awk -v c="${complete:-0}" -v a="${main:-0}" -v b="${f12:-0}" 'BEGIN {exit !(c >= 99 && a >= 99 && b >= 99)}'; then
		pass "report_${rec}_recording_has_whole_chains"
	else
		fail "report_${rec}_recording_has_whole_chains" "complete=$complete main=$main f12=$f12"
	fi
done

# The unwind-quality figures are in the header, with lost records; the shares agree with
# the counts below them, to the precision printed.
samples=$(figure "$TMP/tally.report" "samples ")
done_n=$(figure "$TMP/tally.report" "unwind: complete stacks ")
grep -q "^figures:  samples [0-9]" "$TMP/tally.report" && grep -q "lost records 0" "$TMP/tally.report" \
	&& grep -Eq "^unwind: +$samples stacks: [0-9.]+% complete, [0-9.]+% truncated, [0-9.]+% single-frame, average depth [0-9]+\.[0-9]$" "$TMP/tally.report" \
	&& awk -v c="$(complete_share "$TMP/tally.report")" -v d="$done_n" -v n="$samples" \
		'BEGIN {s = 100 * d / n; exit !(n > 0 && (c - s) ^ 2 < 0.01 && (c == 100) == (d == n))}' \
	&& pass report_header_has_unwind_quality \
	|| fail report_header_has_unwind_quality "$(head -12 "$TMP/tally.report")"

# --unwind fp says what it costs; a bad method is a usage error.
"$TALLY" report --unwind fp "$TMP/tally.data" >"$TMP/fp.report" 2>&1
grep -q "unwind: --unwind=fp" "$TMP/fp.report" && grep -q "unwind: truncated, " "$TMP/fp.report" \
	&& pass report_unwind_fp_is_marked || fail report_unwind_fp_is_marked "$(head -20 "$TMP/fp.report")"
err=$("$TALLY" report --unwind bogus "$TMP/tally.data" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$err" = "tally: --unwind: expected auto, cfi or fp: bogus
Run 'tally help report' for usage." ] \
	&& pass report_bad_unwind_is_usage || fail report_bad_unwind_is_usage "rc=$rc $err"

# Every command reading perf.data honours --unwind. The gcc -O2 build has no frame pointers:
# CFI completes its stacks, frame pointers alone stop at the first frame, nearly always: a
# stale %rbp that happens to point at a saved frame pointer and return address can lead a
# walk to main by chance (once in 602 samples, under ASan). So at most 1% of frame-pointer
# walks may complete, which still fails when --unwind fp is ignored (then ~100% complete).
"$TALLY" report --unwind cfi "$TMP/tally.data" >"$TMP/cfi.report" 2>&1
"$TALLY" report --unwind=fp "$TMP/tally.data" >"$TMP/fp2.report" 2>&1
awk -v a="$(complete_share "$TMP/cfi.report")" -v b="$(complete_share "$TMP/fp2.report")" \
	'BEGIN {exit !(a >= 99 && b >= 0 && b <= 1)}' \
	&& pass report_unwind_cfi_vs_fp || fail report_unwind_cfi_vs_fp "$(head -1 "$TMP/cfi.report") / $(head -1 "$TMP/fp2.report")"
# folded: the share of samples whose stack starts with [truncated] (at least 99% under fp,
# for the reason above)
truncated_share() { awk '{n += $NF} /^\[truncated\]/ {t += $NF} END {print n ? 100 * t / n : -1}' "$1"; }
"$TALLY" export -f folded --unwind cfi -o "$TMP/cfi.folded" "$TMP/tally.data" 2>"$TMP/err" || fail export_unwind "$(cat "$TMP/err")"
"$TALLY" export -f folded --unwind fp -o "$TMP/fp.folded" "$TMP/tally.data" 2>"$TMP/err" || fail export_unwind "$(cat "$TMP/err")"
awk -v a="$(truncated_share "$TMP/cfi.folded")" -v b="$(truncated_share "$TMP/fp.folded")" \
	'BEGIN {exit !(a >= 0 && a <= 1 && b >= 99)}' \
	&& pass export_unwind_cfi_vs_fp || fail export_unwind_cfi_vs_fp "$(head -3 "$TMP/cfi.folded") / $(head -3 "$TMP/fp.folded")"
# the share a frame's boxes cover in a flame graph ("<title>NAME" then "N samples, P%")
svg_share() { awk -v f="$2" 'prev ~ "<title>" f "$" {split($0, a, ", "); sub("%", "", a[2]); s += a[2]}
	{prev = $0} END {print s + 0}' "$1"; }
"$TALLY" flamegraph --unwind cfi -o "$TMP/cfi.svg" "$TMP/tally.data" 2>"$TMP/err" \
	&& "$TALLY" flamegraph --unwind fp -o "$TMP/fp.svg" "$TMP/tally.data" 2>>"$TMP/err" \
	&& awk -v m="$(svg_share "$TMP/cfi.svg" main)" -v t="$(svg_share "$TMP/cfi.svg" '\\[truncated\\]')" \
		-v ft="$(svg_share "$TMP/fp.svg" '\\[truncated\\]')" -v fm="$(svg_share "$TMP/fp.svg" main)" \
		'BEGIN {exit !(m >= 99 && t <= 1 && ft >= 90 && fm <= 10)}' \
	&& pass flamegraph_unwind_cfi_vs_fp || fail flamegraph_unwind_cfi_vs_fp "$(cat "$TMP/err") main $(svg_share "$TMP/cfi.svg" main)/$(svg_share "$TMP/fp.svg" main)"
# annotate finds f1 (on every stack, next to no samples of its own) whenever stacks reach
# it; with frame pointers only when a sample landed in f1 itself, which is rare: then it
# shows just those (at most 1% of the samples), never the samples of the stacks through it.
f1=$(awk '$5 ~ /^f1(\.|$)/ {print $5; exit}' "$TMP/cfi.report")
own_only() { awk '/ samples on these instructions: / {n = $1; m = $NF} END {exit !(m && n * 100 <= m)}' "$1"; }
"$TALLY" annotate --unwind cfi --function "$f1" "$TMP/tally.data" >"$TMP/cfi.annot" 2>&1 \
	&& grep -q "^function $f1" "$TMP/cfi.annot" \
	&& { { ! "$TALLY" annotate --unwind fp --function "$f1" "$TMP/tally.data" >"$TMP/fp.annot" 2>&1 \
		&& grep -q "no function '$f1'" "$TMP/fp.annot"; } \
	     || { grep -q "^function $f1" "$TMP/fp.annot" && own_only "$TMP/fp.annot"; }; } \
	&& pass annotate_unwind_cfi_vs_fp || fail annotate_unwind_cfi_vs_fp "f1=$f1 $(head -2 "$TMP/cfi.annot") / $(head -3 "$TMP/fp.annot")"
# diff against the CFI profile: nothing changes under cfi; under fp main keeps at most 10%
# of its total (a stale %rbp can lead a frame-pointer walk there by chance, as in the
# flame graph check above) and [truncated] takes at least 90%
"$TALLY" export -f pprof -o "$TMP/cfi.pb.gz" "$TMP/tally.data" 2>"$TMP/err" || fail export_pprof_for_diff "$(cat "$TMP/err")"
"$TALLY" diff --unwind cfi "$TMP/cfi.pb.gz" "$TMP/tally.data" >"$TMP/cfi.diff" 2>&1
"$TALLY" diff --unwind fp "$TMP/cfi.pb.gz" "$TMP/tally.data" >"$TMP/fp.diff" 2>&1
grep -q "(no function changed)" "$TMP/cfi.diff" &&
	awk '$NF == "main" {m = $6 <= $5 / 10 && $5 > 0} $NF == "[truncated]" {t = $6 >= $5 + 0.9 * total}
	     /^before:/ {total = $NF} END {exit !(m && t)}' "$TMP/fp.diff" \
	&& pass diff_unwind_cfi_vs_fp || fail diff_unwind_cfi_vs_fp "cfi: $(sed -n '6,8p' "$TMP/cfi.diff" | tr '\n' ' ') / fp: $(grep -E ' (main|\[truncated\])$' "$TMP/fp.diff" | tr '\n' ' ')"
# every such command documents the option and rejects a bad method as bad usage, naming it
undocumented=""
for cmd in report flamegraph export annotate diff; do
	"$TALLY" help "$cmd" | grep -q -- "--unwind METHOD .*perf.data" || undocumented+=" $cmd"
	err=$("$TALLY" "$cmd" --unwind bogus x y 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && [ "$err" = "tally: --unwind: expected auto, cfi or fp: bogus
Run 'tally help $cmd' for usage." ] \
		&& pass "${cmd}_bad_unwind_is_usage" || fail "${cmd}_bad_unwind_is_usage" "rc=$rc $err"
done
[ -z "$undocumented" ] && pass unwind_option_documented_everywhere \
	|| fail unwind_option_documented_everywhere "not in the help of:$undocumented"

# go tool pprof reads the exported profile of a perf.data and agrees: main and f12 are on
# every sample's stack.
if command -v go >/dev/null; then
	"$TALLY" export -f pprof -o "$TMP/p.pb.gz" "$TMP/perf.data" 2>"$TMP/err" || fail export_pprof "$(cat "$TMP/err")"
	top=$(go tool pprof -top -cum -nodecount=60 "$TMP/p.pb.gz" 2>/dev/null)
	main=$(awk '$6 == "main" {sub("%", "", $5); print $5}' <<<"$top")
	f12=$(awk '$6 ~ /^f12(\.|$)/ {sub("%", "", $5); print $5}' <<<"$top")
	awk -v a="${main:-0}" -v b="${f12:-0}" 'BEGIN {exit !(a >= 99 && b >= 99)}' \
		&& pass export_pprof_of_perf_data_agrees_with_go_pprof \
		|| fail export_pprof_of_perf_data_agrees_with_go_pprof "main=$main f12=$f12"
else
	skip export_pprof_of_perf_data_agrees_with_go_pprof "no go"
fi

# A flame graph of a perf.data names the chain.
"$TALLY" flamegraph -o "$TMP/f.svg" "$TMP/tally.data" 2>"$TMP/err" && grep -q "f12" "$TMP/f.svg" \
	&& pass flamegraph_of_perf_data || fail flamegraph_of_perf_data "$(cat "$TMP/err")"

# From stdin too (read whole rather than mapped).
"$TALLY" report - <"$TMP/tally.data" >"$TMP/stdin.report" 2>"$TMP/err" \
	&& [ "$(head -1 "$TMP/stdin.report")" = "$(head -1 "$TMP/tally.report")" ] \
	&& pass report_perf_data_from_stdin || fail report_perf_data_from_stdin "$(cat "$TMP/err")"

# A truncated perf.data is an error naming the file, not a crash.
head -c 5000 "$TMP/tally.data" >"$TMP/cut.data"
err=$("$TALLY" report "$TMP/cut.data" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == "tally: $TMP/cut.data: "* ]] && pass report_truncated_perf_data_is_an_error \
	|| fail report_truncated_perf_data_is_an_error "rc=$rc $err"
