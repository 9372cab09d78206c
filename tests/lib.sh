# Helpers for CLI tests (sourced). Results are lines that tests/run.sh counts:
# "PASS: name", "FAIL: name: why", "SKIP: name: why". Under CI=true a skip is a failure,
# since CI runs on a machine that has everything (make test installs it).
set -u
: "${TALLY:?run through tests/run.sh}" "${ROOT:?}" "${BUILD:?}"

# The npm oracles (litesvm, @firefox-devtools/profiler-cli) that scripts/install-deps.sh puts
# in the project's own folder: node finds them with NODE_PATH="$NPM_DIR/node_modules".
NPM_DIR="$ROOT/.deps/npm"

pass() { echo "PASS: $1"; }
# One line per failure, whatever the message holds (run.sh shows only FAIL lines).
fail() { echo "FAIL: $1: $(printf '%s' "${2:-}" | tr '\n' ' ')"; }
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $1: would skip under CI: ${2:-}"
	else
		echo "SKIP: $1: ${2:-}"
	fi
}

# check NAME CMD...: PASS when CMD succeeds, FAIL with its output otherwise.
# expect_err NAME EXIT PATTERN CMD...: CMD exits with EXIT and prints a line matching the
# grep pattern PATTERN (stdout and stderr together).
expect_err() {
	local name=$1 want=$2 pat=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	[ $rc = "$want" ] && grep -q -- "$pat" <<<"$out" && pass "$name" || fail "$name" "exit $rc: $out"
}

check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(tail -3 <<<"$out" | tr '\n' ' ')"; fi
}

# A scratch directory removed on exit.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tally-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The project's shared material (test corpora) lies beside the checkout, in CI as here.
SHARED=${SHARED:-$ROOT/../shared}
[ -d "$SHARED" ] || SHARED=/work/shared

# Test programs compiled once and shared by the plain and sanitized runs. tests/run.sh runs
# tests side by side but never a test's two runs at once: a script writes here only under
# names of its own, or under a lock (tests/symbolize/build-corpus.sh); all else goes to $TMP.
CORPUS="$ROOT/build/test-corpus"
mkdir -p "$CORPUS"

# text_addrs BIN: every instruction address in BIN's .text, as llvm-objdump disassembles it
# (any architecture; for BPF it prints decimal 8-byte slot numbers, turned into addresses).
text_addrs() {
	llvm-objdump -d --section=.text "$1" | awk '
		/file format elf.*bpf/ { bpf = 1 }
		/^ +[0-9a-f]+:/ { sub(":", "", $1); printf "0x%x\n", bpf ? $1 * 8 : ("0x" $1) + 0 }'
}

# agrees_with_llvm NAME BIN [ORACLE_BIN] [-- TALLY_OPTIONS...]: PASS when `tally symbolize`
# prints for every .text instruction of BIN exactly what `llvm-symbolizer --inlining` prints
# for ORACLE_BIN (default BIN) at the same addresses. LLVM_OPTS adds llvm-symbolizer options.
agrees_with_llvm() {
	local name=$1 bin=$2 oracle=${3:-$2}
	shift $(($# >= 3 ? 3 : $#))
	[ "${1:-}" = -- ] && shift
	text_addrs "$bin" >"$TMP/addrs"
	if [ ! -s "$TMP/addrs" ]; then
		fail "$name" "no instructions in $bin"
		return
	fi
	llvm-symbolizer --inlining ${LLVM_OPTS:-} --obj="$oracle" <"$TMP/addrs" >"$TMP/want"
	"$TALLY" symbolize -e "$bin" "$@" <"$TMP/addrs" >"$TMP/got" 2>"$TMP/err"
	if cmp -s "$TMP/want" "$TMP/got"; then
		pass "$name"
	else
		fail "$name" "$(diff "$TMP/want" "$TMP/got" | head -6 | tr '\n' ' ')"
	fi
}

# build_layout KIND OUT: tests/report/annotate_prog.c built as KIND: nopie (gcc, fixed
# addresses) or lldpie (clang and lld's default layout, text at a file offset other than
# its address): the two layouts address translation must get right.
build_layout() {
	if [ "$1" = nopie ]; then
		gcc -O2 -g -no-pie -o "$2" "$ROOT/tests/report/annotate_prog.c"
	else
		clang -O2 -g -fPIE -pie -fuse-ld=lld -o "$2" "$ROOT/tests/report/annotate_prog.c"
	fi
}
