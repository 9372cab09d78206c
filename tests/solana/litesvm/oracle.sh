# LiteSVM as the oracle in CLI tests (sourced after tests/lib.sh): fixtures run in tally and
# in LiteSVM (fixture.mjs) must agree on everything compare.py compares.

LITESVM="$ROOT/tests/solana/litesvm"

# litesvm_ready: 0 when node and the litesvm npm package are there (NODE_PATH set), else
# prints the skip NAME and returns 1.
litesvm_ready() {
	if ! command -v node >/dev/null || [ ! -d "$NPM_DIR/node_modules/litesvm" ]; then
		skip "$1" "node or the litesvm npm package missing (sh scripts/install-deps.sh test)"
		return 1
	fi
	export NODE_PATH="$NPM_DIR/node_modules"
}

# same_as_litesvm NAME FIXTURE: one PASS or FAIL for the fixture's outcome in both.
same_as_litesvm() {
	local name=$1 fx=$2 out
	"$TALLY" sbpf run "$fx" --json >"$TMP/tally.json" 2>"$TMP/tally.err"
	if [ ! -s "$TMP/tally.json" ]; then
		fail "$name" "tally: $(cat "$TMP/tally.err")"
	elif ! node "$LITESVM/fixture.mjs" "$fx" >"$TMP/litesvm.json" 2>"$TMP/litesvm.err"; then
		fail "$name" "LiteSVM: $(tail -3 "$TMP/litesvm.err")"
	elif out=$(python3 "$LITESVM/compare.py" "$TMP/tally.json" "$TMP/litesvm.json"); then
		pass "$name"
	else
		fail "$name" "$out"
	fi
}

# linked FIXTURE OUT: FIXTURE with every program that is an object (*.o, which LiteSVM
# cannot load) replaced by its `tally sbpf link` output next to OUT, and no expect (the
# comparison is the check). Returns 1 when a link failed.
linked() {
	local fx=$1 out=$2 o
	for o in $(python3 -c 'import json,sys; print(" ".join(p["elf"] for p in json.load(open(sys.argv[1]))["programs"] if p["elf"].endswith(".o")))' "$fx"); do
		"$TALLY" sbpf link "$o" -o "$(dirname "$out")/$(basename "$o" .o).so" || return 1
	done
	python3 - "$fx" "$out" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for p in d["programs"]:
    if p["elf"].endswith(".o"):
        p["elf"] = os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), os.path.basename(p["elf"])[:-2] + ".so")
d.pop("expect", None)
json.dump(d, open(sys.argv[2], "w"))
PY
}

# syscall_cases NAME PROGRAM: builds tests/solana/syscalls/PROGRAM_calls.c (clang for sBPF
# v3, `tally sbpf link`), makes a fixture per case PROGRAM_cases.py prints (cases.py), runs
# each in tally into $TMP/fx/CASE.tally and all of them in one LiteSVM process into
# $TMP/litesvm.jsonl, in the order of $TMP/names. Returns 1 after a skip or a FAIL named
# NAME_... when it cannot.
syscall_cases() {
	local name=$1 prog=$2 src="$ROOT/tests/solana/syscalls" case
	if ! command -v clang >/dev/null; then
		skip "$name" "clang not installed"
		return 1
	fi
	litesvm_ready "$name" || return 1
	clang -target bpf -mcpu=v3 -O2 -c "$src/${prog}_calls.c" -o "$TMP/$prog.o" &&
		"$TALLY" sbpf link "$TMP/$prog.o" -o "$TMP/$prog.so" ||
		{ fail "${name}_build" "clang or link failed"; return 1; }
	mkdir -p "$TMP/fx"
	python3 "$src/${prog}_cases.py" >"$TMP/cases" &&
		python3 "$LITESVM/cases.py" fixtures "$TMP/$prog.so" "$TMP/cases" "$TMP/fx" "${prog}_calls" ||
		{ fail "${name}_cases" "${prog}_cases.py or cases.py failed"; return 1; }
	cut -d' ' -f1 "$TMP/cases" >"$TMP/names"
	while read -r case; do
		"$TALLY" sbpf run "$TMP/fx/$case.json" --json >"$TMP/fx/$case.tally" 2>"$TMP/fx/$case.err" ||
			[ -s "$TMP/fx/$case.tally" ] || echo "tally: $(cat "$TMP/fx/$case.err")" >"$TMP/fx/$case.tally"
	done <"$TMP/names"
	sed "s|^\(.*\)$|$TMP/fx/\1.json|" "$TMP/names" |
		xargs node "$LITESVM/fixture.mjs" >"$TMP/litesvm.jsonl" 2>"$TMP/litesvm.err" ||
		{ fail "${name}_litesvm" "$(tail -3 "$TMP/litesvm.err")"; return 1; }
}

# syscall_verdicts NAME: a PASS or FAIL NAME_CASE for every line "CASE VERDICT" of
# $TMP/verdicts (cases.py's print_verdicts), PASS when the verdict is "ok".
syscall_verdicts() {
	local name=$1 case verdict
	while read -r case verdict; do
		[ "$verdict" = ok ] && pass "${name}_$case" || fail "${name}_$case" "$verdict"
	done <"$TMP/verdicts"
}
