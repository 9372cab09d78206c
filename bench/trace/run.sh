#!/bin/bash
# Disabled-tracepoint cost, side by side with systemtap's <sys/sdt.h>: builds bench/trace/loop.c
# per variant with gcc and clang (-O2) and prints ns per loop iteration for probes of 0, 1
# and 6 arguments. Usage: bench/trace/run.sh
set -eu
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sdt=$(dirname "$(dirname "$(find /usr/include -path '*/sys/sdt.h' | head -1)")")
variants="none tally off sdt_sem sdt"
for cc in gcc clang; do
	for v in $variants; do
		extra=
		[ $v = off ] && extra=-DTALLY_NO_TRACEPOINTS
		$cc -O2 -DV_$v $extra -Iinclude -I"$sdt" bench/trace/loop.c -o "$out/$cc-$v"
	done
done
# Rounds interleave the variants so that load from elsewhere hits them alike; each cell
# keeps its best figure.
declare -A best
for round in 1 2 3; do
	for cc in gcc clang; do
		for v in $variants; do
			while read -r arity ns; do
				k=$cc-$v-$arity
				if [ -z "${best[$k]:-}" ] || awk -v a="$ns" -v b="${best[$k]}" 'BEGIN{exit !(a < b)}'; then
					best[$k]=$ns
				fi
			done < <(nice -n 5 "$out/$cc-$v")
		done
	done
done
printf '%-6s %-8s %10s %10s %10s\n' cc variant "0 args" "1 arg" "6 args"
for cc in gcc clang; do
	for v in $variants; do
		printf '%-6s %-8s %10s %10s %10s\n' $cc $v "${best[$cc-$v-0]}" "${best[$cc-$v-1]}" "${best[$cc-$v-6]}"
	done
done
echo "(ns per loop iteration, best of 3 rounds x 5 runs; 'none' is the loop without a probe)"
