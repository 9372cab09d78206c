#!/bin/bash
# Python frames' two modes side by side (docs/python.md, "Without privileges"): a CPython
# chain (tests/python/py/ptrace_work.py's branch -> leaf, a fixed amount of work, from a
# loop at module level) timed by its own CPU
# time (time.process_time around the work) under `tally record -F 1000` three ways, N
# alternated rounds:
#   native  as root, --no-python: the kernel's samples alone (the baseline);
#   bpf     as root: Python frames read by the BPF program at each sample;
#   ptrace  as nobody (no BPF allowed): ptrace mode, each sampled thread stopped for the read.
# For each: the script's time (median and least of the rounds) and its ratio to native's,
# samples, tally's CPU time per sample (its summary's "a sample: ... us of tally's CPU":
# all of tally's own CPU time, start-up included, the BPF program's loading among it,
# over the samples), and the Python figure of the summary (the BPF program's time per
# sample; in ptrace mode the time the thread was held stopped). nobody runs through scripts/as-nobody.sh.
# Usage: [PY=python3.X] bench/python_ptrace.sh [BUILD] [N]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
N=${2:-5}
PY=${PY:-/usr/bin/python3.11}
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 711 "$W"
mkdir "$W/u"
chown nobody:nogroup "$W/u"
cp tests/python/py/ptrace_work.py "$W/u/"
cat >"$W/u/work.py" <<'PY'
import sys
import time

from ptrace_work import branch

t = time.process_time()
for _ in range(int(sys.argv[1])):
    branch(20000)
print("loop %.4f" % (time.process_time() - t), file=sys.stderr)
PY

as_nobody() { scripts/as-nobody.sh "$W/u" "$@"; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
least() { sort -n | head -1; }

# run MODE: "loop S samples N tally_us X python_us Y ptrace_us Z" (tally's CPU per sample,
# the summary's Python figure, tally's CPU taking each ptrace sample)
run() {
	local mode=$1 cmd=() opt=()
	[ "$mode" = ptrace ] && cmd=(as_nobody)
	[ "$mode" = native ] && opt=(--no-python)
	"${cmd[@]}" "$BUILD/tally" record -F 1000 "${opt[@]}" -o "$W/u/t.data" -- \
		$PY "$W/u/work.py" 1500 2>&1 >/dev/null | awk '
		/^loop / { loop = $2 }
		/samples,/ { s = $3 }
		/a sample:/ { match($0, /[0-9.]+ us of/); own = substr($0, RSTART, RLENGTH) + 0 }
		/Python:/ { match($0, /[0-9.]+ us per sample/); us = substr($0, RSTART, RLENGTH) + 0 }
		/ptrace mode:/ { match($0, /[0-9.]+ us of/); pt = substr($0, RSTART, RLENGTH) + 0 }
		END { printf "loop %s samples %d tally_us %.1f python_us %.1f ptrace_us %.1f\n", loop,
			      s, own, us, pt }'
}

for _ in $(seq "$N"); do
	for mode in native bpf ptrace; do
		run $mode >>"$W/$mode"
	done
done
base=$(awk '{ print $2 }' "$W/native" | median)
for mode in native bpf ptrace; do
	med=$(awk '{ print $2 }' "$W/$mode" | median)
	low=$(awk '{ print $2 }' "$W/$mode" | least)
	case $mode in
	bpf) what="BPF program's time" ;;
	ptrace) what="thread held stopped" ;;
	*) what="-" ;;
	esac
	awk -v m=$mode -v med="$med" -v low="$low" -v base="$base" -v what="$what" '
		{ s += $4; t += $6; u += $8; p += $10 }
		END { printf "%-7s script %.3f s median (%.3fx native), %.3f s least; %d samples; " \
			  "tally %.1f us CPU per sample (%.1f us of it taking ptrace samples); " \
			  "%s %.1f us per sample\n", m, med, med / base, low, s / NR, t / NR, p / NR,
			  what, u / NR }' "$W/$mode"
done
