#!/bin/bash
# make fuzz-check: every libFuzzer target in build-fuzz/ first runs each input of its
# regression corpus (fuzz/regressions/NAME/, inputs that once found a bug) and seed corpus
# (fuzz/corpus/NAME/) once, then fuzzes for FUZZ_SECONDS (default 20) from a scratch copy
# of both, so the checkout is never written. Any crash, leak, timeout (FUZZ_TIMEOUT
# seconds per input, default 10) or out-of-memory fails the check; its input is kept in
# build-fuzz/findings/NAME/ to be added to the regression corpus once fixed. FUZZ_JOBS
# (default 1) targets run at a time; each target's verdict is printed in the order given.
# usage: scripts/fuzz-check.sh [--if-available] [NAME...]
set -u
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-20} timeout=${FUZZ_TIMEOUT:-10} jobs=${FUZZ_JOBS:-1}

if [ "${1:-}" = --if-available ]; then
	shift
	probe='int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }'
	if ! printf '%s\n' "$probe" | clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
		echo "fuzz-check: skipped: clang with libFuzzer (-fsanitize=fuzzer) is not installed"
		exit 0
	fi
	make -s -j"$(nproc)" fuzz || exit 1
fi

names=("$@")
if [ ${#names[@]} = 0 ]; then
	for bin in build-fuzz/fuzz_*; do
		[ -x "$bin" ] && names+=("${bin#build-fuzz/fuzz_}")
	done
fi
if [ ${#names[@]} = 0 ]; then
	echo "fuzz-check: no targets in build-fuzz/ (make fuzz)"
	exit 1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tally-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# check NAME: one target's replay and fuzzing; its verdict goes to $scratch/NAME.result.
check() {
	local name=$1 bin=build-fuzz/fuzz_$1 seeds=() dir found log execs
	for dir in fuzz/regressions/$name fuzz/corpus/$name; do
		[ -d "$dir" ] && seeds+=("$dir")
	done
	if [ ! -x "$bin" ] || [ ${#seeds[@]} = 0 ]; then
		echo "fuzz-check: $name: no binary or no corpus (fuzz/corpus/$name/)" >"$scratch/$name.result"
		return 1
	fi
	found=build-fuzz/findings/$name
	mkdir -p "$found" "$scratch/$name"
	cp -r "${seeds[@]/%//.}" "$scratch/$name/"
	local opts=(-timeout="$timeout" -rss_limit_mb=2048 -artifact_prefix="$found/" -print_final_stats=1)
	log=$scratch/$name.log
	if "$bin" "${opts[@]}" -runs=0 "${seeds[@]}" >"$log" 2>&1 &&
		"$bin" "${opts[@]}" -max_total_time="$seconds" "$scratch/$name" >>"$log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		echo "fuzz-check: $name: ok, ${execs:-?} runs in ${seconds} s" >"$scratch/$name.result"
		rmdir "$found" 2>/dev/null
		return 0
	fi
	{
		echo "fuzz-check: $name: FAILED (input kept in $found/):"
		grep -E 'ERROR|SUMMARY|^==[0-9]+==|runtime error' "$log" | head -8 | sed 's/^/  /'
	} >"$scratch/$name.result"
	return 1
}

failed=()
start=$SECONDS
running=0
for name in "${names[@]}"; do
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	check "$name" &
	running=$((running + 1))
done
wait
for name in "${names[@]}"; do
	cat "$scratch/$name.result"
	grep -q "^fuzz-check: $name: ok," "$scratch/$name.result" || failed+=("$name")
done
echo "fuzz-check: ${#names[@]} targets in $((SECONDS - start)) s, ${#failed[@]} failed${failed:+: ${failed[*]}}"
[ ${#failed[@]} = 0 ]
