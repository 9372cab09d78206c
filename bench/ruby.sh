#!/bin/bash
# What reading Ruby frames costs the program (docs/ruby.md, "Cost"), until tally record
# reads Ruby (the ptrace sampler for interpreters other than CPython): the chain workload
# (tests/ruby/rb/chain.rb's Chain#outer -> middle -> each's block -> leaf, a fixed amount of
# work in each phase, bytecode then Array#sort) timed by its own clock (CLOCK_MONOTONIC
# around the work: a stopped thread's CPU time does not move), N alternated rounds:
#   off  alone;
#   on   its main thread (the one that runs) stopped about every millisecond by
#        tests/ruby/src/rb_check.c, which reads its Ruby frames each time as the sampler
#        would (ptrace interrupt, walk, continue).
# Prints each way's median and least time, on's ratio to off's, the stops per second
# achieved and the walk's median time per stop (rb_check's W lines).
# Usage: bench/ruby.sh [BUILD] [N]   (prints figures, not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=$(realpath "${1:-build}")
N=${2:-3}
RUBY=/usr/bin/ruby3.1
W=$(mktemp -d /tmp/tally-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
# shellcheck disable=SC2046
cc -std=gnu11 -O2 -Isrc -Iinclude -o "$W/rb_check" tests/ruby/src/rb_check.c \
	"$BUILD/modules.a" $(sed -n 's/^LIBS := //p' Makefile)
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
	rm -f "$W/started"
	"$RUBY" "$W/work.rb" "$W/started" 20 2>"$W/err" &
	local pid=$!
	if [ "$1" = on ]; then
		while [ ! -s "$W/started" ]; do sleep 0.01; done
		"$W/rb_check" "$pid" 100000 1000 main >"$W/samples" 2>/dev/null || true
	fi
	wait "$pid"
	awk '/^loop/ { print $2 }' "$W/err"
}

off=() on=()
for i in $(seq "$N"); do
	off+=("$(run off)")
	on+=("$(run on)")
	stops=$(grep -c '^S' "$W/samples" || true)
	walk=$(awk '/^W/ { print $2 }' "$W/samples" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	echo "round $i: off ${off[-1]} s, on ${on[-1]} s, $stops stops, walk median $walk ns"
done
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
least() { printf '%s\n' "$@" | sort -n | head -1; }
mo=$(med "${off[@]}") mn=$(med "${on[@]}") lo=$(least "${off[@]}") ln=$(least "${on[@]}")
awk -v mo="$mo" -v mn="$mn" -v lo="$lo" -v ln="$ln" 'BEGIN {
	printf "off %.3f s (least %.3f), on %.3f s (least %.3f): %.3fx (least %.3fx)\n",
		mo, lo, mn, ln, mn / mo, ln / lo }'
