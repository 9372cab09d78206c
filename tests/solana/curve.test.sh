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

syscall_cases sol_curve curve || exit 0

# NAME ok, or NAME and the differences. The cases reach what they are about (checked in
# LiteSVM's outcomes, not tally's): valid points validate, invalid ones do not, torsion
# points multiply, unknown curves and too many points fail the syscall. BLS12-381's curves
# (bls_*) run in LiteSVM (an input of their size is read) and fail in tally, naming them.
python3 - "$TMP/names" "$TMP/litesvm.jsonl" "$TMP/fx" "$LITESVM" >"$TMP/verdicts" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
from cases import print_verdicts
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


def special(name, ours, lite):
    """BLS12-381's cases: LiteSVM runs them, tally refuses them and says why."""
    if not name.startswith("bls_"):
        return None
    ok = ("not implemented by tally" in " ".join(ours["logs"])
          and "InvalidAttribute" not in " ".join(lite["logs"]))
    return "ok" if ok else f"tally {ours['logs']}, LiteSVM {lite['logs']}"


print_verdicts(*sys.argv[1:4], REACHES, special)
PY
syscall_verdicts sol_curve

# The comparison can fail: a changed result is reported.
name=edwards_add_base_b7
sed "$(grep -nx $name "$TMP/names" | cut -d: -f1)!d" "$TMP/litesvm.jsonl" >"$TMP/lite_one.json"
sed 's/"return_data": "00000000000000/"return_data": "01000000000000/' "$TMP/fx/$name.tally" >"$TMP/bad.json"
python3 "$LITESVM/compare.py" "$TMP/bad.json" "$TMP/lite_one.json" >/dev/null &&
	fail sol_curve_comparison_can_fail "a changed result compared equal" || pass sol_curve_comparison_can_fail
