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
