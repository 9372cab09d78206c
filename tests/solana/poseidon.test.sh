# sol_poseidon runs in tally and in LiteSVM, which must agree on the result, the CU, the log
# and the return data: the program tests/solana/syscalls/poseidon_calls.c, linked by
# `tally sbpf link`, on the inputs poseidon_cases.py makes (every width from 1 to 12 inputs
# in both byte orders, the modulus and values past it, no inputs and 13, parameter sets and
# endiannesses that do not exist, inputs that are not 32 bytes, inputs and results the
# program may not touch, budgets that run out inside the call). Agreement on every width is
# what shows that crypto/poseidon.c's round constants and MDS matrices are light-poseidon's.
. tests/lib.sh
. tests/solana/litesvm/oracle.sh

syscall_cases sol_poseidon poseidon || exit 0

# NAME ok, or NAME and the differences. The cases reach what they are about (checked in
# LiteSVM's outcomes, not tally's): the hashes solana-poseidon's own tests publish (32
# bytes of ones; one input of 1; twelve of them), inputs not below the modulus or not 32
# bytes and no inputs return 1 with the result untouched, 13 inputs fail the call.
python3 - "$TMP/names" "$TMP/litesvm.jsonl" "$TMP/fx" "$LITESVM" >"$TMP/verdicts" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
from cases import print_verdicts
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
print_verdicts(*sys.argv[1:4], REACHES)
PY
syscall_verdicts sol_poseidon

# The comparison can fail: a changed hash (its first byte) is reported.
name=w5_le_large
sed "$(grep -nx $name "$TMP/names" | cut -d: -f1)!d" "$TMP/litesvm.jsonl" >"$TMP/lite_one.json"
sed 's/"return_data": "\(0\{16\}\)../"return_data": "\1ff/' "$TMP/fx/$name.tally" >"$TMP/bad.json"
cmp -s "$TMP/bad.json" "$TMP/fx/$name.tally" && fail sol_poseidon_comparison_can_fail "the hash was not changed"
python3 "$LITESVM/compare.py" "$TMP/bad.json" "$TMP/lite_one.json" >/dev/null &&
	fail sol_poseidon_comparison_can_fail "a changed result compared equal" || pass sol_poseidon_comparison_can_fail
