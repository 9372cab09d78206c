#!/bin/bash
# The first report on a machine (issue 19, target 2): tally report against perf report
# --stdio on one perf.data that perf recorded with --call-graph dwarf,32768: a chain of 15
# stages (main, s1..s13, sort) into libc's qsort (msort_with_tmp, recursive, inlined into
# qsort_r) and back out to a comparator, about 1,000 samples at 1 kHz. libc's frames need
# libc6-dbg's DWARF, which Debian ships zlib-compressed: tally inflates it on a machine where
# it never ran, and keeps a decompressed copy in its debug cache for the next report.
#
# Per round, the commands take turns (so that a change in the machine's load falls on all of
# them alike), each timed alone by perf stat (task-clock, and wall time):
#   perf         perf report --stdio (with the addr2line processes it starts)
#   empty cache  tally report with an empty debug cache (a new one per run): the first
#                report on a machine, as its user sees it; it inflates what the report
#                needs, and a detached process it starts at exit stores libc6-dbg's copy
#                (src/elf/debug_cache_background.c). Timed without that process (see
#                timed), which is waited for before the next command
#   empty, wait  the same with TALLY_CACHE_STORE=wait: the copy stored in the process
#   cache off    tally report with TALLY_CACHE=off: inflates what the report needs and
#                stores nothing (the floor of a first report)
#   cache filled tally report reading the copy the empty-cache runs stored
# Prints the best of ROUNDS (default 5) by CPU time for each, the ratios of perf's CPU time
# to tally's, and the background store's own CPU time: "empty, wait" less "cache off"
# (best against best). The load average before and after says how busy the machine was.
# Figures: bench/README.md.
# Usage: bench/report_first.sh [BUILD]   (not a test: prints figures; needs perf, gcc and
#        libc6-dbg). ROUNDS=5, TALLY=binary (environment); KEEP=DIR keeps the program and
#        the recording, for measuring another binary on the same file.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ROUNDS=${ROUNDS:-5}
TALLY=${TALLY:-$PWD/$BUILD/tally}
[ -x "$TALLY" ] || { echo "bench: $TALLY missing (make)" >&2; exit 1; }
W=${KEEP:-}
[ -n "$W" ] || { W=$(mktemp -d /tmp/tally-bench.XXXXXX) && trap 'rm -rf "$W"' EXIT; }
mkdir -p "$W"
cat >"$W/chain.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b) { int x = *(const int *)a, y = *(const int *)b; return (x > y) - (x < y); }
__attribute__((noinline)) static long sort(int n) {
	static int v[1 << 16];
	unsigned s = 1;
	long c = 0;
	for (int r = 0; r < n; r++) {
		for (int i = 0; i < 1 << 16; i++)
			v[i] = (int)(s = s * 1103515245u + 12345u);
		qsort(v, 1 << 16, sizeof(*v), cmp);
		c += v[r & 0xffff];
	}
	return c;
}
#define F(a, b, k) __attribute__((noinline)) static long a(int n) { long r = b(n) + k; __asm__ volatile("" : "+r"(r)); return r; }
F(s13, sort, 1) F(s12, s13, 2) F(s11, s12, 3) F(s10, s11, 4) F(s9, s10, 5) F(s8, s9, 6) F(s7, s8, 7)
F(s6, s7, 8) F(s5, s6, 9) F(s4, s5, 10) F(s3, s4, 11) F(s2, s3, 12) F(s1, s2, 13)
int main(int argc, char **argv) { int n = argc > 1 ? atoi(argv[1]) : 150; printf("%ld\n", s1(n)); return 0; }
C
data=$W/chain.perf.data
if [ ! -s "$data" ]; then
	gcc -O2 -g -o "$W/chain" "$W/chain.c"
	perf record -q -e cpu-clock -F 1000 --call-graph dwarf,32768 -o "$data" "$W/chain" 150 \
		>/dev/null 2>&1
fi

# timed NAME CMD...: one run of CMD alone, timed by perf stat; keeps NAME's best run (by
# CPU time) in best_cpu and best_wall, its output in $W/out.NAME. perf stat counts the
# command's threads and the children it starts (perf report's addr2line processes), and the
# detached store only if it ended before the report (it begins when the report exits, at
# the lowest priority: so far never). --no-inherit, as timed before, left out the report's
# threads (1-3 ms of inflating .debug_info).
declare -A best_cpu best_wall
timed() {
	local name=$1 cpu wall
	shift
	perf stat -e task-clock -o "$W/stat" -- "$@" >"$W/out.$name" 2>/dev/null
	read -r cpu wall < <(awk '/msec task-clock/ { c = $1 } /seconds time elapsed/ { w = $1 }
		END { print c, w }' "$W/stat")
	if [ -z "${best_cpu[$name]:-}" ] || awk -v a="$cpu" -v b="${best_cpu[$name]}" 'BEGIN { exit !(a < b) }'; then
		best_cpu[$name]=$cpu best_wall[$name]=$wall
	fi
}

# stored CACHE: waits (at most 30 s) for the background store to put the copy into CACHE.
stored() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -n "$(find "$1" -name '*.debug' 2>/dev/null)" ] && return
		sleep 0.1
	done
	echo "bench: warning: no copy stored in $1 after 30 s" >&2
}

echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(perf version)" >&2
filled=
for ((i = 0; i < ROUNDS; i++)); do
	timed perf perf report -i "$data" --stdio
	cold=$(mktemp -d "$W/cache.XXXXXX")
	timed empty env -u TALLY_CACHE_STORE TALLY_CACHE="$cold" "$TALLY" report "$data"
	stored "$cold"
	storing=$(mktemp -d "$W/cache.XXXXXX")
	timed wait env TALLY_CACHE_STORE=wait TALLY_CACHE="$storing" "$TALLY" report "$data"
	rm -rf "$storing"
	timed off env TALLY_CACHE=off "$TALLY" report "$data"
	timed filled env TALLY_CACHE="${filled:=$cold}" "$TALLY" report "$data"
	[ "$cold" = "$filled" ] || rm -rf "$cold"
done
rm -rf "$filled"
echo "bench: load at the end $(cut -d' ' -f1-3 /proc/loadavg); $(sed -n 's/^unwind: *//p' "$W/out.filled")" >&2
cmp -s "$W/out.empty" "$W/out.filled" && cmp -s "$W/out.wait" "$W/out.filled" &&
	cmp -s "$W/out.off" "$W/out.filled" ||
	echo "bench: warning: tally's reports differ between cache states" >&2

echo
echo "| command | CPU (ms) | wall (s) | perf's CPU / tally's |"
echo "|---|---:|---:|---:|"
for name in perf empty wait off filled; do
	case $name in
	perf) label="perf report --stdio" ;;
	empty) label="tally report, empty cache (first report; copy stored in the background)" ;;
	wait) label="tally report, empty cache, TALLY_CACHE_STORE=wait (copy stored in it)" ;;
	off) label="tally report, cache off (nothing stored)" ;;
	filled) label="tally report, cache filled" ;;
	esac
	awk -v l="$label" -v c="${best_cpu[$name]}" -v w="${best_wall[$name]}" -v p="${best_cpu[perf]}" -v n="$name" \
		'BEGIN { printf "| %s | %.1f | %.3f | %s |\n", l, c, w, n == "perf" ? "" : sprintf("%.1fx", p / c) }'
done
awk -v w="${best_cpu[wait]}" -v o="${best_cpu[off]}" \
	'BEGIN { printf "\nbackground store: %.1f ms of CPU (empty, wait less cache off), at nice 19, SCHED_IDLE\n", w - o }'
