#!/bin/bash
# tally record (stacks unwound while recording, its default) against raw copies (tally
# record --keep-stacks) and against perf, side by side in one run (issue 34's targets), on
# the native-sampling workloads: the deep chain built by gcc and by clang with lld, and
# recursion 40 deep. For each workload:
#   size   bytes a sample of the whole file, raw and unwound;
#   truth  the full-chain share tally report gives the raw file and the unwound one, and the
#          share of samples whose folded stack is the same both ways (one raw recording,
#          unwound by replay and by the live unwinder: tally record --unwind-file);
#   cost   the workload's own loop time (it times itself) bare, under perf record
#          --call-graph dwarf, tally record raw and tally record unwound, runs
#          alternated, the median of N; tally's CPU a sample from its closing line;
#   report tally report of the unwound file against perf report --stdio of perf's own raw
#          recording of the same workload (CPU time, best of 5: bench/timed.sh).
# Then lost samples: tally record -a for S seconds (default 5) at 1 kHz and at 10 kHz, unwound
# and raw, with a spinning workload on every CPU; the closing line's samples, lost and
# throttled counts.
# Usage: bench/record_unwound.sh [BUILD] [N] [S]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-5}
S=${3:-5}
T=$BUILD/tally
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
spins="" # the spinning workload of the lost-sample runs, killed however the script ends
trap 'kill $spins 2>/dev/null; rm -rf "$W"' EXIT
cat >"$W/deep.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void *keep[4096];
__attribute__((noinline)) static long f12(int n) { long c = 0; for (int i = 0; i < n; i++) { int k = i & 4095; free(keep[k]); keep[k] = malloc(64); c += (long)keep[k]; } return c; }
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(f11, f12, 1) F(f10, f11, 2) F(f9, f10, 3) F(f8, f9, 4) F(f7, f8, 5) F(f6, f7, 6) F(f5, f6, 7) F(f4, f5, 8) F(f3, f4, 9) F(f2, f3, 10) F(f1, f2, 11)
int main(void) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a); long s = 0; for (int i = 0; i < 800; i++) s += f1(200000); clock_gettime(CLOCK_MONOTONIC, &b); fprintf(stderr, "loop %.4f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9); printf("%ld\n", s); return 0; }
C
cat >"$W/rec.c" <<'C'
#include <stdio.h>
#include <time.h>
__attribute__((noinline)) static double rec(int d, double x) { if (d == 0) { for (int i = 0; i < 300000000; i++) x = x * 1.0000001 + 0.5; return x; } double r = rec(d - 1, x + d); __asm__ volatile("" : "+x"(r)); return r - d; }
int main(void) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a); double r = rec(39, 1.0); clock_gettime(CLOCK_MONOTONIC, &b); fprintf(stderr, "loop %.4f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9); printf("%f\n", r); return 0; }
C
gcc -O2 -g -o "$W/deep_gcc" "$W/deep.c"
progs="deep_gcc rec40"
gcc -O2 -g -o "$W/rec40" "$W/rec.c"
if command -v clang >/dev/null && command -v ld.lld >/dev/null; then
	clang -O2 -g -fuse-ld=lld -o "$W/deep_lld" "$W/deep.c"
	progs="deep_gcc deep_lld rec40"
fi
. bench/timed.sh

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
loop() { sed -n 's/^loop \([0-9.]*\)$/\1/p'; }
samples() { awk '/^figures: +samples / {print $3}' "$1"; }
complete() { awk '/^unwind: / {for (i = 1; i <= NF; i++) if ($(i + 1) == "complete,") print $i}' "$1"; }
per_sample_cpu() { sed -n 's/.* written, \([0-9.]*\) us of tally.s CPU.*/\1/p'; }

# folded_per_sample FILE OUT: each sample's folded stack, in time order (tally's firefox
# export keeps samples apart, with their times).
folded_per_sample() {
	"$T" export -f firefox -o "$W/ff.json" "$1" 2>/dev/null
	python3 - "$W/ff.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sh = d["shared"]
st, fr, fn, strs = sh["stackTable"], sh["frameTable"], sh["funcTable"], sh["stringArray"]
out = []
for t in d["threads"]:
    s = t["samples"]
    for k in range(s["length"]):
        chain, i = [], s["stack"][k]
        while i is not None:
            chain.append(strs[fn["name"][fr["func"][st["frame"][i]]]])
            off = st["prefixOffset"][i]
            i = i - off if off else None
        out.append((t["tid"], s["time"][k], ";".join(reversed(chain))))
open(sys.argv[2], "w").write("".join("%s\n" % c for _, _, c in sorted(out)))
PY
}

printf '%-9s | %-27s | %-32s | %-45s | %s\n' workload "bytes a sample: raw, unwound" \
	"complete: raw, unwound; same stack" "loop s: bare, perf, tally raw, tally unwound" \
	"report: perf raw, tally unwound (cpu ms)"
for p in $progs; do
	: >"$W/bare" && : >"$W/perf" && : >"$W/raw" && : >"$W/unw" && : >"$W/cpu_raw" && : >"$W/cpu_unw"
	for _ in $(seq "$N"); do
		"$W/$p" 2>&1 >/dev/null | loop >>"$W/bare"
		perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$W/p.data" "$W/$p" \
			2>&1 >/dev/null | loop >>"$W/perf"
		"$T" record --keep-stacks -o "$W/r.data" -- "$W/$p" >/dev/null 2>"$W/r.err"
		loop <"$W/r.err" >>"$W/raw"
		per_sample_cpu <"$W/r.err" >>"$W/cpu_raw"
		"$T" record -o "$W/u.data" -- "$W/$p" >/dev/null 2>"$W/u.err"
		loop <"$W/u.err" >>"$W/unw"
		per_sample_cpu <"$W/u.err" >>"$W/cpu_unw"
	done
	"$T" report "$W/r.data" >"$W/r.report" 2>/dev/null
	"$T" report "$W/u.data" >"$W/u.report" 2>/dev/null
	# One raw recording two ways: unwound by replay, and by the live unwinder.
	"$T" record --unwind-file "$W/r.data" -o "$W/ru.data" >/dev/null 2>&1
	folded_per_sample "$W/r.data" "$W/r.fold"
	folded_per_sample "$W/ru.data" "$W/ru.fold"
	same=$(paste -d '\n' "$W/r.fold" "$W/ru.fold" | awk 'NR % 2 {a = $0; next} {n++; s += a == $0}
		END {printf "%.2f%% of %d", n ? 100 * s / n : 0, n}')
	rb=$(($(stat -c %s "$W/r.data") / $(samples "$W/r.report")))
	ub=$(($(stat -c %s "$W/u.data") / $(samples "$W/u.report")))
	timed perf report -i "$W/p.data" --stdio >/dev/null
	pc=$(cat "$W/cpu")
	timed "$T" report "$W/u.data" >/dev/null
	tc=$(cat "$W/cpu")
	printf '%-9s | %8d, %4d (%5.1fx less) | %7s, %7s; %-12s | %.3f, %.3f, %.3f, %.3f (%s, %s us/sample) | %s, %s (%.1fx)\n' \
		"$p" "$rb" "$ub" "$(echo "$rb $ub" | awk '{print $1 / $2}')" \
		"$(complete "$W/r.report")" "$(complete "$W/u.report")" "$same" \
		"$(median <"$W/bare")" "$(median <"$W/perf")" "$(median <"$W/raw")" "$(median <"$W/unw")" \
		"$(median <"$W/cpu_raw")" "$(median <"$W/cpu_unw")" "$pc" "$tc" \
		"$(echo "$pc $tc" | awk '{print $1 / $2}')"
done

# Lost samples on every CPU: one spinning process per CPU, tally record -a for S seconds.
cat >"$W/spin.c" <<'C'
int main(void) { volatile unsigned long x = 0; for (;;) x++; }
C
gcc -O2 -o "$W/spin" "$W/spin.c"
ncpu=$(nproc)
spins=""
for _ in $(seq "$ncpu"); do
	"$W/spin" &
	spins="$spins $!"
done
printf '\n%-32s | %s\n' "tally record -a, $ncpu CPUs busy, ${S} s" \
	"samples, lost, throttled; bytes a sample; tally's CPU a sample"
for hz in 1000 10000; do
	for how in unwound raw; do
		opt=""
		[ $how = raw ] && opt=--keep-stacks
		"$T" record -a -F $hz $opt --duration "$S" -o "$W/a.data" 2>"$W/a.err" || true
		sed -n 's/^tally record: \([0-9]*\) samples, \([0-9]*\) lost, \([0-9]*\) throttled.*/\1 \2 \3/p' \
			"$W/a.err" >"$W/a.counts"
		read -r n lost thr <"$W/a.counts"
		printf '%-32s | %s, %s, %s; %s bytes; %s us\n' "-F $hz, $how" "$n" "$lost" "$thr" \
			"$(($(stat -c %s "$W/a.data") / (n > 0 ? n : 1)))" "$(per_sample_cpu <"$W/a.err")"
	done
done
kill $spins
wait 2>/dev/null || true
spins=""
