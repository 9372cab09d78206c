# Helpers for CLI tests (sourced). Results are lines that tests/run.sh counts:
# "PASS: name", "FAIL: name: why", "SKIP: name: why". Under CI=true a skip is a failure,
# since CI runs on a machine that has everything (make test installs it).
set -u
: "${TALLY:?run through tests/run.sh}" "${ROOT:?}" "${BUILD:?}"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: ${2:-}"; }
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $1: would skip under CI: ${2:-}"
	else
		echo "SKIP: $1: ${2:-}"
	fi
}

# check NAME CMD...: PASS when CMD succeeds, FAIL with its output otherwise.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(tail -3 <<<"$out" | tr '\n' ' ')"; fi
}

# A scratch directory removed on exit.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tally-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# Test programs compiled once and shared by the plain and sanitized runs.
CORPUS="$ROOT/build/test-corpus"
mkdir -p "$CORPUS"
