"""System program nonce instructions run directly (no sBPF), for litesvm.test.sh.

  nonce.py gen DIR            writes DIR/nonce_NAME.json, one fixture per case: Initialize,
                              Advance, Withdraw, Authorize and Upgrade, each succeeding and
                              failing every way agave's system_instruction.rs checks
  nonce.py reach NAME FILE    for the cases that change accounts: exits 0 when LiteSVM's
                              post-state (FILE, fixture.mjs's output) is what is worked
                              out here from the nonce layout, so that the comparison
                              rests on a state the runtime wrote

The durable nonce is sha256("DURABLE_NONCE" || blockhash), the blockhash LiteSVM's
latestBlockhash at start, the fee 5000 lamports per signature (solana_nonce's layout:
u32 version, u32 state, authority, durable nonce, u64 fee).
"""
import hashlib
import json
import os
import struct
import sys

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
SYSTEM = "11111111111111111111111111111111"
NONCE = "ArBY5Mui2E27kM5Lb4VvhHUJCQkJjggJoJufH3v2vPwW"
AUTH = "BjGGVGaaNZWEyrgojH4wGWAEMitNnEskRSCR3aqv2JB8"
OTHER = "42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5"
RECENT = "SysvarRecentB1ockHashes11111111111111111111"
RENT = "SysvarRent111111111111111111111111111111111"
BLOCKHASH = bytes.fromhex("aeebad4a796fcc2e15dc4c6061b45ed9b373f26adfc798ca7d2d8cc58182718e")
MIN = (128 + 80) * 6960  # rent exemption of 80 bytes, SIMD-0194's rent


def key(s):
    n = 0
    for c in s:
        n = n * 58 + B58.index(c)
    return n.to_bytes(32, "big")


def durable(h):
    return hashlib.sha256(b"DURABLE_NONCE" + h).digest()


OLD = durable(b"\x01" * 32)  # a nonce of another slot's blockhash


def state(version, initialized, auth=AUTH, nonce=durable(BLOCKHASH), fee=5000, extra=b""):
    b = struct.pack("<II", version, initialized)
    b += key(auth) + nonce + struct.pack("<Q", fee) if initialized else b"\0" * 72
    return (b + extra).hex()


def acc(k, lamports, data="", owner=SYSTEM):
    return {"pubkey": k, "owner": owner, "lamports": lamports, "data": data}


def ix(k, signer, writable):
    return {"pubkey": k, "is_signer": signer, "is_writable": writable}


def u32(v):
    return struct.pack("<I", v).hex()


def u64(v):
    return struct.pack("<Q", v).hex()


def cases():
    c = {}
    init = u32(6) + key(AUTH).hex()
    init_ix = [ix(NONCE, False, True), ix(RECENT, False, False), ix(RENT, False, False)]
    blank = state(0, 0)
    c["init_ok"] = (init, [acc(NONCE, MIN, blank)], init_ix)
    c["init_poor"] = (init, [acc(NONCE, MIN - 1, blank)], init_ix)
    c["init_readonly"] = (init, [acc(NONCE, MIN, blank)], [ix(NONCE, False, False)] + init_ix[1:])
    c["init_again"] = (init, [acc(NONCE, MIN, state(1, 1))], init_ix)
    c["init_short"] = (init, [acc(NONCE, MIN, "00" * 40)], init_ix)
    c["init_empty"] = (init, [acc(NONCE, MIN)], init_ix)
    c["init_bad_tag"] = (init, [acc(NONCE, MIN, "02000000" + "00" * 76)], init_ix)
    c["init_no_rent"] = (init, [acc(NONCE, MIN, blank)], init_ix[:2])
    c["init_one_account"] = (init, [acc(NONCE, MIN, blank)], init_ix[:1])
    c["init_not_the_sysvar"] = (init, [acc(NONCE, MIN, blank), acc(AUTH, 10)],
                                [init_ix[0], ix(AUTH, False, False), init_ix[2]])
    c["init_rent_not_rent"] = (init, [acc(NONCE, MIN, blank)], init_ix[:2] + [init_ix[1]])
    c["init_not_owned"] = (init, [acc(NONCE, MIN, blank, owner=OTHER)], init_ix)
    c["init_longer"] = (init, [acc(NONCE, 10**9, state(0, 0, extra=b"\x07" * 20))], init_ix)

    adv = u32(4)
    signed = [ix(NONCE, False, True), ix(RECENT, False, False), ix(AUTH, True, False)]
    with_auth = lambda data, owner=SYSTEM: [acc(NONCE, MIN, data, owner), acc(AUTH, 10**9)]
    c["advance_ok"] = (adv, with_auth(state(1, 1, nonce=OLD)), signed)
    c["advance_same_blockhash"] = (adv, with_auth(state(1, 1)), signed)
    c["advance_unsigned"] = (adv, with_auth(state(1, 1, nonce=OLD)),
                             signed[:2] + [ix(AUTH, False, False)])
    c["advance_uninitialized"] = (adv, with_auth(blank), signed)
    c["advance_legacy"] = (adv, with_auth(state(0, 1, nonce=OLD)), signed)
    c["advance_one_account"] = (adv, [acc(NONCE, MIN, state(1, 1, nonce=OLD))],
                                [ix(NONCE, True, True)])
    c["advance_readonly"] = (adv, with_auth(state(1, 1, nonce=OLD)),
                             [ix(NONCE, False, False)] + signed[1:])
    c["advance_not_owned"] = (adv, with_auth(state(1, 1, nonce=OLD), OTHER), signed)
    c["advance_own_authority"] = (adv, [acc(NONCE, MIN, state(1, 1, auth=NONCE, nonce=OLD))],
                                  [ix(NONCE, True, True), ix(RECENT, False, False)])

    def wd(lamports):
        return u32(5) + u64(lamports)

    def wd_accounts(data, lamports=MIN + 1000, owner=SYSTEM):
        return [acc(NONCE, lamports, data, owner), acc(AUTH, 10**9), acc(OTHER, 5)]
    wd_ix = [ix(NONCE, False, True), ix(OTHER, False, True), ix(RECENT, False, False),
             ix(RENT, False, False), ix(AUTH, True, False)]
    self_ix = [ix(NONCE, True, True)] + wd_ix[1:4]
    live = state(1, 1, nonce=OLD)
    c["withdraw_part"] = (wd(1000), wd_accounts(live), wd_ix)
    c["withdraw_below_rent"] = (wd(1001), wd_accounts(live), wd_ix)
    c["withdraw_all"] = (wd(MIN + 1000), wd_accounts(live), wd_ix)
    c["withdraw_all_same_blockhash"] = (wd(MIN + 1000), wd_accounts(state(1, 1)), wd_ix)
    c["withdraw_unsigned"] = (wd(1000), wd_accounts(live), wd_ix[:4] + [ix(AUTH, False, False)])
    c["withdraw_uninitialized"] = (wd(500), wd_accounts(blank), self_ix)
    c["withdraw_uninitialized_unsigned"] = (wd(500), wd_accounts(blank), wd_ix)
    c["withdraw_uninitialized_too_much"] = (wd(MIN + 1001), wd_accounts(blank), self_ix)
    c["withdraw_no_rent"] = (wd(10), wd_accounts(live), wd_ix[:3])
    c["withdraw_one_account"] = (wd(10), wd_accounts(live), wd_ix[:1])
    c["withdraw_to_readonly"] = (wd(1000), wd_accounts(live),
                                 [wd_ix[0], ix(OTHER, False, False)] + wd_ix[2:])
    c["withdraw_overflow"] = (wd(2**64 - 1), wd_accounts(live), wd_ix)
    c["withdraw_not_owned"] = (wd(10), wd_accounts(live, owner=OTHER), wd_ix)

    auth = u32(7) + key(OTHER).hex()
    auth_ix = [ix(NONCE, False, True), ix(AUTH, True, False)]
    c["authorize_ok"] = (auth, with_auth(state(1, 1)), auth_ix)
    c["authorize_legacy"] = (auth, with_auth(state(0, 1, nonce=OLD)), auth_ix)
    c["authorize_unsigned"] = (auth, with_auth(state(1, 1)), [auth_ix[0], ix(AUTH, False, False)])
    c["authorize_uninitialized"] = (auth, with_auth(blank), auth_ix)
    c["authorize_readonly"] = (auth, with_auth(state(1, 1)), [ix(NONCE, False, False), auth_ix[1]])
    c["authorize_short_data"] = (u32(7) + "00" * 10, with_auth(state(1, 1)), auth_ix)

    up = u32(12)
    legacy = state(0, 1, nonce=BLOCKHASH)
    c["upgrade_legacy"] = (up, [acc(NONCE, MIN, legacy)], [ix(NONCE, False, True)])
    c["upgrade_current"] = (up, [acc(NONCE, MIN, state(1, 1))], [ix(NONCE, False, True)])
    c["upgrade_uninitialized"] = (up, [acc(NONCE, MIN, blank)], [ix(NONCE, False, True)])
    c["upgrade_readonly"] = (up, [acc(NONCE, MIN, legacy)], [ix(NONCE, False, False)])
    c["upgrade_not_owned"] = (up, [acc(NONCE, MIN, legacy, owner=OTHER)], [ix(NONCE, False, True)])
    c["upgrade_not_a_state"] = (up, [acc(NONCE, MIN, "0500")], [ix(NONCE, False, True)])
    c["upgrade_no_account"] = (up, [acc(NONCE, MIN, legacy)], [])
    return c


# What the cases that change accounts leave, from the nonce layout alone: the nonce
# account's data, or (a withdrawal of everything, after which the account is gone) where
# its lamports went.
REACH = {
    "init_ok": (NONCE, "data", state(1, 1)),
    "advance_ok": (NONCE, "data", state(1, 1)),
    "withdraw_all": (OTHER, "lamports", 5 + MIN + 1000),
    "authorize_ok": (NONCE, "data", state(1, 1, auth=OTHER)),
    "authorize_legacy": (NONCE, "data", state(0, 1, auth=OTHER, nonce=OLD)),
    "upgrade_legacy": (NONCE, "data", state(1, 1, nonce=durable(BLOCKHASH))),
}


def gen(out):
    for name, (data, accounts, ixs) in cases().items():
        fx = {"programs": [], "accounts": accounts,
              "instruction": {"program_id": SYSTEM, "accounts": ixs, "data": data}}
        with open(os.path.join(out, f"nonce_{name}.json"), "w") as f:
            json.dump(fx, f)


def reach(name, path):
    pubkey, field, want = REACH[name]
    got = {a["pubkey"]: a for a in json.load(open(path))["accounts"]}
    return pubkey in got and got[pubkey][field] == want


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif sys.argv[1] == "reach":
        sys.exit(0 if reach(sys.argv[2], sys.argv[3]) else 1)
    else:
        sys.exit("usage: nonce.py gen DIR | reach NAME LITESVM.json")
