#!/bin/bash
# What the tracepoints of the VM and the runtime cost while no tracer is attached: src/sbpf
# and src/solana are compiled twice with the project's flags, as is and with
# -DTALLY_NO_TRACEPOINTS (which compiles them away), each linked into bench_sbpf with the
# rest of tally's modules; the two binaries then run alternately REPS times (ROUNDS runs of
# each program and mode per turn), and the best rate of each is kept: the machine is
# shared, so the fastest run is the one least disturbed.
# Prints, per program and mode, both rates and their ratio (with / without); arith and bytes
# make no syscall, sysc one every 3 instructions (the probes sit on the syscall path).
# Usage: bench/sbpf/tracepoints.sh [BUILD_DIR] [REPS] [ROUNDS]   (BUILD_DIR has modules.a)
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
reps=${2:-15}
rounds=${3:-3}
cc=${CC:-cc}
[ "$build" = build-clang ] && cc=clang
cflags="-std=gnu11 -g -fPIC -O2 -Iinclude -Isrc -D_GNU_SOURCE"
libs=$(sed -n "s/^LIBS := //p" Makefile)
dir=$build/bench/sbpf
for variant in with without; do
	mkdir -p "$dir/$variant"
	extra=
	[ $variant = without ] && extra=-DTALLY_NO_TRACEPOINTS
	# interp_loops.c first, right after the benchmark's own code: the loops then sit at the same
	# address in both binaries, so the alignment of their jump targets (worth +-10% with
	# clang, the code being identical) does not differ between them.
	objs=
	for src in src/sbpf/interp_loops.c $(ls src/sbpf/*.c src/solana/*.c src/solana/*/*.c | grep -v '^src/sbpf/interp_loops\.c$'); do
		o=$dir/$variant/$(basename "${src%.c}").o
		nice $cc $cflags $extra -c "$src" -o "$o"
		objs="$objs $o"
	done
	nice $cc $cflags -o "$dir/bench_$variant" bench/sbpf/bench_sbpf.c $objs "$build/modules.a" $libs
done
# The probes exist in one binary and not in the other.
[ "$(readelf -n "$dir/bench_with" | grep -c 'Provider: tally_sbpf')" -gt 0 ] &&
	[ "$(readelf -n "$dir/bench_without" | grep -c 'Provider: tally_sbpf')" = 0 ] ||
	{ echo "tracepoints.sh: the two builds do not differ in probes" >&2; exit 1; }
# The interpreter loops carry no probe (interp_trace.c does): their code must not differ.
# (calls leave the loops for code placed differently: their targets are left out)
loops() {
	objdump -d --no-show-raw-insn "$1" | awk '/^[0-9a-f]+ <sbpf_interp_run(_hooked)?>:/,/^$/' |
		sed -E 's/(call +)[0-9a-f]+ /\1/'
}
if cmp -s <(loops "$dir/bench_with") <(loops "$dir/bench_without"); then
	echo "both interpreter loops: identical code at identical addresses with and without tracepoints"
else
	echo "the interpreter loops DIFFER with and without tracepoints"
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$reps"); do
	for variant in without with; do
		nice "$dir/bench_$variant" "$rounds" | sed "s/^/$variant /" >>"$out"
	done
done
echo "best of $reps x $rounds runs each, $cc -O2, M instructions/s"
printf "%-16s %10s %10s %8s\n" "program mode" without with ratio
awk '{ k = $2 " " $3; r = $6 + 0; if (r > best[$1, k]) best[$1, k] = r; keys[k] = 1 }
	END {
		for (k in keys)
			printf "%-16s %10.1f %10.1f %8.4f\n", k, best["without", k], best["with", k],
				best["with", k] / best["without", k]
	}' "$out" | sort
