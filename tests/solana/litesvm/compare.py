"""Compares tally's outcome of a fixture with LiteSVM's (both as `tally sbpf run FIXTURE
--json` prints it: tests/solana/litesvm/fixture.mjs prints LiteSVM's the same way).
Prints one line per difference: result, compute_units, logs (by line), return_data, and
every account's post-state (owner, lamports, data, executable, rent_epoch); exits 1 when
there is any.

    python3 compare.py TALLY.json LITESVM.json
"""
import json
import sys


def differences(ours, theirs):
    for key in ("result", "compute_units", "return_data"):
        if ours.get(key) != theirs.get(key):
            yield f"{key}: tally {ours.get(key)!r}, LiteSVM {theirs.get(key)!r}"
    a, b = ours.get("logs", []), theirs.get("logs", [])
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            yield f"logs[{i}]: tally {x!r}, LiteSVM {y!r}"
    mine = {acc["pubkey"]: acc for acc in ours.get("accounts", [])}
    for acc in theirs.get("accounts", []):
        got = mine.pop(acc["pubkey"], None)
        if got is None:
            yield f"accounts: {acc['pubkey']} missing in tally's"
            continue
        for field in ("owner", "lamports", "data", "executable", "rent_epoch"):
            if got.get(field) != acc.get(field):
                yield (f"accounts[{acc['pubkey']}].{field}: tally {got.get(field)!r}, "
                       f"LiteSVM {acc.get(field)!r}")
    for key in mine:
        yield f"accounts: {key} only in tally's"


def main():
    with open(sys.argv[1]) as f:
        ours = json.load(f)
    with open(sys.argv[2]) as f:
        theirs = json.load(f)
    diffs = list(differences(ours, theirs))
    for d in diffs:
        print(d)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
