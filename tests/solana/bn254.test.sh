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

syscall_cases sol_bn254 bn254 || exit 0

# NAME ok, or NAME and the differences. The cases reach what they are about (checked in
# LiteSVM's outcomes, not tally's): valid inputs succeed, refused ones return 1, pairings
# that cancel are one, unknown ops fail the syscall.
python3 - "$TMP/names" "$TMP/litesvm.jsonl" "$TMP/fx" "$LITESVM" >"$TMP/verdicts" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
from cases import print_verdicts
ONE, ZERO, REFUSED = "00" * 8, "00" * 39 + "01", "01" + "00" * 7
REACHES = {
    "g1_add_g_2g": ("return_data_prefix", ONE),
    "g1_add_off_curve": ("return_data_prefix", REFUSED),
    "g1_add_long_129": ("return_data_prefix", REFUSED),
    "g2_mul_not_subgroup": ("return_data_prefix", REFUSED),
    "g2_add_not_subgroup": ("return_data_prefix", ONE),
    "pairing_two_cancel": ("return_data_prefix", ZERO),
    "pairing_four": ("return_data_prefix", ZERO),
    "pairing_empty": ("return_data_prefix", ZERO),
    "pairing_random_0": ("return_data_prefix", ZERO),
    "pairing_one": ("return_data_prefix", ONE + "00" * 32),
    "g1_decompress_2g": ("return_data_prefix", ONE),
    "g2_decompress_twist": ("return_data_prefix", ONE),
    "group_op_7": ("logs", "failed: InvalidAttribute"),
    "g1_sub": ("logs", "failed: InvalidAttribute"),
}
print_verdicts(*sys.argv[1:4], REACHES)
PY
syscall_verdicts sol_bn254

# The comparison can fail: a changed result is reported.
name=g1_add_g_2g
sed "$(grep -nx $name "$TMP/names" | cut -d: -f1)!d" "$TMP/litesvm.jsonl" >"$TMP/lite_one.json"
sed 's/"return_data": "00000000000000/"return_data": "01000000000000/' "$TMP/fx/$name.tally" >"$TMP/bad.json"
python3 "$LITESVM/compare.py" "$TMP/bad.json" "$TMP/lite_one.json" >/dev/null &&
	fail sol_bn254_comparison_can_fail "a changed result compared equal" || pass sol_bn254_comparison_can_fail
