#!/bin/bash
# Runs the suite once per build directory given (e.g. build build-asan), JOBS tests at a
# time (default: twice the cores, since most tests wait on perf, node or the interpreters
# they drive), and ends with the line "N passed, N failed[, N skipped]".
#
# Unit tests are the cmocka binaries BUILD/tests/MODULE/test_* (MODULE/PART/test_* in a
# module's subfolder); their summary lines are counted, skipped tests too. CLI tests are
# tests/MODULE/*.test.sh, run from the repository root with TALLY (the binary under test)
# and BUILD set; they print "PASS: name", "FAIL: name: why" or "SKIP: name: why" lines
# (tests/lib.sh). A test that exits non-zero without a FAIL line counts as one failure.
# Under CI=true a skip is a failure.
#
# Scheduling: a test's run in the second build starts once its run in the first has ended,
# so the two never share what a test keeps between runs (build/test-corpus). A script whose
# first lines hold "# suite: alone" (it measures time, or needs the whole machine) runs
# after everything else, with nothing beside it. Each test has its own tally debug cache.
#
# --fuzz: scripts/fuzz-check.sh --if-available runs beside the parallel tests (and ends
# before the ones that run alone); each target it fails counts as a failure.
# TESTS=pattern runs only the scripts and binaries whose path matches it.
# At the end: the 15 slowest tests, with their seconds.
set -u
cd "$(dirname "$0")/.."

fuzz=0
if [ "${1:-}" = --fuzz ]; then
	fuzz=1
	shift
fi
builds=("$@")
jobs=${JOBS:-$(($(nproc) * 2))}
RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/tally-suite.XXXXXX")
fuzz_pid=
trap '[ -n "$fuzz_pid" ] && kill "$fuzz_pid" 2>/dev/null; rm -rf "$RESULTS"' EXIT
# Copies stored before each command ends, not by a process left in the background
# (tests/symbolize/debug_cache_background.test.sh tests that one).
export TALLY_CACHE_STORE=wait

# The job table: job i runs PATH[i] (a unit binary or a script) for BUILD[i]; AFTER[i] is
# the job that must end first (-1: none).
PATHS=() BUILDS=() AFTER=() ALONE=()
declare -A first_run
selected() { [[ -z "${TESTS:-}" || "$1" == *$TESTS* ]]; }
alone() { [[ "$1" == *.test.sh ]] && head -20 "$1" | grep -q '^# suite: alone'; }
add_job() {
	local path=$1 build=$2 key=${1#"$2"/}
	PATHS+=("$path") BUILDS+=("$build") AFTER+=("${first_run[$key]:--1}")
	ALONE+=("$(alone "$path" && echo 1 || echo 0)")
	[ -n "${first_run[$key]:-}" ] || first_run[$key]=$((${#PATHS[@]} - 1))
}
for build in "${builds[@]}"; do
	for bin in "$build"/tests/*/test_* "$build"/tests/*/*/test_*; do
		[ -x "$bin" ] && selected "$bin" && add_job "$bin" "$build"
	done
	for script in tests/*/*.test.sh; do
		[ -f "$script" ] && selected "$script" && add_job "$script" "$build"
	done
done

# run_job I: runs job I with its own debug cache; its output, status and seconds go to
# $RESULTS/I.{out,rc,sec}.
run_job() {
	local i=$1 path=${PATHS[$1]} build=${BUILDS[$1]} start=$EPOCHREALTIME rc
	export TALLY_CACHE=$RESULTS/$i.cache
	mkdir -p "$TALLY_CACHE"
	if [[ "$path" == *.test.sh ]]; then
		TALLY="$PWD/$build/tally" BUILD="$build" ROOT="$PWD" timeout 1800 bash "$path" \
			>"$RESULTS/$i.out" 2>&1 </dev/null
	else
		CMOCKA_MESSAGE_OUTPUT=stdout timeout 1800 "$path" >"$RESULTS/$i.out" 2>&1 </dev/null
	fi
	rc=$?
	rm -rf "$TALLY_CACHE"
	echo $rc >"$RESULTS/$i.rc"
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }' >"$RESULTS/$i.sec"
}

# The counts of job I's output, as "PASSED FAILED SKIPPED".
count_unit() {
	local out=$1 p f s
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out")
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out")
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below.*/\1/p' "$out")
	echo "${p:-0} ${f:-0} ${s:-0}"
}
count_script() {
	echo "$(grep -c '^PASS: ' "$1") $(grep -c '^FAIL: ' "$1") $(grep -c '^SKIP: ' "$1")"
}

pass=0 fail=0 skip=0
failed=() # "PATH [BUILD]", and below it the first lines of what went wrong
declare -A bpass bfail
# report I: adds job I's counts and prints what went wrong in it.
report() {
	local i=$1 path=${PATHS[$1]} build=${BUILDS[$1]} out=$RESULTS/$1.out rc p f s
	rc=$(cat "$RESULTS/$i.rc")
	if [[ "$path" == *.test.sh ]]; then
		read -r p f s < <(count_script "$out")
		grep -E '^(FAIL|SKIP): ' "$out" | sed "s|^|  $path [$build]: |"
	else
		read -r p f s < <(count_unit "$out")
		sed -n 's/^\[  SKIPPED \] \([A-Za-z_0-9]*\)$/\1/p' "$out" | sed "s|^|  $path: skipped: |"
	fi
	if [ "${CI:-}" = true ] && [ "$s" -gt 0 ] && [[ "$path" != *.test.sh ]]; then
		echo "  $path: $s skipped under CI=true"
		f=$((f + s)) s=0
	fi
	if [ "$f" -eq 0 ] && [ "$rc" -ne 0 ]; then
		f=1
		printf '  %s [%s]: exited %d\n' "$path" "$build" "$rc"
		tail -5 "$out" | sed 's/^/    /'
	elif [ "$f" -gt 0 ] && [[ "$path" != *.test.sh ]]; then
		grep -E 'FAILED|ERROR|error|Sanitizer|runtime error' "$out" | head -20 | sed 's/^/    /'
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	bpass[$build]=$((${bpass[$build]:-0} + p)) bfail[$build]=$((${bfail[$build]:-0} + f))
	[ "$f" -gt 0 ] && failed+=("$path [$build]"$'\n'"$(failure_lines "$path" "$out")")
}
# The first three FAIL lines of a failed job (or its output's last ones), cut to 300
# bytes and indented: the summary at the end is the part of a CI log that is kept.
failure_lines() { # PATH OUT
	local lines
	if [[ "$1" == *.test.sh ]]; then
		lines=$(grep '^FAIL: ' "$2" | head -3)
	else
		lines=$(grep -E 'FAILED|ERROR|Sanitizer|runtime error' "$2" | head -3)
	fi
	[ -n "$lines" ] || lines=$(tail -3 "$2")
	cut -c1-300 <<<"$lines" | sed 's/^/      /'
}

# The pool: starts every ready job while fewer than $jobs run; alone jobs wait.
declare -A pid_job
state=() # "" waiting, r running, d done
for i in "${!PATHS[@]}"; do state[i]=""; done
ready() { [ "${AFTER[$1]}" = -1 ] || [ "${state[${AFTER[$1]}]}" = d ]; }
running=0
run_pool() { # PARALLEL(0|1)
	local limit=$jobs left i pid
	[ "$1" = 0 ] && limit=1
	while :; do
		left=0
		for i in "${!PATHS[@]}"; do
			[ -z "${state[i]}" ] && [ "${ALONE[i]}" = "$((1 - $1))" ] || continue
			left=1
			[ $running -lt $limit ] && ready "$i" || continue
			run_job "$i" &
			pid_job[$!]=$i state[i]=r running=$((running + 1))
		done
		[ $running = 0 ] && [ $left = 0 ] && break
		wait -n -p pid "${!pid_job[@]}"
		i=${pid_job[$pid]}
		unset "pid_job[$pid]"
		state[i]=d running=$((running - 1))
		printf '  %6s s  %s [%s]\n' "$(cat "$RESULTS/$i.sec")" "${PATHS[i]}" "${BUILDS[i]}"
	done
}

start=$SECONDS
fuzz_failed=0
if [ $fuzz = 1 ]; then
	scripts/fuzz-check.sh --if-available >"$RESULTS/fuzz.out" 2>&1 &
	fuzz_pid=$!
fi
run_pool 1
if [ -n "$fuzz_pid" ]; then
	wait "$fuzz_pid"
	fuzz_rc=$?
	fuzz_pid=
	cat "$RESULTS/fuzz.out"
	if [ $fuzz_rc -ne 0 ]; then
		fuzz_failed=$(sed -n 's/^fuzz-check: .* \([0-9]*\) failed.*/\1/p' "$RESULTS/fuzz.out" | tail -1)
		fuzz_failed=${fuzz_failed:-1}
		[ "$fuzz_failed" -gt 0 ] || fuzz_failed=1
	fi
fi
run_pool 0

for i in "${!PATHS[@]}"; do report "$i"; done
for build in "${builds[@]}"; do
	echo "[$build] ${bpass[$build]:-0} passed, ${bfail[$build]:-0} failed"
done
if [ "$fuzz_failed" -gt 0 ]; then
	fail=$((fail + fuzz_failed))
	failed+=("fuzz-check: $fuzz_failed target(s)")
fi

echo "slowest tests (seconds):"
for i in "${!PATHS[@]}"; do
	printf '%s %s [%s]\n' "$(cat "$RESULTS/$i.sec")" "${PATHS[i]}" "${BUILDS[i]}"
done | sort -rn | head -15 | awk '{ printf "  %7.1f  %s %s\n", $1, $2, $3 }'
echo "wall time: $((SECONDS - start)) s with $jobs jobs"

if [ ${#failed[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failed[@]}"
fi
if [ $skip -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ $fail -eq 0 ]
