#!/bin/bash
# What reading Ruby frames costs the program (docs/ruby.md, "Cost"): the chain workload
# (tests/ruby/rb/chain.rb's Chain#outer -> middle -> each's block -> leaf, a fixed amount of
# work in each phase, bytecode then Array#sort) timed by its own clock (CLOCK_MONOTONIC
# around the work: a stopped thread's CPU time does not move), under tally record -F 1000,
# N alternated rounds:
#   off  --no-ruby: native frames only (the kernel samples it);
#   on   with Ruby frames (ptrace mode: each sampled thread stopped while they are read).
# Prints each way's median and least time, on's ratio to off's, and tally's own figures
# for on (us per sample reading Ruby frames, tally's CPU per sample).
# Usage: bench/ruby.sh [BUILD] [N]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
N=${2:-3}
RUBY=/usr/bin/ruby3.1
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cat >"$W/work.rb" <<'RB'
require_relative "chain_lib"
File.write(ARGV[0], "started\n")
t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
c = Chain.new
Integer(ARGV[1]).times { c.outer(:bytecode, 2_000_000); c.outer(:sort, 400) }
warn format("loop %.4f", Process.clock_gettime(Process::CLOCK_MONOTONIC) - t)
RB
# chain.rb's Chain without its phases and oracle
sed -e '/^ORACLE = /d' -e '/^SECONDS = /d' -e '/^File.write/,$d' -e 's/note(kind, caller_locations(0)); //' \
	tests/ruby/rb/chain.rb >"$W/chain_lib.rb"

run() { # run off|on: the loop's time
	local opt=--no-ruby
	[ "$1" = on ] && opt=
	# shellcheck disable=SC2086
	"$BUILD/tally" record -F 1000 $opt -o "$W/c.data" -- "$RUBY" "$W/work.rb" "$W/started" 20 \
		2>"$W/err" >/dev/null
	awk '/^loop/ { print $2 }' "$W/err"
}

off=() on=()
for i in $(seq "$N"); do
	off+=("$(run off)")
	on+=("$(run on)")
	read_us=$(sed -n 's/.*other interpreters: .*, \([0-9.]*\) us per sample.*/\1/p' "$W/err")
	cpu_us=$(sed -n 's/.*ptrace mode: .*, \([0-9.]*\) us of tally.s CPU per sample.*/\1/p' "$W/err")
	echo "round $i: off ${off[-1]} s, on ${on[-1]} s; on: ${read_us:-?} us a sample held stopped, ${cpu_us:-?} us of tally's CPU"
done
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
least() { printf '%s\n' "$@" | sort -n | head -1; }
mo=$(med "${off[@]}") mn=$(med "${on[@]}") lo=$(least "${off[@]}") ln=$(least "${on[@]}")
awk -v mo="$mo" -v mn="$mn" -v lo="$lo" -v ln="$ln" 'BEGIN {
	printf "off %.3f s (least %.3f), on %.3f s (least %.3f): %.3fx (least %.3fx)\n",
		mo, lo, mn, ln, mn / mo, ln / lo }'
