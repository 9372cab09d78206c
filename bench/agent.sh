#!/bin/bash
# What the agent costs (docs/agent.md), side by side in one run, alternating the variants
# REPS times and keeping each one's best CPU time (user + sys of the process; the machine
# is shared, the least disturbed run is the fairest):
#
#   stackvm (examples/stackvm.c, SCALE rounds):
#     off      built with -DTALLY_AGENT_DISABLE: no agent code at all
#     publish  the agent in, pc and frames published to a thread state nobody reads
#     mixed    --mixed: published to the loop record in the loop's own frame (mixed mode,
#              without tally record: what the program pays)
#     sample   publishing, with the sampler at 1 kHz (its own CPU reported apart)
#     exact    exact mode: a tally_agent_cost call per instruction, enter/exit per call
#   sBPF (tests/agent/sbpf_shares.c, 480 M CU; needs clang):
#     plain    tally sbpf run --no-profile: the plain loop
#     publish  --sample=10: the publishing loop and its call/return hooks (10 Hz: the
#              sampler's share is negligible)
#     sample   --sample=1000
#     exact    the default exact CU profile
#   Lua 5.4 (bench/agent.lua with build/lua/tally.so; PART=loop: one loop, no call in it;
#   PART=calls: fib, a call per few instructions):
#     off      lua5.4 without the module
#     publish  -ltally, its call/return hooks keeping the shadow stack, sampler at 10 Hz
#     sample   the same at 1 kHz
#     timer    TALLY_LUA_MODE=timer at 1 kHz: no hook but the one-shot one a timer arms
#              (nothing per call or instruction: the signal and a walk of the stack per
#              sample), writing the same stream
#     mixed    TALLY_LUA_MODE=mixed under tally.run, without tally record: the call/return
#              hooks writing the shadow stack into tally.run's frame (what mixed mode costs
#              the program; tally record's own cost comes on top)
#     exact    TALLY_LUA_MODE=exact: the count hook at every instruction as well
#   sampler    bench/agent_sampler.c: the sampler's CPU time (the kernel's, of its thread) per
#              second of wall time and per wakeup at 1 kHz, with 1 and with 8 threads
#              publishing, against a thread that only sleeps to the same jittered deadlines
#              (the floor of any sampler that wakes at 1 kHz), REPS rounds of 2 s each,
#              alternating, in one process; and the process's CPU time past no sampling's
#              with the sampler thread, with a signal source on the wall clock and on the
#              threads' CPU clocks (a POSIX timer per publishing thread, its handler copying
#              the thread's own state into a ring: no thread woken per sample)
#
# One run (bench/agent.sh build 5 8000, gcc -O2, a 2-core VM shared with other work, load
# average about 12; 2026-12-01):
#   stackvm  off 1.000 s  publish 1.026 s (x1.026)  sample 1.048 s (x1.048)
#            exact 2.308 s (x2.308)                  [an earlier run: publish x0.950]
#   sBPF     plain 0.475 s  publish 0.489 s (x1.029)  sample 0.507 s (x1.067)
#            exact 0.675 s (x1.421)                  [an earlier run: publish x1.040]
#   Lua (bench/agent.sh build 3 8000, load average 9; 2026-12-02):
#     loop   off 0.455 s  publish 0.480 s (x1.054)  sample 0.603 s (x1.325)  exact x14.6
#     calls  off 0.243 s  publish 1.678 s (x6.905)  sample 1.744 s (x7.176)  exact x13.4
#     [interleaved best of 5, same day: loop 0.35/0.35/0.36 s, calls 0.19/1.12/1.15 s]
#   sampler at 1 kHz: see docs/agent.md's Cost; the floor, a thread that only sleeps to the
#   same deadlines, is 2-4% of a core on this VM (a timer wakeup costs it 20-35 us of CPU).
#
# Usage: bench/agent.sh [BUILD_DIR] [REPS] [SCALE]   (BUILD_DIR has libtally.a and tally)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${2:-5}
scale=${3:-4000}
libs=$(sed -n "s/^LIBS := //p" Makefile)
dir=$build/bench/agent
mkdir -p "$dir"
cflags="-std=gnu11 -O2 -Iinclude"
cc $cflags -DTALLY_AGENT_DISABLE -o "$dir/stackvm-off" examples/stackvm.c
cc $cflags -o "$dir/stackvm" examples/stackvm.c "$build/libtally.a" $libs
cc $cflags -o "$dir/sampler" bench/agent_sampler.c "$build/libtally.a" $libs
have_clang=0
if command -v clang >/dev/null &&
	clang -target bpf -mcpu=v3 -O2 -c tests/agent/sbpf_shares.c -o "$dir/shares.o"; then
	have_clang=1
	printf '\144' >"$dir/in"
fi
have_lua=0
lua_rounds=$(( scale / 400 > 0 ? scale / 400 : 1 ))
lua=(LUA_CPATH="$build/lua/?.so;;" ROUNDS=$lua_rounds TALLY_LUA_OUTPUT="$dir/l.folded")
command -v lua5.4 >/dev/null && [ -f "$build/lua/tally.so" ] && have_lua=1

# cpu CMD...: CPU seconds (user + sys) of CMD, its output to $dir/out and $dir/err.
cpu() {
	local TIMEFORMAT=%3U+%3S t
	t=$( { time "$@" >"$dir/out" 2>"$dir/err"; } 2>&1 )
	echo "$t" | bc
}
declare -A best
keep() { # keep NAME SECONDS
	if [ -z "${best[$1]:-}" ] || [ "$(echo "$2 < ${best[$1]}" | bc)" = 1 ]; then best[$1]=$2; fi
}
vm=("$dir/stackvm" -n "$scale")
sbpf=("$build/tally" sbpf run "$dir/shares.o" --input "$dir/in" --budget 1000000000)
for ((r = 0; r < reps; r++)); do
	keep vm_off "$(cpu "$dir/stackvm-off" -n "$scale")"
	keep vm_publish "$(cpu "${vm[@]}")"
	keep vm_mixed "$(cpu "${vm[@]}" --mixed "$dir")"
	keep vm_sample "$(cpu "${vm[@]}" --sample "$dir/s.folded" --hz 1000)"
	keep vm_exact "$(cpu "${vm[@]}" --exact "$dir/e.pb.gz")"
	if [ $have_lua = 1 ]; then
		for part in loop calls; do
			keep lua_${part}_off "$(cpu env PART=$part ROUNDS=$lua_rounds lua5.4 bench/agent.lua)"
			keep lua_${part}_publish "$(cpu env "${lua[@]}" PART=$part TALLY_LUA_HZ=10 \
				lua5.4 -ltally bench/agent.lua)"
			keep lua_${part}_sample "$(cpu env "${lua[@]}" PART=$part TALLY_LUA_HZ=1000 \
				lua5.4 -ltally bench/agent.lua)"
			keep lua_${part}_timer "$(cpu env "${lua[@]}" PART=$part TALLY_LUA_MODE=timer \
				TALLY_LUA_HZ=1000 TALLY_LUA_OUTPUT="$dir/t.folded" lua5.4 -ltally bench/agent.lua)"
			keep lua_${part}_mixed "$(cpu env "${lua[@]}" PART=$part TALLY_LUA_MODE=mixed \
				TALLY_LUA_REGISTRY_DIR="$dir" lua5.4 -ltally -e 'tally.run(dofile, "bench/agent.lua")')"
			keep lua_${part}_exact "$(cpu env "${lua[@]}" PART=$part TALLY_LUA_MODE=exact \
				TALLY_LUA_EXACT_OUTPUT="$dir/l.pb.gz" lua5.4 -ltally bench/agent.lua)"
		done
	fi
	if [ $have_clang = 1 ]; then
		keep sbpf_plain "$(cpu "${sbpf[@]}" --no-profile)"
		keep sbpf_publish "$(cpu "${sbpf[@]}" --sample=10 --folded "$dir/p.folded")"
		keep sbpf_sample "$(cpu "${sbpf[@]}" --sample=1000 --folded "$dir/p.folded")"
		keep sbpf_exact "$(cpu "${sbpf[@]}" --folded "$dir/p.folded")"
	fi
done
for threads in 1 8; do
	"$dir/sampler" 1000 2 "$reps" $threads >"$dir/sampler.$threads"
done

insns=$("$dir/stackvm-off" -n "$scale" | awk '$1 != "result" { s += $2 } END { print s }')
ratio() { echo "scale=3; ${best[$1]} / ${best[$2]}" | bc; }
echo "stackvm, $insns instructions, best CPU of $reps:"
for m in off publish mixed sample exact; do
	printf '  %-8s %7.3f s  %6.1f M insns/s  x%s\n' $m "${best[vm_$m]}" \
		"$(echo "$insns / ${best[vm_$m]} / 1000000" | bc -l)" "$(ratio vm_$m vm_off)"
done
if [ $have_clang = 1 ]; then
	echo "sBPF VM, 480002303 CU, best CPU of $reps:"
	for m in plain publish sample exact; do
		printf '  %-8s %7.3f s  x%s\n' $m "${best[sbpf_$m]}" "$(ratio sbpf_$m sbpf_plain)"
	done
fi
if [ $have_lua = 1 ]; then
	for part in loop calls; do
		echo "Lua 5.4, PART=$part, ROUNDS=$lua_rounds, best CPU of $reps:"
		for m in off publish sample timer mixed exact; do
			printf '  %-8s %7.3f s  x%s\n' $m "${best[lua_${part}_$m]}" \
				"$(ratio lua_${part}_$m lua_${part}_off)"
		done
	done
fi
# the sampler's and the floor's CPU: median (best) over the rounds, % of a core and per wakeup
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
figure() { # FILE WHAT COLUMN
	local m b
	m=$(awk -v w="$2" -v c="$3" '$1 == w { print $c + 0 }' "$1" | median)
	b=$(awk -v w="$2" -v c="$3" '$1 == w { print $c + 0 }' "$1" | sort -n | head -1)
	echo "$m ($b)"
}
for threads in 1 8; do
	f=$dir/sampler.$threads
	echo "sampler at 1 kHz, $threads thread(s) publishing, median (best) of $reps rounds of 2 s:"
	for w in sampler floor; do
		printf '  %-8s %s%% of a core, %s us per wakeup, %s wakeups\n' $w "$(figure "$f" $w 2)" \
			"$(figure "$f" $w 6)" "$(awk -v w=$w '$1 == w { print $10 }' "$f" | median)"
	done
	echo "  the program's CPU time past no sampling's, median (best):"
	for w in thread sigwall sigcpu; do
		printf '  %-8s %s%% of a core, %s us per sample, %s samples/s\n' $w "$(figure "$f" $w 7)" \
			"$(figure "$f" $w 11)" "$(awk -v w=$w '$1 == w { print $15 }' "$f" | median)"
	done
done
