#!/bin/bash
# Runs the whole suite once per build directory given (e.g. build build-asan) and ends with
# the line "N passed, N failed[, N skipped]".
#
# Unit tests are the cmocka binaries BUILD/tests/MODULE/test_*; their summary lines are
# counted. CLI tests are tests/MODULE/*.test.sh, run from the repository root with TALLY
# (the binary under test) and BUILD set; they print "PASS: name", "FAIL: name: why" or
# "SKIP: name: why" lines (tests/lib.sh). A script that exits non-zero without a FAIL line
# counts as one failure. TESTS=pattern runs only the scripts and binaries matching it.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
failed=()
# tally's debug cache (decompressed debug files) for this run only: tests neither read
# nor fill the user's.
TALLY_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/tally-cache.XXXXXX")
export TALLY_CACHE
# Copies stored before each command ends, not by a process left in the background
# (tests/symbolize/debug_cache_background.test.sh tests that one).
export TALLY_CACHE_STORE=wait
trap 'rm -rf "$TALLY_CACHE"' EXIT

run_unit() {
	local bin=$1 out p f
	out=$(CMOCKA_MESSAGE_OUTPUT=stdout "$bin" 2>&1)
	local rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' <<<"$out")
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' <<<"$out")
	pass=$((pass + ${p:-0}))
	if [ -n "$f" ] || { [ $rc -ne 0 ] && [ -z "$p" ]; }; then
		fail=$((fail + ${f:-1}))
		failed+=("$bin")
		printf '%s\n' "$out" | grep -E 'FAILED|ERROR|error|Sanitizer|runtime error' | head -20
	fi
}

run_script() {
	local script=$1 build=$2 out rc
	out=$(TALLY="$PWD/$build/tally" BUILD="$build" ROOT="$PWD" timeout 1800 bash "$script" 2>&1)
	rc=$?
	local p f s
	p=$(grep -c '^PASS: ' <<<"$out")
	f=$(grep -c '^FAIL: ' <<<"$out")
	s=$(grep -c '^SKIP: ' <<<"$out")
	pass=$((pass + p)) skip=$((skip + s))
	grep -E '^(FAIL|SKIP): ' <<<"$out" | sed "s|^|  $script [$build]: |"
	if [ "$f" -eq 0 ] && [ $rc -ne 0 ]; then
		f=1
		printf '  %s [%s]: exited %d\n' "$script" "$build" $rc
		tail -5 <<<"$out" | sed 's/^/    /'
	fi
	if [ "$f" -gt 0 ]; then
		fail=$((fail + f))
		failed+=("$script [$build]")
	fi
}

for build in "$@"; do
	p0=$pass f0=$fail
	for bin in "$build"/tests/*/test_*; do
		[ -x "$bin" ] || continue
		[[ -n "${TESTS:-}" && "$bin" != *$TESTS* ]] && continue
		run_unit "$bin"
	done
	for script in tests/*/*.test.sh; do
		[ -f "$script" ] || continue
		[[ -n "${TESTS:-}" && "$script" != *$TESTS* ]] && continue
		run_script "$script" "$build"
	done
	echo "[$build] $((pass - p0)) passed, $((fail - f0)) failed"
done

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
