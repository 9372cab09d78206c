# Cross-program invocation between C programs built at test time with upstream clang:
# tests/solana/cpi/caller.c invokes callee.c through sol_invoke_signed_c, caller_rust.c through
# sol_invoke_signed_rust with the Rust SDK's layouts; fixtures are written here. Oracles:
# the balances and data the callee's source must leave, the PDA computed independently
# below (sha256 and the ed25519 curve equation in Python), agave's CPI costs
# (cpi_bytes_per_unit 250: 2500 more bytes of account data cost exactly 10 CU).
. tests/lib.sh

SRC="$ROOT/tests/solana/cpi"
OUT="$CORPUS/sbpf"
mkdir -p "$OUT"
if ! command -v clang >/dev/null || ! command -v python3 >/dev/null; then
	skip sbpf_cpi "clang or python3 not installed"
	exit 0
fi
for p in caller caller_rust callee; do
	if [ ! -f "$OUT/cpi_$p.o" ] || [ "$SRC/$p.c" -nt "$OUT/cpi_$p.o" ] || [ "$SRC/solana_rt.h" -nt "$OUT/cpi_$p.o" ]; then
		clang -target bpf -mcpu=v3 -O2 -g -c "$SRC/$p.c" -o "$OUT/cpi_$p.o.tmp" &&
			mv "$OUT/cpi_$p.o.tmp" "$OUT/cpi_$p.o" || { fail "sbpf_cpi_build_$p" "clang failed"; exit 0; }
	fi
done

# fixture NAME MODE VAULT_WRITABLE VAULT_DATA_HEX EXPECT_JSON
fixture() {
	PYTHONPATH="$ROOT/tests/solana" python3 - "$OUT" "$@" >"$TMP/$1.json" <<'PY'
import hashlib, json, os, sys
from keys import b58, name_key
out, name, mode, vault_w, vault_data, expect = sys.argv[1:]
P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P
def on_curve(b):
    y = int.from_bytes(b, 'little') & ((1 << 255) - 1)
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    return x2 == 0 or pow(x2, (P - 1) // 2, P) == 1
key = name_key
caller, callee = key('cpi-caller'), key('cpi-callee')
for bump in range(255, -1, -1):
    pda = hashlib.sha256(b'vault' + bytes([bump]) + caller + b'ProgramDerivedAddress').digest()
    if not on_curve(pda):
        break
SYS = '11111111111111111111111111111111'
d = {"programs": [{"id": b58(caller), "elf": out + "/cpi_" + os.environ.get("CALLER", "caller") + ".o", "name": "caller"},
                  {"id": b58(callee), "elf": out + "/cpi_callee.o", "name": "callee"}],
     "accounts": [{"pubkey": b58(key('vault')), "owner": b58(callee), "lamports": 1000000000, "data": vault_data},
                  {"pubkey": b58(key('dest')), "owner": SYS, "lamports": 890880, "data": ""},
                  {"pubkey": b58(pda), "owner": SYS, "lamports": 0}],
     "instruction": {"program_id": b58(caller),
                     "accounts": [{"pubkey": b58(caller if mode == "3" else callee)},
                                  {"pubkey": b58(key('vault')), "is_writable": vault_w == "1"},
                                  {"pubkey": b58(key('dest')), "is_writable": True},
                                  {"pubkey": b58(pda)}],
                     "data": bytes([int(mode), bump]).hex()},
     "expect": json.loads(expect.replace('VAULT', b58(key('vault'))).replace('DEST', b58(key('dest'))))}
print(json.dumps(d, indent=1))
PY
}
cu() { "$TALLY" sbpf run "$TMP/$1.json" --json | sed -n 's/.*"compute_units": \([0-9]*\).*/\1/p'; }

ok='{"result": "success", "return_data": "6f6b",
     "logs": ["Program log: callee", "Program log: 0x8, 0x3b9ac80c, 0xd99f4, 0x21, 0x0"],
     "accounts": [{"pubkey": "VAULT", "lamports": 999999500, "data": "6162636463706921"},
                  {"pubkey": "DEST", "lamports": 891380}]}'
fixture plain 0 1 61626364 "$ok"
fixture pda_signer 1 1 61626364 "$ok"
fixture unsigned 2 1 61626364 '{"result": "PrivilegeEscalation", "accounts": [{"pubkey": "VAULT", "lamports": 1000000000, "data": "61626364"}]}'
fixture readonly 0 0 61626364 '{"result": "PrivilegeEscalation"}'
fixture depth 3 1 61626364 '{"result": "CallDepth"}'
fixture foreign_write 4 1 61626364 '{"result": "ExternalAccountDataModified"}'
CALLER=caller_rust fixture rust 0 1 61626364 "$ok"
for f in plain pda_signer unsigned readonly depth foreign_write rust; do
	out=$("$TALLY" sbpf run "$TMP/$f.json" 2>&1)
	[ $? = 0 ] && pass "sbpf_cpi_$f" || fail "sbpf_cpi_$f" "$out"
done

# 2500 more bytes in the vault: the CPI charges one CU per 250 bytes of account data.
fixture big 0 1 "61626364$(head -c 2500 /dev/zero | od -An -v -tx1 | tr -d ' \n')" '{"result": "success"}'
a=$(cu plain) b=$(cu big)
[ -n "$a" ] && [ $((b - a)) = 10 ] && pass sbpf_cpi_account_bytes_cost ||
	fail sbpf_cpi_account_bytes_cost "plain $a, big $b"
# The invoke costs 946 CU (agave's invoke_units since SIMD-0339) plus the callee's own: the
# caller's instructions remain.
python3 - "$TMP/plain.json" "$TMP/callee.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["instruction"] = {"program_id": d["programs"][1]["id"], "data": (500).to_bytes(8, "little").hex(),
                    "accounts": [{"pubkey": d["accounts"][0]["pubkey"], "is_writable": True},
                                 {"pubkey": d["accounts"][1]["pubkey"], "is_writable": True}]}
d["expect"] = {"result": "success"}
json.dump(d, open(sys.argv[2], "w"))
PY
c=$(cu callee)
own=$((a - c - 946))
[ -n "$c" ] && [ "$own" -gt 20 ] && [ "$own" -lt 400 ] && pass sbpf_cpi_invoke_cost ||
	fail sbpf_cpi_invoke_cost "caller with CPI $a, callee alone $c"

# Profiled: the callee's frames nest under the invoke syscall below program:callee, the
# syscall keeps its own 947 CU (946, and 1 for the four account infos of 80 bytes), and the profile adds up to the CU consumed.
out=$("$TALLY" sbpf run "$TMP/plain.json" --folded "$TMP/plain.folded" 2>&1)
total=$(awk '{ s += $NF } END { print s }' "$TMP/plain.folded")
grep -q '^entrypoint;syscall:sol_invoke_signed_c 947$' "$TMP/plain.folded" &&
	grep -q '^entrypoint;syscall:sol_invoke_signed_c;program:callee;entrypoint;syscall:sol_log_ 100$' "$TMP/plain.folded" &&
	[[ "$out" == *"compute units: $total"* ]] && pass sbpf_cpi_profile_nests ||
	fail sbpf_cpi_profile_nests "$out $(cat "$TMP/plain.folded")"

# The same instructions in LiteSVM, the programs linked by `tally sbpf link`: result, CU
# (the invoke's cost included), framed logs, return data and accounts must agree.
. tests/solana/litesvm/oracle.sh
if litesvm_ready sbpf_cpi_litesvm; then
	mkdir -p "$TMP/so"
	for f in plain pda_signer unsigned readonly depth foreign_write rust big callee; do
		if linked "$TMP/$f.json" "$TMP/so/$f.json"; then
			same_as_litesvm "sbpf_cpi_litesvm_$f" "$TMP/so/$f.json"
		else
			fail "sbpf_cpi_litesvm_$f" "tally sbpf link failed"
		fi
	done
fi
