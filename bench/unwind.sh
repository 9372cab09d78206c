#!/bin/bash
# Side by side: perf and tally unwinding the same perf.data recordings (perf record
# --call-graph dwarf,32768 and tally record) of the issue-4 deep-chain workload, built with
# clang+bfd, clang+lld, gcc, gcc with frame pointers. Prints, per file, perf script's
# single-frame share and average depth (the seed's counting script), the time and memory of
# perf report and tally report, and tally's own figures (unwinding and symbolizing only). Usage: bench/unwind.sh [BUILD]   (not a test: prints figures)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cat > "$W/deep.c" <<'C'
#include <stdlib.h>
#include <stdio.h>
static void *keep[4096];
__attribute__((noinline)) static long f12(int n) { long c = 0; for (int i = 0; i < n; i++) { int k = i & 4095; free(keep[k]); keep[k] = malloc(64); c += (long)keep[k]; } return c; }
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(f11, f12, 1) F(f10, f11, 2) F(f9, f10, 3) F(f8, f9, 4) F(f7, f8, 5) F(f6, f7, 6) F(f5, f6, 7) F(f4, f5, 8) F(f3, f4, 9) F(f2, f3, 10) F(f1, f2, 11)
int main(void) { long s = 0; for (int i = 0; i < 800; i++) s += f1(200000); printf("%ld\n", s); return 0; }
C
# shellcheck disable=SC2046
cc -O2 -Isrc -Iinclude -o "$W/unwind_stats" bench/unwind_stats.c "$BUILD/libtally.a" $(sed -n 's/^LIBS := //p' Makefile)
clang -O2 -g -fuse-ld=bfd -o "$W/deep_bfd" "$W/deep.c"
clang -O2 -g -fuse-ld=lld -o "$W/deep_lld" "$W/deep.c"
gcc -O2 -g -o "$W/deep_gcc" "$W/deep.c"
gcc -O2 -g -fno-omit-frame-pointer -o "$W/deep_fp" "$W/deep.c"

count() { perf script -i "$1" 2>/dev/null | awk '
/^[^ \t]/ {if (n) {t++; if (n==1) o++; s+=n} n=0; next}
/^[ \t]*[0-9a-f]+ / {n++}
END {if (n) {t++; if (n==1) o++; s+=n}
     printf "perf:  %d samples, %.1f%% single-frame, avg depth %.1f\n", t, 100*o/t, s/t}'; }
# CPU time (user + sys) besides wall time: the machine is shared, wall time is noisy.
timed() { /usr/bin/time -f "%e s wall, %U+%S s cpu, %M KiB" "$@" 2>&1 >/dev/null | tail -1; }

for b in deep_bfd deep_lld deep_gcc deep_fp; do
	perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$W/$b.perf.data" "$W/$b" >/dev/null 2>&1
	"$BUILD/tally" record -q -o "$W/$b.tally.data" -- "$W/$b" >/dev/null
	for rec in perf tally; do
		f="$W/$b.$rec.data"
		echo "== $b, recorded by $rec"
		count "$f"
		echo "perf report --stdio: $(timed perf report -i "$f" --stdio)"
		echo "tally report:        $(timed "$BUILD/tally" report "$f")"
		"$W/unwind_stats" "$f"
	done
done
