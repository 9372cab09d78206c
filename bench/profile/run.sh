#!/bin/bash
# Profile model and outputs at scale, side by side with go tool pprof on the same profile.
# Usage: bench/profile/run.sh [BUILD]   (default build; run `make` first)
# Prints the stage times and peak RSS of bench_profile (10M samples, 200k stacks), then the
# time and peak RSS of reading the exported pprof back: tally report vs go tool pprof -top,
# and tally export -f folded vs go tool pprof -traces (both walk every sample).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/tally-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$BUILD/bench"
LIBS=$(sed -n 's/^LIBS := //p' Makefile)
# shellcheck disable=SC2086
cc -std=gnu11 -O2 -Iinclude -Isrc -D_GNU_SOURCE -o "$BUILD/bench/bench_profile" \
	bench/profile/bench_profile.c "$BUILD/modules.a" $LIBS
nice "$BUILD/bench/bench_profile" "$OUT"
ls -l "$OUT" | awk 'NR > 1 {printf "  %-14s %10d bytes\n", $9, $5}'

measure() { # LABEL CMD...
	local label=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/time" nice "$@" >/dev/null 2>"$OUT/err" || { echo "$label: failed: $(tail -2 "$OUT/err")"; return; }
	read -r secs user sys kb <"$OUT/time"
	cpu=$(awk -v u="$user" -v s="$sys" "BEGIN {print u + s}")
	printf "%-44s %7.2f s wall %7.2f s cpu   peak RSS %5d MiB\n" "$label" "$secs" "$cpu" $((kb / 1024))
}
echo
echo "reading the exported pprof ($(du -h "$OUT/bench.pb.gz" | cut -f1)):"
measure "tally report bench.pb.gz" "$BUILD/tally" report "$OUT/bench.pb.gz"
measure "go tool pprof -top bench.pb.gz" go tool pprof -top "$OUT/bench.pb.gz"
measure "tally export -f folded bench.pb.gz" "$BUILD/tally" export -f folded "$OUT/bench.pb.gz"
measure "go tool pprof -traces bench.pb.gz" go tool pprof -traces "$OUT/bench.pb.gz"
measure "tally report bench.folded" "$BUILD/tally" report "$OUT/bench.folded"
if [ -x "$BUILD/tally" ] && "$BUILD/tally" help flamegraph >/dev/null 2>&1; then
	measure "tally flamegraph bench.pb.gz" "$BUILD/tally" flamegraph "$OUT/bench.pb.gz" -o "$OUT/b.svg"
fi
