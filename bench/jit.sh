#!/bin/bash
# Side by side: perf report --stdio and tally report on the same recordings of a Node run
# with --perf-basic-prof (two hot JS functions, 5 s), recorded by perf record --call-graph
# dwarf and by tally record, in one run: the JIT frames come from the perf map node wrote
# (tally: the recording's copy; perf: /tmp/perf-PID.map, left in place until the end).
# Prints, per file, the wall time, CPU time (task-clock, best of 5) and peak memory of
# each report and the ratio of their CPU times, and both tools' share of samples in the two
# JS functions (they should agree). Usage: bench/jit.sh [BUILD]   (not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
W=$(mktemp -d /tmp/tally-bench-jit.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do rm -f "/tmp/perf-$p.map"; done
	rm -rf "$W"
}
trap cleanup EXIT
export TALLY_CACHE=$W/cache

cat >"$W/app.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sumsq(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * i) % 7; return s; }
let t = Date.now(), a = 0;
while (Date.now() - t < 5000) { a += fib(30); a += sumsq(1500000); }
console.log(a > 0 ? "ok" : "no");
JS
AS_PID=(sh -c 'echo $$ >"$0"; exec "$@"' "$W/pid")

# Best of 5 by CPU time, as bench/unwind.sh measures: "WALL s wall, CPU ms cpu, RSS MiB".
timed() {
	for _ in 1 2 3 4 5; do
		perf stat -e task-clock -o "$W/stat" -- "$@" >/dev/null 2>&1
		awk '/msec task-clock/ {cpu = $1} /seconds time elapsed/ {wall = $1}
			END {printf "%.1f %.3f\n", cpu, wall}' "$W/stat"
	done | sort -g | head -1 >"$W/best"
	/usr/bin/time -f "%M" -o "$W/time" "$@" >/dev/null 2>&1
	read -r cpu wall <"$W/best"
	echo "$cpu" >"$W/cpu"
	echo "$wall s wall, $cpu ms cpu, $(awk '{printf "%.1f", $1 / 1024}' "$W/time") MiB"
}

# shares LEAVES: "fib X%, sumsq Y%" of all samples, from "COUNT\tLEAF" lines.
shares() {
	awk -F'\t' '{ t += $1 } $2 ~ /^JS:[*^~+]?fib / { f += $1 } $2 ~ /^JS:[*^~+]?sumsq / { s += $1 }
		END { printf "fib %.1f%%, sumsq %.1f%%", 100 * f / t, 100 * s / t }' "$1"
}

perf record -q -N -F 999 --call-graph dwarf -o "$W/perf.data" -- "${AS_PID[@]}" \
	node --perf-basic-prof "$W/app.js" >/dev/null 2>&1
PIDS+=("$(cat "$W/pid")")
"$BUILD/tally" record -q -o "$W/tally.data" -- "${AS_PID[@]}" \
	node --perf-basic-prof "$W/app.js" >/dev/null
PIDS+=("$(cat "$W/pid")")

for rec in perf tally; do
	f="$W/$rec.data"
	echo "== node --perf-basic-prof, recorded by $rec ($(du -m "$f" | cut -f1) MB," \
		"map $(wc -l <"/tmp/perf-${PIDS[$([ $rec = perf ] && echo 0 || echo 1)]}.map") lines)"
	echo "perf report --stdio: $(timed perf report -i "$f" --stdio)"
	pcpu=$(cat "$W/cpu")
	echo "tally report:        $(timed "$BUILD/tally" report "$f")"
	tcpu=$(cat "$W/cpu")
	awk -v p="$pcpu" -v t="$tcpu" 'BEGIN { printf "CPU ratio perf/tally: %.1fx\n", p / t }'
	perf report -i "$f" -n --stdio --no-children --sort sym -g none 2>/dev/null |
		awk -F'  +' '/^ +[0-9.]+%/ { sub(/^\[[.k]\] /, "", $4); print $3 "\t" $4 }' >"$W/p"
	"$BUILD/tally" export -f folded "$f" 2>/dev/null |
		awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, s, ";"); print n "\t" s[k] }' >"$W/t"
	echo "shares: perf $(shares "$W/p"); tally $(shares "$W/t")"
done
