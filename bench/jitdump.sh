#!/bin/bash
# Side by side: tally report and perf report on the same Node 20 recordings of a two-function
# JS workload run with --perf-prof --interpreted-frames-native-stack (JIT code named from
# jit-PID.dump), one by tally record and one by perf record -k 1 --call-graph dwarf. perf
# needs perf inject --jit first (it writes one ELF file per JIT function); tally reads the
# dump itself. Prints per recording the CPU time (best of 5, task-clock, children counted),
# wall time and peak memory of perf inject --jit, of perf report --stdio --no-inline on the
# injected file (with inline lookups perf runs addr2line for minutes on node) and of tally
# report on the recording, with the ratio of tally's CPU time to perf's, and both tools'
# shares of the two JS functions.
# Usage: bench/jitdump.sh [BUILD]   (not a test: prints figures)
set -eu
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
W=$(mktemp -d /tmp/tally-bench-jit.XXXXXX)
trap 'rm -rf "$W"' EXIT
# perf's build-id cache and the jitted-*.so files stay in $W.
export HOME=$W/home TALLY_CACHE=$W/cache
mkdir -p "$HOME"
cat >"$W/hot.js" <<'JS'
function alpha(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + i * i) % 1000003;
  return s;
}
function beta(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s ^ (i * 31)) % 999983;
  return s;
}
const end = Date.now() + 4000;
let acc = 0;
while (Date.now() < end) {
  acc += alpha(200000);
  acc += beta(300000);
}
console.log(acc > 0 ? "done" : "zero");
JS

. bench/timed.sh
share() { awk -v f="$2" '$0 ~ "JS:[*~^+]?" f " " {sub("%", "", $1); s += $1}
	END {printf "%.2f%%", s}' "$1"; }

for rec in tally perf; do
	d="$W/$rec"
	mkdir -p "$d"
	cd "$d"
	if [ $rec = tally ]; then
		"$BUILD/tally" record -q -o rec.data -- node --perf-prof \
			--interpreted-frames-native-stack "$W/hot.js" >/dev/null
	else
		perf record -q -k 1 --call-graph dwarf -o rec.data -- node --perf-prof \
			--interpreted-frames-native-stack "$W/hot.js" >/dev/null 2>&1
	fi
	echo "== recorded by $rec ($(du -m rec.data | cut -f1) MB, $(ls jit-*.dump))"
	echo "perf inject --jit:              $(timed perf inject --jit -i rec.data -o inj.data)"
	perf inject --jit -i rec.data -o inj.data
	echo "perf report --stdio --no-inline: $(timed perf report --no-inline -i inj.data --stdio)"
	perf_cpu=$(cat "$W/cpu")
	echo "tally report:                   $(timed "$BUILD/tally" report rec.data)," \
		"$(awk -v p="$perf_cpu" '{printf "%.1fx", p / $1}' "$W/cpu") less cpu"
	perf report --no-inline -i inj.data --stdio --no-children -g none --sort sym \
		>perf.txt 2>/dev/null
	"$BUILD/tally" report --top 200 rec.data 2>/dev/null | sed '/^Top functions by total/q' \
		>tally.txt
	echo "shares: alpha tally $(share tally.txt alpha) perf $(share perf.txt alpha)," \
		"beta tally $(share tally.txt beta) perf $(share perf.txt beta)"
	cd - >/dev/null
done
