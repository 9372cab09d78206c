"""Checks the shares of the shares workload's two methods in the Ruby stacks read
(rb_check's samples of the main thread, the innermost Ruby frame) against their shares of
the :line events Ruby's TracePoint counted (COUNTS): within three standard deviations of
the sampling plus 3 points.
Usage: shares_check.py COUNTS SAMPLES PID NAME"""
import math
import sys


def main():
    counts_path, samples_path, pid, name = sys.argv[1:5]
    counts = {}
    for line in open(counts_path):
        f = line.split()
        if len(f) == 2:  # lines outside a method have no method_id
            counts[f[0]] = int(f[1])
    want = counts["work_b"] / (counts["work_a"] + counts["work_b"])
    seen = {"work_a": 0, "work_b": 0}
    cur = None
    for line in open(samples_path, encoding="utf-8", errors="replace"):
        if line.startswith("S "):
            cur = line.split()[1] == pid
            first = True
        elif cur and first and line.startswith("F "):
            label = line[2:].split("\t")[0]
            if label in seen:
                seen[label] += 1
            first = False
    n = seen["work_a"] + seen["work_b"]
    if n < 100:
        print(f"FAIL: {name}: {n} samples in the two methods")
        return 1
    got = seen["work_b"] / n
    bound = 3 * math.sqrt(want * (1 - want) / n) + 0.03
    print(f"{name}: work_b {got:.3f} of {n} samples, TracePoint {want:.3f} (+-{bound:.3f})")
    if abs(got - want) > bound:
        print(f"FAIL: {name}: work_b's share {got:.3f}, TracePoint's {want:.3f}, bound {bound:.3f}")
        return 1
    print(f"PASS: {name}")
    return 0


sys.exit(main())
