#!/bin/bash
# Side by side: perf and tally unwinding the same perf.data recordings (perf record
# --call-graph dwarf,32768 and tally record, both 1 kHz) of the issue-4 workloads: the
# deep chain built with clang+bfd, clang+lld, gcc, gcc with frame pointers (about 1,050
# samples each), the gcc build run 5x longer (about 5,400 samples), recursion 40 deep and
# 4 threads. Prints, per file, perf script's single-frame share and average depth (the
# seed's counting script), the wall time, CPU time and peak memory of perf report --stdio
# and of tally report with the ratio of their CPU times, and tally's own figures with
# where its time goes (open and index, unwinding alone, unwinding and symbolizing; the
# symbolizer's cost per module). tally report is timed three ways: with its debug cache
# filled (the usual case: the cache keeps libc6-dbg's DWARF decompressed, see
# docs/symbolize.md), with an empty cache each run (the first report on a machine, which
# fills it; with TALLY_CACHE_STORE=wait, storing the copy in the report's own process, where
# by default a detached process stores it after the report: bench/report_first.sh times
# both), and with the cache off (TALLY_CACHE=off: every run inflates libc6-dbg).
# Usage: bench/unwind.sh [BUILD]   (not a test: prints figures)
# KEEP=DIR keeps the programs and recordings in DIR (to profile tally report on them); run
# again with the same DIR, it measures those same recordings again (before/after a change).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
if [ -n "${KEEP:-}" ]; then
	W=$KEEP
	mkdir -p "$W"
else
	W=$(mktemp -d /tmp/tally-bench.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi
cat > "$W/deep.c" <<'C'
#include <stdlib.h>
#include <stdio.h>
static void *keep[4096];
__attribute__((noinline)) static long f12(int n) { long c = 0; for (int i = 0; i < n; i++) { int k = i & 4095; free(keep[k]); keep[k] = malloc(64); c += (long)keep[k]; } return c; }
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(f11, f12, 1) F(f10, f11, 2) F(f9, f10, 3) F(f8, f9, 4) F(f7, f8, 5) F(f6, f7, 6) F(f5, f6, 7) F(f4, f5, 8) F(f3, f4, 9) F(f2, f3, 10) F(f1, f2, 11)
int main(int argc, char **argv) { int n = argc > 1 ? atoi(argv[1]) : 800; long s = 0; for (int i = 0; i < n; i++) s += f1(200000); printf("%ld\n", s); return 0; }
C
cat > "$W/rec.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) static double rec(int d, double x) { if (d == 0) { for (int i = 0; i < 400000000; i++) x = x * 1.0000001 + 0.5; return x; } double r = rec(d - 1, x + d); __asm__ volatile("" : "+x"(r)); return r - d; }
int main(void) { printf("%f\n", rec(39, 1.0)); return 0; }
C
cat > "$W/thr.c" <<'C'
#include <pthread.h>
#include <stdio.h>
__attribute__((noinline)) static double spin(double x) { for (int i = 0; i < 100000000; i++) x = x * 1.0000001 + 0.25; return x; }
__attribute__((noinline)) static double tf2(double x) { double r = spin(x); __asm__ volatile("" : "+x"(r)); return r; }
__attribute__((noinline)) static double tf1(double x) { double r = tf2(x); __asm__ volatile("" : "+x"(r)); return r; }
static void *worker(void *a) { static double out[4]; long i = (long)a; out[i] = tf1(i); return &out[i]; }
int main(void) { pthread_t t[4]; for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, (void *)i); for (int i = 0; i < 4; i++) pthread_join(t[i], 0); puts("done"); return 0; }
C
# shellcheck disable=SC2046
cc -O2 -Isrc -Iinclude -o "$W/unwind_stats" bench/unwind_stats.c "$BUILD/modules.a" $(sed -n 's/^LIBS := //p' Makefile)
# The bench's own debug cache, filled by the first report: the user's is left alone.
export TALLY_CACHE=$W/cache
# Kept programs are not rebuilt: the kept recordings name them by build-id.
[ -e "$W/threads4" ] || {
	clang -O2 -g -fuse-ld=bfd -o "$W/deep_bfd" "$W/deep.c"
	clang -O2 -g -fuse-ld=lld -o "$W/deep_lld" "$W/deep.c"
	gcc -O2 -g -o "$W/deep_gcc" "$W/deep.c"
	gcc -O2 -g -fno-omit-frame-pointer -o "$W/deep_fp" "$W/deep.c"
	gcc -O2 -g -o "$W/rec40" "$W/rec.c"
	gcc -O2 -g -pthread -o "$W/threads4" "$W/thr.c"
}

count() { perf script -i "$1" 2>/dev/null | awk '
/^[^ \t]/ {if (n) {t++; if (n==1) o++; s+=n} n=0; next}
/^[ \t]*[0-9a-f]+ / {n++}
END {if (n) {t++; if (n==1) o++; s+=n}
     printf "perf:  %d samples, %.1f%% single-frame, avg depth %.1f\n", t, 100*o/t, s/t}'; }
# timed CMD...: CPU time best of 5, wall time and peak memory (bench/timed.sh).
. bench/timed.sh

# name:program[:argument]
for run in deep_bfd:deep_bfd deep_lld:deep_lld deep_gcc:deep_gcc deep_fp:deep_fp \
	deep_gcc_x5:deep_gcc:4000 rec40:rec40 threads4:threads4; do
	IFS=: read -r b prog arg <<<"$run"
	[ -e "$W/$b.tally.data" ] || {
		perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$W/$b.perf.data" \
			"$W/$prog" ${arg:+"$arg"} >/dev/null 2>&1
		"$BUILD/tally" record -q -o "$W/$b.tally.data" -- "$W/$prog" ${arg:+"$arg"} >/dev/null
	}
	for rec in perf tally; do
		f="$W/$b.$rec.data"
		echo "== $b, recorded by $rec ($(du -m "$f" | cut -f1) MB)"
		count "$f"
		echo "perf report --stdio: $(timed perf report -i "$f" --stdio)"
		perf_cpu=$(cat "$W/cpu")
		ratio() { awk -v p="$perf_cpu" '{printf "%.1fx", p / $1}' "$W/cpu"; }
		echo "tally report:        $(timed "$BUILD/tally" report "$f"), $(ratio) less cpu"
		echo "  empty cache:       $(PREP='rm -rf "$W/cold"' TALLY_CACHE="$W/cold" \
			TALLY_CACHE_STORE=wait timed "$BUILD/tally" report "$f"), $(ratio)"
		echo "  cache off:         $(TALLY_CACHE=off timed "$BUILD/tally" report "$f"), $(ratio)"
		"$W/unwind_stats" "$f"
	done
done
