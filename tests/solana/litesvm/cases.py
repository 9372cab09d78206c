"""Syscall case tables that run in tally and in LiteSVM (tests/solana/curve, bn254 and
poseidon, through oracle.sh's syscall_cases): one fixture per case of a program that takes
its case as instruction data, and one verdict per case.

    python3 cases.py fixtures PROGRAM.so CASES OUTDIR NAME

CASES holds lines "CASE HEXDATA"; a CASE with "_budget_N" in it runs with N compute units.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare import differences  # noqa: E402
from keys import b58, name_key  # noqa: E402


def write_fixtures(so, cases, out, name):
    prog = b58(name_key(name))
    for line in open(cases):
        case, data = line.split()
        fx = {"programs": [{"id": prog, "elf": so}],
              "instruction": {"program_id": prog, "data": data}}
        if "_budget_" in case:
            fx["compute_budget"] = int(case.rsplit("_", 1)[1])
        with open(f"{out}/{case}.json", "w") as f:
            json.dump(fx, f)


def reached(key, got, want):
    """Whether what LiteSVM gave (got: its last log line for key "logs", else its return
    data) shows what the case is about: the line ends with want, the data starts with want
    ("return_data_prefix") or is want."""
    if key == "logs":
        return got.endswith(want)
    return got.startswith(want) if key == "return_data_prefix" else got == want


def print_verdicts(names, litesvm, fxdir, reaches, special=None):
    """Prints "CASE ok" or "CASE what differs" for every case, and "reaches_CASE ok" or
    what LiteSVM gave instead for every case of reaches (CASE: (key, wanted)). special, when
    given, may judge a case itself: special(case, ours, lite) returns its verdict or None."""
    names = open(names).read().split()
    theirs = open(litesvm).read().splitlines()
    if len(theirs) != len(names):
        print(f"litesvm_outcomes {len(theirs)} outcomes for {len(names)} cases")
    for case, line in zip(names, theirs):
        text = open(f"{fxdir}/{case}.tally").read()
        lite = json.loads(line)
        try:
            ours = json.loads(text)
        except ValueError:
            print(case, text.strip())
            continue
        verdict = special(case, ours, lite) if special else None
        if verdict is None:
            diff = list(differences(ours, lite))
            verdict = "ok" if not diff else "; ".join(diff)
        print(case, verdict)
        if case in reaches:
            key, want = reaches[case]
            got = lite["logs"][-1] if key == "logs" else lite["return_data"]
            print(f"reaches_{case}", "ok" if reached(key, got, want) else f"want {want}, LiteSVM {got}")


if __name__ == "__main__" and sys.argv[1:2] == ["fixtures"] and len(sys.argv) == 6:
    write_fixtures(*sys.argv[2:6])
elif __name__ == "__main__":
    sys.exit(__doc__)
