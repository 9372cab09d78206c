# The curve25519 syscalls (sol_curve_validate_point, sol_curve_group_op,
# sol_curve_multiscalar_mul on the Edwards and Ristretto forms) run in tally and in LiteSVM,
# which must agree on the result, the CU, the log and the return data: the program
# tests/solana/syscalls/curve_calls.c, linked by `tally sbpf link`, on the inputs
# curve_cases.py makes (valid points and scalars, the identity, torsion points, encodings
# that are not canonical, points off the curve, scalars not below the group order, unknown
# curves and ops, too many points, inputs and results the program may not touch, budgets
# that run out inside a call).
. tests/lib.sh
. tests/solana/litesvm/oracle.sh

if ! command -v clang >/dev/null; then
	skip sol_curve "clang not installed"
	exit 0
fi
litesvm_ready sol_curve || exit 0
SRC="$ROOT/tests/solana/syscalls"

clang -target bpf -mcpu=v3 -O2 -c "$SRC/curve_calls.c" -o "$TMP/cc.o" &&
	"$TALLY" sbpf link "$TMP/cc.o" -o "$TMP/cc.so" || { fail sol_curve_build "clang or link failed"; exit 0; }

# One fixture per case (no accounts); LiteSVM runs them all in one process.
mkdir -p "$TMP/fx"
python3 "$SRC/curve_cases.py" >"$TMP/cases" || { fail sol_curve_cases "curve_cases.py failed"; exit 0; }
python3 - "$TMP/cc.so" "$TMP/cases" "$TMP/fx" <<'PY'
import json, sys
sys.path.insert(0, "tests/solana")
from keys import b58, name_key
so, cases, out = sys.argv[1:4]
prog = b58(name_key("curve_calls"))
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
	{ fail sol_curve_litesvm "$(tail -3 "$TMP/litesvm.err")"; exit 0; }

# NAME ok, or NAME and the differences. The cases reach what they are about (checked in
# LiteSVM's outcomes, not tally's): valid points validate, invalid ones do not, torsion
# points multiply, unknown curves and too many points fail the syscall. BLS12-381's curves
# (bls_*) run in LiteSVM (an input of their size is read) and fail in tally, naming them.
python3 - "$TMP/names" "$TMP/litesvm.jsonl" "$TMP/fx" "$LITESVM" >"$TMP/verdicts" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
from compare import differences
REACHES = {
    "edwards_validate_base": ("return_data", "0000000000000000"),
    "edwards_validate_off_curve": ("return_data", "0100000000000000"),
    "edwards_validate_identity_y_p1": ("return_data", "0000000000000000"),
    "ristretto_validate_s_odd": ("return_data", "0100000000000000"),
    "ristretto_validate_top_bit": ("return_data", "0100000000000000"),
    "edwards_mul_eight_order8": ("return_data", "0" * 16 + "01" + "0" * 62),
    "ristretto_mul_zero_base": ("return_data", "0" * 80),
    "edwards_mul_l_base": ("return_data", "01" + "0" * 14 + "aa" * 32),
    "curve2_validate": ("logs", "failed: InvalidAttribute"),
    "edwards_msm_513": ("logs", "failed: InvalidLength"),
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
    if name.startswith("bls_"):
        log = " ".join(ours["logs"])
        ok = "not implemented by tally" in log and "InvalidAttribute" not in " ".join(lite["logs"])
        print(name, "ok" if ok else f"tally {ours['logs']}, LiteSVM {lite['logs']}")
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
	[ "$verdict" = ok ] && pass "sol_curve_$name" || fail "sol_curve_$name" "$verdict"
done <"$TMP/verdicts"

# The comparison can fail: a changed result is reported.
name=edwards_add_base_b7
sed "$(grep -nx $name "$TMP/names" | cut -d: -f1)!d" "$TMP/litesvm.jsonl" >"$TMP/lite_one.json"
sed 's/"return_data": "00000000000000/"return_data": "01000000000000/' "$TMP/fx/$name.tally" >"$TMP/bad.json"
python3 "$LITESVM/compare.py" "$TMP/bad.json" "$TMP/lite_one.json" >/dev/null &&
	fail sol_curve_comparison_can_fail "a changed result compared equal" || pass sol_curve_comparison_can_fail
