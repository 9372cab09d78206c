"""Writes one fixture per System program case into DIR, each run through CPI by
system_caller.c (PROGRAM, linked): CASE.json, and cases.txt with each case's name and the
result agave's system_processor gives it (the LiteSVM comparison is the oracle; the result
shows each case reaches the path it is named after)."""
import hashlib, json, struct, sys
sys.path.insert(0, __file__.rsplit('/', 2)[0])
from keys import b58, name_key

out, program = sys.argv[1:3]
SYS = '11111111111111111111111111111111'
caller = name_key('system caller')
OWNER = name_key('new owner')
P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P


def on_curve(b):
    y = int.from_bytes(b, 'little') & ((1 << 255) - 1)
    if y >= P:
        return False
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    return x2 == 0 or pow(x2, (P - 1) // 2, P) == 1


for bump in range(255, -1, -1):
    pda = hashlib.sha256(b'system' + bytes([bump]) + caller + b'ProgramDerivedAddress').digest()
    if not on_curve(pda):
        break


def seeded(base, seed, owner):
    return hashlib.sha256(base + seed + owner).digest()


def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)
def string(s): return u64(len(s)) + s


def create(lamports, space, owner=OWNER): return u32(0) + u64(lamports) + u64(space) + owner
def assign(owner=OWNER): return u32(1) + owner
def transfer(lamports): return u32(2) + u64(lamports)
def create_seed(base, seed, lamports, space, owner=OWNER):
    return u32(3) + base + string(seed) + u64(lamports) + u64(space) + owner
def allocate(space): return u32(8) + u64(space)
def allocate_seed(base, seed, space, owner=OWNER): return u32(9) + base + string(seed) + u64(space) + owner
def assign_seed(base, seed, owner=OWNER): return u32(10) + base + string(seed) + owner
def transfer_seed(lamports, seed, owner): return u32(11) + u64(lamports) + string(seed) + owner


FROM, TO, BASE = name_key('sys from'), name_key('sys to'), name_key('sys base')
S, W = 16, 32
cases = []


def case(name, result, accounts, metas, data, pda_sign=False, budget=None):
    """accounts: [(key, owner, lamports, data hex)], instruction accounts 1.. in that order;
    metas: the callee's (position, flag bits), which the caller's accounts get too."""
    ix_accounts = [{"pubkey": SYS}]
    for i, (k, *_rest) in enumerate(accounts, 1):
        f = 0
        for pos, bits in metas:
            if pos == i:
                f |= bits
        ix_accounts.append({"pubkey": b58(k), "is_signer": bool(f & S) and k != pda,
                            "is_writable": bool(f & W)})
    fx = {"programs": [{"id": b58(caller), "elf": program, "name": "system_caller"}],
          "accounts": [{"pubkey": b58(k), "owner": b58(o) if isinstance(o, bytes) else o,
                        "lamports": l, "data": d} for k, o, l, d in accounts],
          "instruction": {"program_id": b58(caller), "accounts": ix_accounts,
                          "data": (bytes([len(metas)] + [p | b for p, b in metas] +
                                         [1 if pda_sign else 0, bump]) + data).hex()}}
    if budget is not None:
        fx["compute_budget"] = budget
    json.dump(fx, open(f"{out}/{name}.json", "w"), indent=1)
    cases.append((name, result))


rich = (FROM, SYS, 10**9, "")
empty = (TO, SYS, 0, "")
both = [(1, S | W), (2, S | W)]
case("create", "success", [rich, empty], both, create(2000000, 10))
case("create_zero_space", "success", [rich, empty], both, create(890880, 0, bytes(32)))
case("create_in_use", "Custom(0)", [rich, (TO, SYS, 1, "")], both, create(2000000, 10))
case("create_to_unsigned", "MissingRequiredSignature", [rich, empty], [(1, S | W), (2, W)],
     create(2000000, 10))
case("create_from_unsigned", "MissingRequiredSignature", [rich, empty], [(1, W), (2, S | W)],
     create(2000000, 10))
case("create_insufficient", "Custom(1)", [(FROM, SYS, 1000, ""), empty], both, create(2000000, 10))
case("create_too_long", "Custom(3)", [rich, empty], both, create(2000000, 10 * 1024 * 1024 + 1))
case("create_past_cpi_room", "InvalidRealloc", [rich, empty], both, create(10**8, 10241))
case("create_from_has_data", "InvalidArgument", [(FROM, SYS, 10**9, "00"), empty], both,
     create(2000000, 10))
case("create_one_account", "MissingAccount", [rich, empty], [(1, S | W)], create(2000000, 10))
case("create_to_readonly", "ReadonlyDataModified", [rich, empty], [(1, S | W), (2, S)],
     create(2000000, 0))
case("create_to_readonly_space", "ReadonlyDataModified", [rich, empty], [(1, S | W), (2, S)],
     create(2000000, 10))
case("create_pda", "success", [rich, (pda, SYS, 0, "")], both, create(2000000, 10), pda_sign=True)
case("create_budget", "ComputationalBudgetExceeded", [rich, empty], both, create(2000000, 10),
     budget=1300)
case("bad_variant", "InvalidInstructionData", [rich, empty], both, u32(99))
case("truncated", "InvalidInstructionData", [rich, empty], both, create(2000000, 10)[:40])
case("empty_data", "InvalidInstructionData", [rich, empty], both, b"")
case("trailing_bytes", "success", [rich, (TO, SYS, 10**6, "")], both, transfer(7) + b"xyz")

dest = (TO, SYS, 10**6, "")
case("transfer", "success", [rich, dest], both, transfer(12345))
case("transfer_zero", "success", [rich, dest], both, transfer(0))
case("transfer_unsigned", "MissingRequiredSignature", [rich, dest], [(1, W), (2, W)], transfer(5))
case("transfer_to_readonly", "ReadonlyLamportChange", [rich, dest], [(1, S | W), (2, 0)], transfer(5))
case("transfer_from_readonly", "ReadonlyLamportChange", [rich, dest], [(1, S), (2, W)], transfer(5))
case("transfer_from_program_owned", "ExternalAccountLamportSpend",
     [(FROM, OWNER, 10**9, ""), dest], both, transfer(5))
case("transfer_insufficient", "Custom(1)", [rich, dest], both, transfer(10**9 + 1))
case("transfer_to_self", "success", [rich], [(1, S | W), (1, S | W)], transfer(5))

case("assign", "success", [(TO, SYS, 10**6, "")], [(1, S | W)], assign())
case("assign_same_owner_unsigned", "success", [(TO, OWNER, 10**6, "")], [(1, W)], assign())
case("assign_unsigned", "MissingRequiredSignature", [(TO, SYS, 10**6, "")], [(1, W)], assign())
case("assign_not_system_owned", "ModifiedProgramId", [(TO, name_key('other'), 10**6, "")],
     [(1, S | W)], assign())
case("assign_with_data", "ModifiedProgramId", [(TO, SYS, 10**6, "01")], [(1, S | W)], assign())

case("allocate", "success", [(TO, SYS, 10**7, "")], [(1, S | W)], allocate(100))
case("allocate_in_use", "Custom(0)", [(TO, SYS, 10**7, "00")], [(1, S | W)], allocate(100))
case("allocate_unsigned", "MissingRequiredSignature", [(TO, SYS, 10**7, "")], [(1, W)], allocate(100))
case("allocate_readonly_zero", "ReadonlyDataModified", [(TO, SYS, 10**7, "")], [(1, S)], allocate(0))
case("allocate_too_long", "Custom(3)", [(TO, SYS, 10**7, "")], [(1, S | W)],
     allocate(10 * 1024 * 1024 + 1))

seed = b"tally seed"
derived = seeded(BASE, seed, OWNER)
base = (BASE, SYS, 10**6, "")
case("create_with_seed", "success", [rich, (derived, SYS, 0, ""), base],
     [(1, S | W), (2, W), (3, S)], create_seed(BASE, seed, 2000000, 10))
case("create_with_seed_base_unsigned", "MissingRequiredSignature",
     [rich, (derived, SYS, 0, ""), base], [(1, S | W), (2, W), (3, 0)],
     create_seed(BASE, seed, 2000000, 10))
case("create_with_seed_mismatch", "Custom(5)", [rich, empty, base],
     [(1, S | W), (2, W), (3, S)], create_seed(BASE, seed, 2000000, 10))
case("create_with_seed_too_long", "Custom(0)", [rich, empty, base],
     [(1, S | W), (2, W), (3, S)], create_seed(BASE, b"s" * 33, 2000000, 10))
pda_owner = b"x" * 11 + b"ProgramDerivedAddress"
case("create_with_seed_pda_owner", "Custom(2)", [rich, empty, base],
     [(1, S | W), (2, W), (3, S)], create_seed(BASE, seed, 2000000, 10, pda_owner))
case("create_with_seed_not_utf8", "InvalidInstructionData", [rich, empty, base],
     [(1, S | W), (2, W), (3, S)], create_seed(BASE, b"\xff\xfe", 2000000, 10))
case("allocate_with_seed", "success", [(derived, SYS, 10**7, ""), base], [(1, W), (2, S)],
     allocate_seed(BASE, seed, 64))
case("allocate_with_seed_mismatch", "Custom(5)", [(TO, SYS, 10**7, ""), base], [(1, W), (2, S)],
     allocate_seed(BASE, seed, 64))
case("assign_with_seed", "success", [(derived, SYS, 10**6, ""), base], [(1, W), (2, S)],
     assign_seed(BASE, seed))
case("assign_with_seed_unsigned", "MissingRequiredSignature", [(derived, SYS, 10**6, ""), base],
     [(1, W), (2, 0)], assign_seed(BASE, seed))
from_seeded = seeded(BASE, seed, SYS_KEY := bytes(32))
case("transfer_with_seed", "success", [(from_seeded, SYS, 10**7, ""), base, dest],
     [(1, W), (2, S), (3, W)], transfer_seed(1000, seed, SYS_KEY))
case("transfer_with_seed_unsigned", "MissingRequiredSignature",
     [(from_seeded, SYS, 10**7, ""), base, dest], [(1, W), (2, 0), (3, W)],
     transfer_seed(1000, seed, SYS_KEY))
case("transfer_with_seed_mismatch", "Custom(5)", [(FROM, SYS, 10**7, ""), base, dest],
     [(1, W), (2, S), (3, W)], transfer_seed(1000, seed, SYS_KEY))
case("transfer_with_seed_two_accounts", "MissingAccount",
     [(from_seeded, SYS, 10**7, ""), base], [(1, W), (2, S)], transfer_seed(1000, seed, SYS_KEY))

with open(f"{out}/cases.txt", "w") as f:
    for name, result in cases:
        f.write(f"{name} {result}\n")
