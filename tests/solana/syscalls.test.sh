# The runtime's information syscalls (tests/solana/syscalls/runtime_calls.c, linked by
# `tally sbpf link`) run in tally and in LiteSVM, which must agree on the result, the CU,
# the log and the return data: sol_get_stack_height, sol_get_epoch_rewards_sysvar,
# sol_get_last_restart_slot (and its refusal to write into the input region),
# sol_get_epoch_stake, sol_get_processed_sibling_instruction, sol_get_sysvar on every
# sysvar id at several offsets and lengths, and sol_secp256k1_recover. Then the syscalls LiteSVM 1.5 does not register
# (a call is an unknown syscall in both), and those tally refuses at load.
. tests/lib.sh
. tests/solana/litesvm/oracle.sh

if ! command -v clang >/dev/null; then
	skip sol_syscalls "clang not installed"
	exit 0
fi
litesvm_ready sol_syscalls || exit 0
SRC="$ROOT/tests/solana/syscalls"

clang -target bpf -mcpu=v3 -O2 -c "$SRC/runtime_calls.c" -o "$TMP/rc.o" &&
	"$TALLY" sbpf link "$TMP/rc.o" -o "$TMP/rc.so" || { fail sol_syscalls_build "clang or link failed"; exit 0; }

# fixture SO DATA OUT: one instruction of the program at SO, no accounts.
fixture() {
	python3 - "$@" <<'PY'
import json, sys
sys.path.insert(0, "tests/solana")
from keys import b58, name_key
so, data, out = sys.argv[1:4]
prog = b58(name_key("runtime_calls"))
json.dump({"programs": [{"id": prog, "elf": so}],
           "instruction": {"program_id": prog, "data": data}}, open(out, "w"))
PY
}

for c in 00:stack_height 01:epoch_rewards 02:last_restart_slot 07:last_restart_slot_into_input \
	04:epoch_stake_total "05$(printf '11%.0s' $(seq 32)):epoch_stake_vote" \
	0600:sibling_0 0601:sibling_1; do
	fixture "$TMP/rc.so" "${c%%:*}" "$TMP/c.json"
	same_as_litesvm "sol_syscalls_${c##*:}" "$TMP/c.json"
done

# sol_get_sysvar: each id at offset 0 (the whole buffer and less), inside, past the end.
python3 - >"$TMP/sysvar_cases" <<'PY'
import struct
ALPHA = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
def b58d(s):
    n = 0
    for c in s:
        n = n * 58 + ALPHA.index(c)
    return n.to_bytes(32, 'big')
for name in ["SysvarC1ock11111111111111111111111111111111", "SysvarRent111111111111111111111111111111111",
             "SysvarEpochSchedu1e111111111111111111111111", "SysvarEpochRewards1111111111111111111111111",
             "SysvarLastRestartS1ot1111111111111111111111", "SysvarS1otHashes111111111111111111111111111",
             "SysvarStakeHistory1111111111111111111111111", "SysvarFees111111111111111111111111111111111",
             "SysvarRecentB1ockHashes11111111111111111111", "SysvarS1otHistory11111111111111111111111111",
             "Sysvar1nstructions1111111111111111111111111"]:
    for off, n in [(0, 120), (0, 0), (0, 8), (0, 9), (0, 17), (0, 18), (0, 33), (0, 34), (7, 9),
                   (1, 80), (0, 81), (20400, 88), (20401, 88), (100000, 0), (2**64 - 1, 2)]:
        print(f"{name[6:12]}_{off}_{n}", "03" + b58d(name).hex() + struct.pack("<QQ", off, n).hex())
PY
while read -r name data; do
	fixture "$TMP/rc.so" "$data" "$TMP/c.json"
	same_as_litesvm "sol_syscalls_get_sysvar_$name" "$TMP/c.json"
done <"$TMP/sysvar_cases"

# sol_secp256k1_recover: signatures made by secp256k1_cases.py from fixed keys; the key
# recovered (in both) is the signer's, and bad recovery ids, r or s out of range and
# signatures of no key return the runtime's error codes.
python3 "$SRC/secp256k1_cases.py" >"$TMP/secp_cases"
while read -r name data key; do
	fixture "$TMP/rc.so" "$data" "$TMP/c.json"
	same_as_litesvm "sol_syscalls_secp256k1_$name" "$TMP/c.json"
	[ "$key" = - ] && continue
	got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["return_data"])' "$TMP/tally.json")
	[ "$got" = "0000000000000000$key" ] && pass "sol_syscalls_secp256k1_${name}_key" ||
		fail "sol_syscalls_secp256k1_${name}_key" "want $key, got $got"
done <"$TMP/secp_cases"

# Not registered by LiteSVM 1.5 under mainnet's features: the call is an unknown syscall in
# both (the program loads; the call fails as an unsupported instruction and, a VM failure,
# takes the whole budget). The program is the stack-height case with its call renamed.
fixture "$TMP/rc.so" 00 "$TMP/c.json"
for name in sol_sha512 sol_blake3 sol_big_mod_exp sol_get_fees_sysvar; do
	python3 "$SRC/murmur3.py" "$TMP/rc.so" "$TMP/$name.so" sol_get_stack_height $name &&
		fixture "$TMP/$name.so" 00 "$TMP/$name.json" &&
		same_as_litesvm "sol_syscalls_unregistered_$name" "$TMP/$name.json"
	grep -q 'failed: unsupported BPF instruction"' "$TMP/litesvm.json" &&
		pass "sol_syscalls_unregistered_${name}_in_litesvm" ||
		fail "sol_syscalls_unregistered_${name}_in_litesvm" "$(cat "$TMP/litesvm.json")"
done

# Registered by LiteSVM, not implemented by tally: refused when the program loads, naming
# the syscall (LiteSVM runs them: the same program there gets past the call).
# (sol_curve_validate_point, sol_curve_group_op, sol_curve_multiscalar_mul: curve.test.sh;
# sol_alt_bn128_group_op, sol_alt_bn128_compression: bn254.test.sh; sol_poseidon: poseidon.test.sh)
for name in sol_curve_decompress sol_curve_pairing_map; do
	python3 "$SRC/murmur3.py" "$TMP/rc.so" "$TMP/$name.so" sol_get_stack_height $name
	err=$("$TALLY" sbpf run "$TMP/$name.so" 2>&1); rc=$?
	[ $rc -eq 1 ] && [[ "$err" == *"UnsupportedSyscall(\"$name\"): tally does not implement it"* ]] &&
		pass "sol_syscalls_refused_$name" || fail "sol_syscalls_refused_$name" "$rc $err"
	fixture "$TMP/$name.so" 00 "$TMP/$name.json"
	node "$LITESVM/fixture.mjs" "$TMP/$name.json" >"$TMP/l.json" 2>&1
	! grep -q 'failed: unsupported BPF instruction"' "$TMP/l.json" && pass "sol_syscalls_registered_${name}_in_litesvm" ||
		fail "sol_syscalls_registered_${name}_in_litesvm" "$(cat "$TMP/l.json")"
done
