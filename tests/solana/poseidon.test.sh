# sol_poseidon runs in tally and in LiteSVM, which must agree on the result, the CU, the
# log and the return data: the program tests/solana/syscalls/poseidon_calls.c, linked by
# `tally sbpf link`, on the inputs poseidon_cases.py makes (every width from 1 to 12 inputs
# in both byte orders, the modulus and values past it, no inputs and 13, parameter sets and
# endiannesses that do not exist, inputs that are not 32 bytes, inputs and results the
# program may not touch, budgets that run out inside the call). Agreement on every width
# is what shows that poseidon.c's round constants and MDS matrices are light-poseidon's.
. tests/lib.sh
. tests/solana/litesvm/oracle.sh

if ! command -v clang >/dev/null; then
	skip sol_poseidon "clang not installed"
	exit 0
fi
litesvm_ready sol_poseidon || exit 0
SRC="$ROOT/tests/solana/syscalls"

clang -target bpf -mcpu=v3 -O2 -c "$SRC/poseidon_calls.c" -o "$TMP/pc.o" &&
	"$TALLY" sbpf link "$TMP/pc.o" -o "$TMP/pc.so" || { fail sol_poseidon_build "clang or link failed"; exit 0; }

# One fixture per case (no accounts); LiteSVM runs them all in one process.
mkdir -p "$TMP/fx"
python3 "$SRC/poseidon_cases.py" >"$TMP/cases" || { fail sol_poseidon_cases "poseidon_cases.py failed"; exit 0; }
python3 - "$TMP/pc.so" "$TMP/cases" "$TMP/fx" <<'PY'
import json, sys
sys.path.insert(0, "tests/solana")
from keys import b58, name_key
so, cases, out = sys.argv[1:4]
prog = b58(name_key("poseidon_calls"))
for line in open(cases):
    name, data = line.split()
    fx = {"programs": [{"id": prog, "elf": so}], "instruction": {"program_id": prog, "data": data}}
    if "_budget_" in name:
        fx["compute_budget"] = int(name.rsplit("_", 1)[1])
    json.dump(fx, open(f"{out}/{name}.json", "w"))
PY
cut -d' ' -f1 "$TMP/cases" >"$TMP/names"
while read -r name; do
	"$TALLY" sbpf run "$TMP/fx/$name.json" --json >"$TMP/fx/$name.tally" 2>"$TMP/fx/$name.err" ||
		[ -s "$TMP/fx/$name.tally" ] || echo "tally: $(cat "$TMP/fx/$name.err")" >"$TMP/fx/$name.tally"
done <"$TMP/names"
sed "s|^\(.*\)$|$TMP/fx/\1.json|" "$TMP/names" | xargs node "$LITESVM/fixture.mjs" >"$TMP/litesvm.jsonl" 2>"$TMP/litesvm.err" ||
	{ fail sol_poseidon_litesvm "$(tail -3 "$TMP/litesvm.err")"; exit 0; }

# NAME ok, or NAME and the differences. The cases reach what they are about (checked in
# LiteSVM's outcomes, not tally's): the hashes solana-poseidon's own tests publish (32
# bytes of ones; one input of 1; twelve of them), inputs not below the modulus or not 32
# bytes and no inputs return 1 with the result untouched, 13 inputs fail the call.
python3 - "$TMP/names" "$TMP/litesvm.jsonl" "$TMP/fx" "$LITESVM" >"$TMP/verdicts" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
from compare import differences
OK, REFUSED = "0" * 16, "01" + "0" * 14 + "aa" * 32
REACHES = {
    "ones_be": ("return_data", OK + "05bface581ee6177cc19c6c56363a68882f11e8407ac639db991e0d27f1b75e6"),
    "w1_be_one": ("return_data", OK + "29176100eaa962bdc1fe6c654d6a3c130e96a4d1168b33848b897dc502820133"),
    "w12_be_ones": ("return_data", OK + "14390be0baef249bd47c65ddac65c2e52e8513c081c1cd72c98006098e9a8fbe"),
    "w1_be_r": ("return_data", REFUSED),
    "w1_le_r": ("return_data", REFUSED),
    "w3_le_last_r": ("return_data", REFUSED),
    "len_31": ("return_data", REFUSED),
    "len_33": ("return_data", REFUSED),
    "no_inputs": ("return_data", REFUSED),
    "n13": ("logs", "failed: InvalidLength"),
}
names = open(sys.argv[1]).read().split()
theirs = open(sys.argv[2]).read().splitlines()
if len(theirs) != len(names):
    print(f"litesvm_outcomes {len(theirs)} outcomes for {len(names)} cases")
for name, line in zip(names, theirs):
    text = open(f"{sys.argv[3]}/{name}.tally").read()
    lite = json.loads(line)
    try:
        ours = json.loads(text)
    except ValueError:
        print(name, text.strip())
        continue
    diff = list(differences(ours, lite))
    print(name, "ok" if not diff else "; ".join(diff))
    if name in REACHES:
        key, want = REACHES[name]
        got = lite[key] if key == "return_data" else lite[key][-1]
        ok = got == want if key == "return_data" else got.endswith(want)
        print(f"reaches_{name}", "ok" if ok else f"want {want}, LiteSVM {got}")
PY
while read -r name verdict; do
	[ "$verdict" = ok ] && pass "sol_poseidon_$name" || fail "sol_poseidon_$name" "$verdict"
done <"$TMP/verdicts"

# The comparison can fail: a changed hash (its first byte) is reported.
name=w5_le_large
sed "$(grep -nx $name "$TMP/names" | cut -d: -f1)!d" "$TMP/litesvm.jsonl" >"$TMP/lite_one.json"
sed 's/"return_data": "\(0\{16\}\)../"return_data": "\1ff/' "$TMP/fx/$name.tally" >"$TMP/bad.json"
cmp -s "$TMP/bad.json" "$TMP/fx/$name.tally" && fail sol_poseidon_comparison_can_fail "the hash was not changed"
python3 "$LITESVM/compare.py" "$TMP/bad.json" "$TMP/lite_one.json" >/dev/null &&
	fail sol_poseidon_comparison_can_fail "a changed result compared equal" || pass sol_poseidon_comparison_can_fail
