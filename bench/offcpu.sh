#!/bin/bash
# Off-CPU recording cost, side by side: a switch-heavy workload (two threads bouncing a
# byte through two pipes N times, tests/record/offcpu_prog.c "switch": two context switches
# per round trip, US microseconds of work on one side of each), timed by itself, run bare,
# under
# `perf record -e sched:sched_switch --call-graph dwarf` and under `tally record --off-cpu`
# (which also samples cpu-clock at 1 kHz). For each: the workload's slowdown (median of R
# runs), the file size, the switch samples the file holds and the samples lost.
# Usage: bench/offcpu.sh [BUILD] [N] [US] [R]   (prints figures, not a test; needs root)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-5000}
US=${3:-100}
R=${4:-3}
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
gcc -O2 -g -pthread -o "$W/prog" tests/record/offcpu_prog.c
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
loop() { grep -o 'loop [0-9.]*' | awk '{print $2}'; }
size() { stat -c %s "$1" | awk '{printf "%.1f MiB", $1 / 1048576}'; }

bare=$(for i in $(seq "$R"); do "$W/prog" switch "$N" "$US" 2>&1 >/dev/null | loop; done | median)
row() { # NAME DATA TIME SWITCHES LOST
	awk -v n="$1" -v t="$3" -v b="$bare" -v s="$(size "$2")" -v k="$4" -v l="$5" -v e=$((2 * N)) \
		'BEGIN {printf "| %s | %.3f s | %.2fx | %s | %s (of at least %d) | %s |\n", n, t, t / b, s, k, e, l}'
}
echo "switch workload, $N round trips with $US us of work each, median of $R runs; bare: $bare s"
echo
echo "| recorder | workload | slowdown | file | switch samples | lost |"
echo "|---|---|---|---|---|---|"
for size in 8192 32768; do
	t=$(for i in $(seq "$R"); do perf record -q -e sched:sched_switch --call-graph dwarf,$size \
		-o "$W/p.data" "$W/prog" switch "$N" "$US" 2>&1 >/dev/null | loop; done | median)
	k=$(perf report -i "$W/p.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	l=$(perf report -i "$W/p.data" 2>/dev/null | awk '/Total Lost Samples:/ {print $NF; exit}')
	row "perf record -e sched:sched_switch --call-graph dwarf,$size" "$W/p.data" "$t" "${k:-?}" "${l:-0}"
	t=$(for i in $(seq "$R"); do "$BUILD/tally" record -q --off-cpu --call-graph dwarf,$size \
		-o "$W/t.data" -- "$W/prog" switch "$N" "$US" 2>&1 >/dev/null | loop; done | median)
	lost=$("$BUILD/tally" record --off-cpu --call-graph dwarf,$size -o "$W/t.data" -- \
		"$W/prog" switch "$N" "$US" 2>&1 >/dev/null | sed -n 's/.* samples, \([0-9]*\) lost.*/\1/p')
	k=$("$BUILD/tally" report "$W/t.data" 2>/dev/null | awk '/off-CPU intervals/ {print $NF; exit}')
	row "tally record --off-cpu --call-graph dwarf,$size" "$W/t.data" "$t" "${k:-?}" "${lost:-?}"
done
