#!/usr/bin/env python3
"""Differential fuzzing of tally's Solana runtime against LiteSVM (agave's program runtime
and sBPF VM as a library, npm `litesvm`): every case is a fixture run by `tally sbpf run
FIXTURE --json` and by tests/solana/litesvm/batch.mjs, and compare.py's differences
(result, CU, logs, return data, every account's post-state) are the findings.

Two kinds of case:
  program  a generated sBPF program: random ALU, jumps, bounded loops, loads and stores in
           the stack, the heap and the input, internal calls, and syscalls with random
           arguments (logs, mem*, hashes, PDAs, sysvars, return data, stack height, ...),
           written as BPF assembly, assembled by clang and linked by `tally sbpf link`;
  corpus   random instruction data and accounts for the corpus's real programs (SPL Token,
           Token-2022, ATA, Memo, p-token, the Core BPF programs, SPL Record), and
           mutations of tests/solana/fixtures.

    python3 fuzz/sbpf_diff.py --cases 10000 --seconds 1800 [--seed N] [--kind program|corpus]
                              [--keep DIR] [--tally build/tally]

Stops after --cases cases or --seconds seconds, whichever comes first; prints the figures
and one line per differing case, and keeps each differing fixture (with its program) in
--keep. Exits 1 when any case differs, 2 when it could not run. Needs clang, node and the npm oracles
(sh scripts/install-deps.sh test), and the corpus (SBPF_CORPUS, default
../shared/corpus/sbpf).
"""
import argparse
import base64
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "solana", "litesvm"))
from compare import differences  # noqa: E402

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
SYSTEM = "11111111111111111111111111111111"
BATCH = 100


def b58(raw):
    n = int.from_bytes(raw, "big")
    s = ""
    while n:
        n, r = divmod(n, 58)
        s = B58[r] + s
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + s


def unb58(s):
    n = 0
    for c in s:
        n = n * 58 + B58.index(c)
    return n.to_bytes(32, "big")


# ---------------------------------------------------------------- generated programs

HEAP = 0x300000000
SYSVAR_IDS = ["SysvarC1ock11111111111111111111111111111111",
              "SysvarRent111111111111111111111111111111111",
              "SysvarEpochSchedu1e111111111111111111111111",
              "SysvarEpochRewards1111111111111111111111111",
              "SysvarLastRestartS1ot1111111111111111111111",
              "SysvarS1otHashes111111111111111111111111111",
              "SysvarStakeHistory1111111111111111111111111",
              "SysvarFees111111111111111111111111111111111"]
ALU = ["+=", "-=", "*=", "|=", "&=", "^=", "<<=", ">>=", "s>>=", "="]
JMP = ["==", "!=", ">", ">=", "<", "<=", "s>", "s>=", "s<", "s<="]  # LLVM 14 spells no jset
FREE = ["r0", "r1", "r2", "r3", "r4", "r5", "r7", "r8"]  # r6 input, r9 heap, r10 frame


class Asm:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.labels = 0

    def emit(self, s):
        self.lines.append("\t" + s)

    def label(self):
        self.labels += 1
        return f"L{self.labels}"

    def imm(self):
        r = self.rng.random()
        if r < 0.5:
            return self.rng.randint(-16, 64)
        if r < 0.8:
            return self.rng.randint(-2**31, 2**31 - 1)
        return self.rng.choice([0, 1, -1, 2**31 - 1, -2**31])

    def heap_addr(self, reg, lo=0, hi=32768 - 64):
        self.emit(f"{reg} = r9")
        off = self.rng.randrange(lo, hi) & ~7
        if off:
            self.emit(f"{reg} += {off}")

    def stack_addr(self, reg, size=64):
        self.emit(f"{reg} = r10")
        self.emit(f"{reg} += -{self.rng.randrange(size, 4096, 8)}")

    def some_addr(self, reg, size=64):
        r = self.rng.random()
        if r < 0.55:
            self.heap_addr(reg, 0, 32768 - size)
        elif r < 0.9:
            self.stack_addr(reg, size)
        elif r < 0.96:
            self.emit(f"{reg} = r6")
            self.emit(f"{reg} += {self.rng.randrange(0, 64)}")
        else:  # unmapped, or past a region's end
            self.emit(f"{reg} = {self.rng.choice([0, 8, 0x200000000, HEAP + 32768 - 8])} ll")

    def alu(self):
        dst = self.rng.choice(FREE)
        op = self.rng.choice(ALU)
        wide = self.rng.random() < 0.7
        d = dst if wide else "w" + dst[1:]
        if self.rng.random() < 0.5:
            v = self.imm()
            if op in ("<<=", ">>=", "s>>="):
                v = self.rng.randrange(0, 64 if wide else 32)
            self.emit(f"{d} {op} {v}")
        else:
            src = self.rng.choice(FREE)
            s = src if wide else "w" + src[1:]
            self.emit(f"{d} {op} {s}")

    def divmod(self):
        dst = self.rng.choice(FREE)
        op = "/="  # LLVM 14 spells no modulo in BPF assembly
        if self.rng.random() < 0.85:
            self.emit(f"{dst} {op} {self.rng.randint(1, 2**31 - 1)}")
        else:  # by a register: zero fails the VM
            self.emit(f"{dst} {op} {self.rng.choice(FREE)}")

    def memory(self):
        size = self.rng.choice([("u8", 1), ("u16", 2), ("u32", 4), ("u64", 8)])
        base, lo, hi = self.rng.choice([("r10", -4096, -8), ("r9", 0, 32760), ("r6", 0, 48)])
        off = self.rng.randrange(lo, hi) & ~(size[1] - 1)
        if self.rng.random() < 0.01:
            off = self.rng.choice([8, 32768, -5000]) if base != "r6" else 1 << 14
        reg = self.rng.choice(FREE)
        if self.rng.random() < 0.5:
            self.emit(f"{reg} = *({size[0]} *)({base} {'+' if off >= 0 else '-'} {abs(off)})")
        elif base != "r6" or self.rng.random() < 0.3:
            self.emit(f"*({size[0]} *)({base} {'+' if off >= 0 else '-'} {abs(off)}) = "
                      f"{'w' + reg[1:] if size[1] < 8 else reg}")

    def jump(self, body):
        end = self.label()
        a = self.rng.choice(FREE)
        op = self.rng.choice(JMP)
        b = self.rng.choice(FREE) if self.rng.random() < 0.5 else self.imm()
        self.emit(f"if {a} {op} {b} goto {end}")
        body()
        self.lines.append(f"{end}:")

    def loop(self, body):
        top = self.label()
        self.emit(f"r8 = {self.rng.randint(1, 12)}")
        self.lines.append(f"{top}:")
        body()
        self.emit("r8 += -1")
        self.emit(f"if r8 != 0 goto {top}")

    def slices(self, reg, count):
        """An array of (ptr, len) slices on the heap at 16384+, reg pointing at it."""
        at = 16384 + self.rng.randrange(0, 4096, 16)
        for i in range(count):
            self.heap_addr("r1", 0, 8192)
            self.emit(f"*(u64 *)(r9 + {at + 16 * i}) = r1")
            self.emit(f"r1 = {self.rng.choice([0, 1, 5, 32, self.rng.randrange(0, 200)])}")
            self.emit(f"*(u64 *)(r9 + {at + 16 * i + 8}) = r1")
        self.emit(f"{reg} = r9")
        self.emit(f"{reg} += {at}")

    def key_at(self, reg, key):
        at = 24576 + self.rng.randrange(0, 2048, 32)
        raw = unb58(key)
        for i in range(4):
            self.emit(f"r1 = {int.from_bytes(raw[8 * i:8 * i + 8], 'little')} ll")
            self.emit(f"*(u64 *)(r9 + {at + 8 * i}) = r1")
        self.emit(f"{reg} = r9")
        self.emit(f"{reg} += {at}")

    def syscall(self, program_id):
        rng = self.rng
        k = rng.choice(["log", "log", "log64", "logcu", "logpk", "logdata", "memcpy",
                        "memmove", "memset", "memcmp", "sha256", "keccak", "cpa", "tfpa",
                        "sysvar", "getsysvar", "setret", "getret", "height",
                        "sibling", "secp", "stake"])
        n = lambda hi: rng.choice([0, 1, rng.randrange(0, hi)])  # noqa: E731
        if k == "log":
            self.some_addr("r1", 64)
            self.emit(f"r2 = {n(64)}")
            self.emit("call sol_log_")
        elif k == "log64":
            for r in ("r1", "r2", "r3", "r4", "r5"):
                self.emit(f"{r} = {self.imm()}")
            self.emit("call sol_log_64_")
        elif k == "logcu":
            self.emit("call sol_log_compute_units_")
        elif k == "logpk":
            self.some_addr("r1", 32)
            self.emit("call sol_log_pubkey")
        elif k in ("logdata", "sha256", "keccak"):
            count = rng.randrange(0, 4)
            self.slices("r1", count)
            self.emit(f"r2 = {count}")
            if k == "logdata":
                self.emit("call sol_log_data")
            else:
                self.some_addr("r3", 32)
                self.emit("call sol_sha256" if k == "sha256" else "call sol_keccak256")
        elif k in ("memcpy", "memmove", "memset", "memcmp"):
            length = n(300)
            self.heap_addr("r1", 0, 8192)
            if k == "memset":
                self.emit(f"r2 = {rng.randrange(256)}")
            elif k == "memcpy":  # distinct halves of the heap: no overlap unless chosen
                self.heap_addr("r2", 8192, 16000) if rng.random() < 0.9 else self.heap_addr("r2", 0, 8192)
            else:
                self.some_addr("r2", 300)
            self.emit(f"r3 = {length}")
            if k == "memcmp":
                self.some_addr("r4", 8)
            self.emit(f"call sol_{k}_")
        elif k in ("cpa", "tfpa"):
            count = rng.randrange(0, 4)
            self.slices("r1", count)
            self.emit(f"r2 = {count if rng.random() < 0.95 else 17}")
            self.key_at("r3", program_id if rng.random() < 0.5 else SYSTEM)
            self.heap_addr("r4", 8192, 16000)
            if k == "cpa":
                self.emit("call sol_create_program_address")
            else:
                self.heap_addr("r5", 8192, 16000)
                self.emit("call sol_try_find_program_address")
        elif k == "sysvar":
            self.some_addr("r1", 96)
            self.emit("call " + rng.choice(["sol_get_clock_sysvar", "sol_get_rent_sysvar",
                                            "sol_get_epoch_schedule_sysvar",
                                            "sol_get_epoch_rewards_sysvar",
                                            "sol_get_last_restart_slot"]))
        elif k == "getsysvar":
            self.key_at("r1", rng.choice(SYSVAR_IDS))
            self.heap_addr("r2", 8192, 16000)
            self.emit(f"r3 = {n(100)}")
            self.emit(f"r4 = {n(100)}")
            self.emit("call sol_get_sysvar")
        elif k == "setret":
            self.some_addr("r1", 64)
            self.emit(f"r2 = {n(64) if rng.random() < 0.97 else 1025}")
            self.emit("call sol_set_return_data")
        elif k == "getret":
            self.heap_addr("r1", 8192, 16000)
            self.emit(f"r2 = {n(64)}")
            self.heap_addr("r3", 8192, 16000)
            self.emit("call sol_get_return_data")
        elif k == "height":
            self.emit("call sol_get_stack_height")
        elif k == "sibling":
            self.emit(f"r1 = {n(3)}")
            for r in ("r2", "r3", "r4", "r5"):
                self.heap_addr(r, 8192, 16000)
            self.emit("call sol_get_processed_sibling_instruction")
        elif k == "secp":
            self.heap_addr("r1", 0, 8192)
            self.emit(f"r2 = {rng.randrange(0, 5)}")
            self.heap_addr("r3", 0, 8192)
            self.heap_addr("r4", 8192, 16000)
            self.emit("call sol_secp256k1_recover")
        else:
            if rng.random() < 0.5:
                self.emit("r1 = 0")
            else:
                self.some_addr("r1", 32)
            self.emit("call sol_get_epoch_stake")
        if rng.random() < 0.5:  # fold the syscall's result into the state
            self.emit(f"{rng.choice(['r7', 'r8'])} ^= r0")

    def block(self, program_id, depth, fns):
        for _ in range(self.rng.randint(3, 14)):
            r = self.rng.random()
            if r < 0.3:
                self.alu()
            elif r < 0.35:
                self.divmod()
            elif r < 0.55:
                self.memory()
            elif r < 0.75:
                self.syscall(program_id)
            elif r < 0.83 and depth < 2:
                self.jump(lambda: self.block(program_id, depth + 1, fns))
            elif r < 0.88 and depth < 1:
                self.loop(lambda: self.block(program_id, 2, fns))
            elif r < 0.94 and fns:
                self.emit(f"call {self.rng.choice(fns)}")
            else:
                self.emit(f"{self.rng.choice(FREE)} = {self.imm()} ll")


def gen_program(rng, program_id):
    a = Asm(rng)
    fns = [f"fn{i}" for i in range(rng.randint(0, 3))]
    out = ["\t.text", "\t.globl entrypoint", "\t.type entrypoint,@function", "entrypoint:"]
    a.emit("r6 = r1")
    a.emit(f"r9 = {HEAP} ll")
    for r in FREE[1:]:
        a.emit(f"{r} = {a.imm()}")
    a.block(program_id, 0, fns)
    r = rng.random()
    a.emit("r0 = 0" if r < 0.8 else f"r0 = {rng.choice([1, 2, 0x100000000, 0x200000000, 0x900000000])} ll")
    a.emit("exit")
    for i, f in enumerate(fns):
        a.lines.append(f"{f}:")
        a.block(program_id, 1, fns[i + 1:])
        a.emit("exit")
    return "\n".join(out + a.lines) + "\n"


def program_cases(rng, n, work, tally):
    """n fixtures running generated programs; returns their paths."""
    srcs = []
    for i in range(n):
        pid = b58(rng.randbytes(32))
        s = os.path.join(work, f"p{i}.s")
        with open(s, "w") as f:
            f.write(gen_program(rng, pid))
        srcs.append((s, pid))
    subprocess.run(["clang", "-target", "bpf", "-mcpu=v3", "-c"] + [s for s, _ in srcs],
                   cwd=work, check=True, stderr=subprocess.DEVNULL)
    paths = []
    for s, pid in srcs:
        so = s[:-2] + ".so"
        if subprocess.run([tally, "sbpf", "link", s[:-2] + ".o", "-o", so],
                          stderr=subprocess.DEVNULL).returncode:
            continue
        accounts = random_accounts(rng, pid, rng.randint(0, 3))
        fx = {"programs": [{"id": pid, "elf": so}], "accounts": accounts,
              "instruction": {"program_id": pid, "data": rng.randbytes(rng.randrange(0, 40)).hex(),
                              "accounts": ix_accounts(rng, accounts)}}
        if rng.random() < 0.1:
            fx["compute_budget"] = rng.randrange(50, 3000)
        paths.append(write_fixture(work, s[:-2] + ".json", fx))
    return paths


# ---------------------------------------------------------------- corpus programs

CORPUS_PROGRAMS = [  # file, program id (the real one where the program checks it), weight
    ("spl_token-3.5.0.so", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", 3),
    ("ptoken.so", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", 2),
    ("pinocchio_token.so", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", 1),
    ("spl_token_2022-10.0.0.so", "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", 3),
    ("spl_associated_token_account-1.1.1.so", "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", 2),
    ("spl_memo-4.0.0.so", "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr", 1),
    ("spl_memo-3.0.0.so", "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr", 1),
    ("address_lookup_table.so", "AddressLookupTab1e1111111111111111111111111", 1),
    ("config.so", "Config1111111111111111111111111111111111111", 1),
    ("core_bpf_stake-5.0.0.so", "Stake11111111111111111111111111111111111111", 1),
    ("core_bpf_feature_gate-0.0.1.so", "Feature111111111111111111111111111111111111", 1),
    ("spl_record.so", "recr1L3PCGKLbckBqMNcJhuuyU1zgo8nBhfLVsJNwr5", 1),
]


def random_accounts(rng, owner_hint, n):
    out = []
    for _ in range(n):
        length = rng.choice([0, 0, 8, 32, 82, 165, 170, 200, rng.randrange(0, 400)])
        data = bytearray(rng.randbytes(length) if rng.random() < 0.3 else bytes(length))
        if length >= 45 and rng.random() < 0.5:
            data[44:46] = b"\x01\x01"  # a Mint's decimals and is_initialized, say
        if length == 165 and rng.random() < 0.5:
            data[108] = 1  # an Account's state: Initialized
        lamports = rng.choice([0, 1, 1000, 890880, 1461600, 2039280, 10**9,
                               890880 + 6960 * length, rng.randrange(0, 10**7)])
        owner = rng.choice([owner_hint, owner_hint, SYSTEM, b58(rng.randbytes(32))])
        out.append({"pubkey": b58(rng.randbytes(32)), "owner": owner, "lamports": lamports,
                    "data": bytes(data).hex()})
    return out


def ix_accounts(rng, accounts):
    keys = [a["pubkey"] for a in accounts]
    if rng.random() < 0.2:
        keys.append(SYSTEM)
    if keys and rng.random() < 0.15:
        keys.insert(rng.randrange(len(keys) + 1), rng.choice(keys))  # a duplicate
    return [{"pubkey": k, "is_signer": rng.random() < 0.4, "is_writable": rng.random() < 0.6}
            for k in keys]


def unhex(v):
    """A fixture's byte string: hex or "base64:..."."""
    if v.startswith("base64:"):
        return base64.b64decode(v[7:])
    return bytes.fromhex(v)


def mutate_data(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.4 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif r < 0.6:
            data = data[:rng.randrange(len(data) + 1)]
        elif r < 0.8:
            data += rng.randbytes(rng.randint(1, 40))
        elif data:
            data[0] = rng.randrange(45)
    return bytes(data)


def corpus_random(rng, corpus):
    name, pid, _ = rng.choices(CORPUS_PROGRAMS, [w for _, _, w in CORPUS_PROGRAMS])[0]
    accounts = random_accounts(rng, pid, rng.randint(0, 6))
    head = bytes([rng.randrange(45)]) if rng.random() < 0.8 else rng.randbytes(4)
    fx = {"programs": [{"id": pid, "elf": os.path.join(corpus, name)}], "accounts": accounts,
          "instruction": {"program_id": pid, "accounts": ix_accounts(rng, accounts),
                          "data": (head + rng.randbytes(rng.choice([0, 8, 9, 32, 33, 34, 35, 66,
                                                                    rng.randrange(0, 80)]))).hex()}}
    if name.startswith("spl_associated") and rng.random() < 0.7:
        fx["programs"].append({"id": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
                               "elf": os.path.join(corpus, "spl_token-3.5.0.so")})
    return fx


def corpus_mutated(rng, corpus, templates):
    fx = json.loads(json.dumps(rng.choice(templates)))
    fx.pop("expect", None)
    for p in fx["programs"]:
        p["elf"] = os.path.join(corpus, os.path.basename(p["elf"]))
    ix = fx["instruction"]
    r = rng.random()
    if r < 0.4:
        ix["data"] = mutate_data(rng, unhex(ix.get("data", ""))).hex()
    elif r < 0.6 and ix.get("accounts"):
        a = rng.choice(ix["accounts"])
        key = rng.choice(["is_signer", "is_writable"])
        a[key] = not a.get(key, False)
    elif r < 0.75 and fx.get("accounts"):
        a = rng.choice(fx["accounts"])
        a["lamports"] = rng.choice([0, 1, a["lamports"] // 2, a["lamports"] + 1, 890880, 10**12])
    elif r < 0.9 and fx.get("accounts"):
        a = rng.choice(fx["accounts"])
        a["data"] = mutate_data(rng, unhex(a.get("data", ""))).hex() if a.get("data") else ""
    elif ix.get("accounts"):
        rng.shuffle(ix["accounts"])
    return fx


def corpus_cases(rng, n, work, corpus, templates):
    paths = []
    for i in range(n):
        fx = corpus_mutated(rng, corpus, templates) if rng.random() < 0.5 else corpus_random(rng, corpus)
        paths.append(write_fixture(work, os.path.join(work, f"c{i}.json"), fx))
    return paths


def write_fixture(work, path, fx):
    with open(path, "w") as f:
        json.dump(fx, f)
    return path


# ---------------------------------------------------------------- running and comparing

def run_batch(paths, tally, env):
    ours = []
    for p in paths:
        r = subprocess.run([tally, "sbpf", "run", p, "--json"], capture_output=True, text=True)
        try:
            ours.append(json.loads(r.stdout) if r.stdout.strip() else {"error": r.stderr.strip()})
        except json.JSONDecodeError:
            ours.append({"error": "unreadable JSON: " + r.stdout[:200]})
    r = subprocess.run(["node", os.path.join(ROOT, "tests", "solana", "litesvm", "batch.mjs")],
                       input="\n".join(paths) + "\n", capture_output=True, text=True, env=env)
    theirs = [json.loads(line) for line in r.stdout.splitlines()]
    if len(theirs) != len(paths):
        raise RuntimeError("LiteSVM's batch ended early: " + r.stderr[-500:])
    return ours, theirs


def keep_case(keep, path, why):
    os.makedirs(keep, exist_ok=True)
    with open(path) as f:
        fx = json.load(f)
    base = os.path.basename(path)[:-5] + "-" + str(abs(hash(path)) % 10**6)
    for p in fx["programs"]:
        if p["elf"].startswith(os.path.dirname(path)):
            dst = os.path.join(keep, base + "-" + os.path.basename(p["elf"]))
            shutil.copy(p["elf"], dst)
            p["elf"] = os.path.basename(dst)
    fx["why"] = why
    with open(os.path.join(keep, base + ".json"), "w") as f:
        json.dump(fx, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kind", choices=["program", "corpus", "both"], default="both")
    ap.add_argument("--keep")
    ap.add_argument("--tally", default=os.path.join(ROOT, "build", "tally"))
    ap.add_argument("--quiet", action="store_true", help="no line per differing case")
    args = ap.parse_args()
    corpus = os.path.join(os.environ.get("SBPF_CORPUS", os.path.join(ROOT, "..", "shared", "corpus", "sbpf")),
                          "programs")
    npm = os.environ.get("NPM_DIR", os.path.join(ROOT, ".deps", "npm"))
    if not os.path.isdir(corpus) or not shutil.which("clang") or not shutil.which("node") or \
            not os.path.isdir(os.path.join(npm, "node_modules", "litesvm")):
        print("sbpf_diff: needs the corpus, clang, node and the litesvm npm package", file=sys.stderr)
        return 2
    env = dict(os.environ, NODE_PATH=os.path.join(npm, "node_modules"))
    tdir = os.path.join(ROOT, "tests", "solana", "fixtures")
    templates = [json.load(open(os.path.join(tdir, f))) for f in sorted(os.listdir(tdir))
                 if f.endswith(".json")]
    templates = [t for t in templates if all(os.path.basename(p["elf"]) in os.listdir(corpus)
                                             for p in t["programs"])]
    rng = random.Random(args.seed)
    start = time.monotonic()
    done = same = 0
    differing = []
    results = {}  # LiteSVM's results, by kind of case: what the cases reached
    with tempfile.TemporaryDirectory(prefix="tally-sbpf-diff.") as work:
        while done < args.cases and time.monotonic() - start < args.seconds:
            n = min(BATCH, args.cases - done)
            kind = args.kind if args.kind != "both" else ("program" if (done // BATCH) % 2 else "corpus")
            bdir = tempfile.mkdtemp(dir=work)
            paths = program_cases(rng, n, bdir, args.tally) if kind == "program" else \
                corpus_cases(rng, n, bdir, corpus, templates)
            ours, theirs = run_batch(paths, args.tally, env)
            for path, o, t in zip(paths, ours, theirs):
                done += 1
                r = f"{kind}: {t.get('result', 'refused')}"
                results[r] = results.get(r, 0) + 1
                if "error" in o or "error" in t:
                    diffs = [f"could not run: tally {o.get('error', 'ran')!r}, "
                             f"LiteSVM {t.get('error', 'ran')!r}"]
                    if "error" in o and "error" in t:
                        same += 1  # refused by both (a program neither loads)
                        continue
                else:
                    diffs = list(differences(o, t))
                if not diffs:
                    same += 1
                    continue
                differing.append((path, diffs))
                if not args.quiet:
                    print(f"{kind} {os.path.basename(path)}: {diffs[0]}" +
                          (f" (+{len(diffs) - 1})" if len(diffs) > 1 else ""))
                if args.keep:
                    keep_case(args.keep, path, diffs[:5])
            shutil.rmtree(bdir)
    secs = time.monotonic() - start
    print(f"{done} cases in {secs:.0f} s (seed {args.seed}): {same} the same in both, "
          f"{len(differing)} differ")
    top = sorted(results.items(), key=lambda kv: -kv[1])
    print("  LiteSVM's results: " + ", ".join(f"{r} {k}" for r, k in top[:14]) +
          (f", {len(top) - 14} more" if len(top) > 14 else ""))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
