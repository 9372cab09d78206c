#!/bin/bash
# Lua frames read at the sample (docs/lua.md) against plain recording: two scripts of our
# own, each timed by its own CPU time (os.clock around the work), under `tally record
# -F 1000`, N alternated rounds:
#   plain  Debian's lua5.4 copied under another name (plainlua), which tally does not take
#          for Lua: the kernel's samples alone (the baseline);
#   lua    lua5.4 itself: each sampled thread stopped and its Lua frames read (ptrace mode).
# Scripts: calls (a million calls a round of small Lua functions: the agent's hooks cost
# 6.8-9.6x there) and loop (arithmetic in one function). For each: the script's time
# (median, least) and its ratio to plain's (the issue's target: at most 1.10x), samples,
# and from tally's summary the time each sampled thread was held stopped for the read and
# tally's CPU per ptrace sample.
# Usage: bench/lua.sh [BUILD] [N]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
N=${2:-5}
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp /usr/bin/lua5.4 "$W/plainlua"
cat >"$W/calls.lua" <<'LUA'
local function add(a, b) return a + b end
local function step(x) return add(x, 1) end
local t = os.clock()
local x = 0
for _ = 1, 3000000 do x = step(x) end
io.stderr:write(string.format("loop %.4f\n", os.clock() - t))
LUA
cat >"$W/loop.lua" <<'LUA'
local t = os.clock()
local x = 0
for i = 1, 30000000 do x = x + i % 7 end
io.stderr:write(string.format("loop %.4f\n", os.clock() - t))
LUA

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
least() { sort -n | head -1; }

# run LUA SCRIPT: "loop S samples N held_us X tally_us Y"
run() {
	"$BUILD/tally" record -F 1000 -o "$W/t.data" -- "$1" "$W/$2.lua" 2>&1 >/dev/null | awk '
		/^loop / { loop = $2 }
		/samples,/ { s = $3 }
		/other interpreters:/ { match($0, /[0-9.]+ us per sample/); held = substr($0, RSTART, RLENGTH) + 0 }
		/ptrace mode:/ { match($0, /[0-9.]+ us of/); pt = substr($0, RSTART, RLENGTH) + 0 }
		END { printf "loop %s samples %d held_us %.1f tally_us %.1f\n", loop, s, held, pt }'
}

for script in calls loop; do
	for _ in $(seq "$N"); do
		run "$W/plainlua" $script >>"$W/$script.plain.out"
		run lua5.4 $script >>"$W/$script.lua.out"
	done
	base=$(awk '{ print $2 }' "$W/$script.plain.out" | median)
	for mode in plain lua; do
		med=$(awk '{ print $2 }' "$W/$script.$mode.out" | median)
		low=$(awk '{ print $2 }' "$W/$script.$mode.out" | least)
		awk -v s=$script -v m=$mode -v med="$med" -v low="$low" -v base="$base" '
			{ n += $4; h += $6; t += $8 }
			END { printf "%-5s %-5s script %.3f s median (%.3fx plain), %.3f s least; " \
				  "%d samples; thread held %.1f us per sample; tally %.1f us CPU " \
				  "per ptrace sample\n", s, m, med, med / base, low, n / NR, h / NR,
				  t / NR }' "$W/$script.$mode.out"
	done
done
