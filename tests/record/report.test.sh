# tally report (and the other outputs) on perf.data: tally's own recordings and perf's,
# unwound by tally; figures checked against go tool pprof on the exported profile.
. tests/lib.sh

cat > "$TMP/deep.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static void *keep[4096];
__attribute__((noinline)) static long f12(int n) { long c = 0; for (int i = 0; i < n; i++) { int k = i & 4095; free(keep[k]); keep[k] = malloc(64); c += (long)keep[k]; } return c; }
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(f11, f12, 1) F(f10, f11, 2) F(f9, f10, 3) F(f8, f9, 4) F(f7, f8, 5) F(f6, f7, 6) F(f5, f6, 7) F(f4, f5, 8) F(f3, f4, 9) F(f2, f3, 10) F(f1, f2, 11)
int main(void) { long s = 0; for (int i = 0; i < 300; i++) s += f1(200000); printf("%ld\n", s); return 0; }
C
gcc -O2 -g -o "$TMP/deep" "$TMP/deep.c" || { fail build_deep; exit 0; }
"$TALLY" record -q -o "$TMP/tally.data" -- "$TMP/deep" >/dev/null || fail record_deep
perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$TMP/perf.data" "$TMP/deep" >/dev/null 2>&1 \
	|| fail perf_record_deep

# total% of a function in the report's "Top functions by total" table
total_pct() { awk -v f="$2" '/^Top functions by total/ {on = 1; next}
	on && $5 ~ "^" f "(\\.|$)" {sub("%", "", $3); print $3; exit}' "$1"; }
figure() { awk -v k="$2" 'index($0, k) {print $NF; exit}' "$1"; }

for rec in tally perf; do
	out="$TMP/$rec.report"
	if ! "$TALLY" report --top 40 "$TMP/$rec.data" >"$out" 2>"$TMP/err"; then
		fail "report_${rec}_recording" "$(cat "$TMP/err")"
		continue
	fi
	complete=$(figure "$out" "unwind: complete stacks %")
	main=$(total_pct "$out" main)
	f12=$(total_pct "$out" f12)
	if [ "${complete:-0}" -ge 99 ] && awk -v a="${main:-0}" -v b="${f12:-0}" 'BEGIN {exit !(a >= 99 && b >= 99)}'; then
		pass "report_${rec}_recording_has_whole_chains"
	else
		fail "report_${rec}_recording_has_whole_chains" "complete=$complete main=$main f12=$f12"
	fi
done

# The unwind-quality figures are in the header, with lost records.
grep -q "^figures:  samples [0-9]" "$TMP/tally.report" && grep -q "lost records 0" "$TMP/tally.report" \
	&& pass report_header_has_unwind_quality || fail report_header_has_unwind_quality

# --unwind fp says what it costs; a bad method is a usage error.
"$TALLY" report --unwind fp "$TMP/tally.data" >"$TMP/fp.report" 2>&1
grep -q "unwind: --unwind=fp" "$TMP/fp.report" && grep -q "unwind: truncated, " "$TMP/fp.report" \
	&& pass report_unwind_fp_is_marked || fail report_unwind_fp_is_marked "$(head -20 "$TMP/fp.report")"
"$TALLY" report --unwind bogus "$TMP/tally.data" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && pass report_bad_unwind_is_usage || fail report_bad_unwind_is_usage "rc=$rc"

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
	&& [ "$(figure "$TMP/stdin.report" "unwind: complete stacks %")" = "$(figure "$TMP/tally.report" "unwind: complete stacks %")" ] \
	&& pass report_perf_data_from_stdin || fail report_perf_data_from_stdin "$(cat "$TMP/err")"

# A truncated perf.data is an error naming the file, not a crash.
head -c 5000 "$TMP/tally.data" >"$TMP/cut.data"
err=$("$TALLY" report "$TMP/cut.data" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == "tally: $TMP/cut.data: "* ]] && pass report_truncated_perf_data_is_an_error \
	|| fail report_truncated_perf_data_is_an_error "rc=$rc $err"
