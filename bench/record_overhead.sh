#!/bin/bash
# Recording overhead on the target, side by side: the issue-4 deep-chain workload times its
# own main loop (perf record's start-up adds about a second of wall time, which is not the
# target's cost), run bare, under `perf record -F 1000 --call-graph dwarf,32768` and under
# `tally record` (same settings by default). Prints the median of N runs and the lost
# sample counts. Usage: bench/record_overhead.sh [BUILD] [N]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-5}
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cat > "$W/deep.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void *keep[4096];
__attribute__((noinline)) static long f12(int n) { long c = 0; for (int i = 0; i < n; i++) { int k = i & 4095; free(keep[k]); keep[k] = malloc(64); c += (long)keep[k]; } return c; }
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(f11, f12, 1) F(f10, f11, 2) F(f9, f10, 3) F(f8, f9, 4) F(f7, f8, 5) F(f6, f7, 6) F(f5, f6, 7) F(f4, f5, 8) F(f3, f4, 9) F(f2, f3, 10) F(f1, f2, 11)
int main(void) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a); long s = 0; for (int i = 0; i < 1000; i++) s += f1(200000); clock_gettime(CLOCK_MONOTONIC, &b); fprintf(stderr, "loop %.4f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9); printf("%ld\n", s); return 0; }
C
gcc -O2 -g -o "$W/deep" "$W/deep.c"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
loop() { grep -o 'loop [0-9.]*' | awk '{print $2}'; }
bare=$(for i in $(seq "$N"); do "$W/deep" 2>&1 >/dev/null | loop; done | median)
perf_t=$(for i in $(seq "$N"); do perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$W/p.data" "$W/deep" 2>&1 >/dev/null | loop; done | median)
perf_lost=$(perf report -i "$W/p.data" --stats 2>/dev/null | awk '/LOST events:/{print $3}' | head -1)
tally_t=$(for i in $(seq "$N"); do "$BUILD/tally" record -o "$W/t.data" -- "$W/deep" 2>&1 >/dev/null | loop; done | median)
tally_lost=$("$BUILD/tally" record -o "$W/t.data" -- "$W/deep" 2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) lost.*/\1/p')
awk -v b="$bare" -v p="$perf_t" -v t="$tally_t" -v pl="${perf_lost:-0}" -v tl="${tally_lost:-?}" 'BEGIN {
	printf "workload loop, median of runs: bare %.3f s\n", b
	printf "perf record  --call-graph dwarf,32768 -F 1000: %.3f s (%.2fx), lost records %s\n", p, p / b, pl
	printf "tally record (dwarf, 32 KiB, 1 kHz):          %.3f s (%.2fx), lost records %s\n", t, t / b, tl }'
