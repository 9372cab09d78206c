# The alt_bn128 syscalls (sol_alt_bn128_group_op: G1 and G2 addition and multiplication,
# the pairing check; sol_alt_bn128_compression: G1 and G2 compression and decompression),
# big- and little-endian, run in tally and in LiteSVM, which must agree on the result, the
# CU, the log and the return data: the program tests/solana/syscalls/bn254_calls.c, linked
# by `tally sbpf link`, on the inputs bn254_cases.py makes (valid points, the point at
# infinity, points off the curves and outside G2's subgroup, coordinates not below p,
# arkworks' flag bits, scalars not below r, pairings of 0 to 4 pairs, bad lengths, unknown
# ops, results the program may not write, budgets that run out inside a call, and products,
# compressions and pairings of pseudo-random multiples).
. tests/lib.sh
. tests/solana/litesvm/oracle.sh

if ! command -v clang >/dev/null; then
	skip sol_bn254 "clang not installed"
	exit 0
fi
litesvm_ready sol_bn254 || exit 0
SRC="$ROOT/tests/solana/syscalls"

clang -target bpf -mcpu=v3 -O2 -c "$SRC/bn254_calls.c" -o "$TMP/bc.o" &&
	"$TALLY" sbpf link "$TMP/bc.o" -o "$TMP/bc.so" || { fail sol_bn254_build "clang or link failed"; exit 0; }

# One fixture per case (no accounts); LiteSVM runs them all in one process.
mkdir -p "$TMP/fx"
python3 "$SRC/bn254_cases.py" >"$TMP/cases" || { fail sol_bn254_cases "bn254_cases.py failed"; exit 0; }
python3 - "$TMP/bc.so" "$TMP/cases" "$TMP/fx" <<'PY'
import json, sys
sys.path.insert(0, "tests/solana")
from keys import b58, name_key
so, cases, out = sys.argv[1:4]
prog = b58(name_key("bn254_calls"))
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
	{ fail sol_bn254_litesvm "$(tail -3 "$TMP/litesvm.err")"; exit 0; }

# NAME ok, or NAME and the differences. The cases reach what they are about (checked in
# LiteSVM's outcomes, not tally's): valid inputs succeed, refused ones return 1, pairings
# that cancel are one, unknown ops fail the syscall.
python3 - "$TMP/names" "$TMP/litesvm.jsonl" "$TMP/fx" "$LITESVM" >"$TMP/verdicts" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
from compare import differences
ONE, ZERO, REFUSED = "00" * 8, "00" * 39 + "01", "01" + "00" * 7
REACHES = {
    "g1_add_g_2g": ("return_data", ONE),
    "g1_add_off_curve": ("return_data", REFUSED),
    "g1_add_long_129": ("return_data", REFUSED),
    "g2_mul_not_subgroup": ("return_data", REFUSED),
    "g2_add_not_subgroup": ("return_data", ONE),
    "pairing_two_cancel": ("return_data", ZERO),
    "pairing_four": ("return_data", ZERO),
    "pairing_empty": ("return_data", ZERO),
    "pairing_random_0": ("return_data", ZERO),
    "pairing_one": ("return_data", ONE + "00" * 32),
    "g1_decompress_2g": ("return_data", ONE),
    "g2_decompress_twist": ("return_data", ONE),
    "group_op_7": ("logs", "failed: InvalidAttribute"),
    "g1_sub": ("logs", "failed: InvalidAttribute"),
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
        ok = got.startswith(want) if key == "return_data" else got.endswith(want)
        print(f"reaches_{name}", "ok" if ok else f"want {want}, LiteSVM {got}")
PY
while read -r name verdict; do
	[ "$verdict" = ok ] && pass "sol_bn254_$name" || fail "sol_bn254_$name" "$verdict"
done <"$TMP/verdicts"

# The comparison can fail: a changed result is reported.
name=g1_add_g_2g
sed "$(grep -nx $name "$TMP/names" | cut -d: -f1)!d" "$TMP/litesvm.jsonl" >"$TMP/lite_one.json"
sed 's/"return_data": "00000000000000/"return_data": "01000000000000/' "$TMP/fx/$name.tally" >"$TMP/bad.json"
python3 "$LITESVM/compare.py" "$TMP/bad.json" "$TMP/lite_one.json" >/dev/null &&
	fail sol_bn254_comparison_can_fail "a changed result compared equal" || pass sol_bn254_comparison_can_fail
