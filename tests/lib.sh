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

# Killing what a test left running, never another process: pid_max is 32768 here, and a
# whole suite run takes pids round the range every few minutes, so the pid of a process
# that ended a while ago may be another test's by now (CI run 16: a test's shell was
# killed 0.1 s into its recording). A child bash has not reaped holds its pid.
# kill_children SIG: signals this shell's background children still running.
kill_children() {
	local p
	p=$(jobs -rp)
	[ -z "$p" ] || kill -"$1" $p 2>/dev/null
}
# proc_id PID: "PID:START", START its start time (/proc/PID/stat, field 22); nothing when
# it is gone. kill_ids SIG ID...: signals each process of proc_id's IDs that is still the
# process it named (for processes other than this shell's children).
proc_id() {
	local s
	s=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20) && [ -n "$s" ] && echo "$1:$s"
}
kill_ids() {
	local sig=$1 id
	shift
	for id; do
		[ -n "$id" ] && [ "$(proc_id "${id%%:*}")" = "$id" ] && kill -"$sig" "${id%%:*}" 2>/dev/null
	done
	return 0
}

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

# pyenv_each PREFIX SUFFIX FN V...: FN PY TAG for pyenv's build of each CPython V (TAG
# "pyNN" then SUFFIX, e.g. py312); a version missing is skipped as PREFIX_pyNN (a failure
# under CI).
PYENV_VERSIONS=${PYENV_ROOT:-/root/.pyenv}/versions
pyenv_each() {
	local prefix=$1 suffix=$2 fn=$3 v py
	shift 3
	for v in "$@"; do
		py=$(ls "$PYENV_VERSIONS"/$v.*/bin/python$v 2>/dev/null | head -1)
		if [ -n "$py" ]; then
			"$fn" "$py" "py${v/./}$suffix"
		else
			skip "${prefix}_py${v/./}" "no pyenv CPython $v under $PYENV_VERSIONS"
		fi
	done
}

# elf_symbol_offset ELF SYMBOL: where SYMBOL's bytes are in the file ELF (by the LOAD
# segment that maps it), for tests that patch a value in a copy.
elf_symbol_offset() {
	local off v o s
	off=$(readelf -sW "$1" | awk -v s="$2" '$8 == s { print $2; exit }')
	while read -r o v s; do
		if [ $((0x$off)) -ge $((v)) ] && [ $((0x$off)) -lt $((v + s)) ]; then
			echo $((0x$off - v + o))
			return
		fi
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }')
}

# remove_maps_on_exit: the perf maps of the pids a test adds to MAPS (/tmp/perf-PID.map,
# where a JIT must write them, outside $TMP) are removed with $TMP when the test exits.
remove_maps_on_exit() {
	MAPS=()
	trap 'for p in "${MAPS[@]}"; do rm -f "/tmp/perf-$p.map"; done; rm -rf "$TMP"' EXIT
}

# wait_exec PATTERN: waits (30 s at most) until a process whose command line begins with
# PATTERN runs: a command tally record starts is exec'd only once its events exist, after
# the BPF program for Python frames has loaded, which takes seconds on a loaded machine.
wait_exec() {
	local i
	for i in $(seq 600); do
		pgrep -f "^$1" >/dev/null && return 0
		sleep 0.05
	done
	return 1
}
