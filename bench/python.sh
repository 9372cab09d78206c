#!/bin/bash
# The cost of Python frames on the target, side by side in one run: a CPU-bound CPython 3.11
# script times its own work loop (time.perf_counter around a fixed amount of work, so
# tally's start-up and the interpreter's are not counted) under `tally record -F 1000
# --no-python` and `tally record -F 1000` (Python frames read by the BPF program at every
# sample), alternated N times each. Two workloads: a shallow one (a loop 4 frames deep) and
# a deep one (the same loop under 200 frames of recursion, every sample walking them all).
# Prints the medians, their ratio (issue 14's target: at most 1.10x), samples per second of
# the script's time, and lost records (the kernel's, and those the bpf-output events could
# not take). Each run does about a second of work: the whole takes about a minute.
# Usage: bench/python.sh [BUILD] [N]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-5}
PY=/usr/bin/python3.11
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cat >"$W/work.py" <<'PY'
import sys
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def down(depth, n):
    return down(depth - 1, n) if depth else leaf(n)


depth = int(sys.argv[1])
sys.setrecursionlimit(10000)
t = time.process_time()
total = sum(down(depth, 20000) for _ in range(int(sys.argv[2])))
print("loop %.4f" % (time.process_time() - t), file=sys.stderr)
print(total > 0)
PY
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# run DEPTH ROUNDS OPTS...: "loop SECONDS samples N lost N pylost N stacks N"
run() {
	local depth=$1 rounds=$2
	shift 2
	"$BUILD/tally" record -F 1000 -o "$W/t.data" "$@" -- $PY "$W/work.py" "$depth" "$rounds" \
		2>&1 >/dev/null | awk '
		/^loop / { loop = $2 }
		/samples,/ { s = $3; l = $5 }
		/Python:/ { st = $6; pl = $11; us = $13 }
		END { printf "loop %s samples %s lost %s pylost %d stacks %d us %s\n", loop, s, l, pl,
			      st, us + 0 }'
}

# bench NAME DEPTH ROUNDS: N alternated pairs, then one line per mode and the ratio.
bench() {
	local name=$1 depth=$2 rounds=$3
	: >"$W/off" && : >"$W/on"
	for _ in $(seq "$N"); do
		run "$depth" "$rounds" --no-python >>"$W/off"
		run "$depth" "$rounds" >>"$W/on"
	done
	local off on
	off=$(awk '{ print $2 }' "$W/off" | median)
	on=$(awk '{ print $2 }' "$W/on" | median)
	for mode in off on; do
		awk -v m=$mode -v name="$name" '
			{ loop += $2; s += $4; l += $6; pl += $8; st += $10; us += $12 }
			END { printf "%-20s Python frames %-3s: %5.0f samples/s of script time, lost %d" \
				  " (bpf-output %d), %d stacks, %.1f us per sample in BPF\n", name, m,
				  s / loop, l, pl, st, us / NR }' "$W/$mode"
	done
	awk -v a="$off" -v b="$on" -v name="$name" 'BEGIN {
		printf "%-20s script time, median of runs: %.3f s off, %.3f s on: %.3fx (target <= 1.10x)\n",
			name, a, b, b / a }'
}

bench "shallow (4 frames)" 0 1000
bench "deep (204 frames)" 200 1000
