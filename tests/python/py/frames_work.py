# The workload of tests/python/frames.test.sh, and its own oracle: at the first pass
# through each place the test looks at, it prints the Python stack CPython itself reports
# there ("probe TAG QUALNAME:LINE;..." outermost first, from traceback.walk_stack and each
# frame's code), then works from the same call sites for SECONDS seconds of its own CPU
# time a phase (not of the clock: on a loaded machine a phase of the clock held as few as
# 4 samples in CI).
#   chain      main -> outer -> middle -> inner, pure Python
#   factorial  math.factorial called from use_factorial
#   sorted     sorted(key=...) from use_sorted, calling key_of back (a second activation)
#   json       json.dumps from use_json: the C encoder under json's own Python frames
#   re         a compiled pattern's findall from use_re
import json
import math
import re
import sys
import time
import traceback

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
PHASES = sys.argv[2].split(",") if len(sys.argv) > 2 else [
    "chain", "factorial", "sorted", "json", "re"]


def where(tag, skip=1):
    """The stack skip frames above the caller, as CPython reports it, outermost first."""
    # co_qualname from 3.11; before, co_name, the name tally shows for those versions too
    frames = [(getattr(f.f_code, "co_qualname", f.f_code.co_name), line)
              for f, line in traceback.walk_stack(sys._getframe(skip + 1))]
    print("probe %s %s" % (tag, ";".join("%s:%d" % f for f in reversed(frames))),
          flush=True)


def probing(tag, name, real):
    """Stands in for the global name until its first call, which reports where it was
    called from and puts real back (doing no work itself, so that no sample has it on its
    stack): every later call from that line is real's. The loops drop what it returns."""
    def probe(*args, **kw):
        where(tag)
        globals()[name] = real
    return probe


chain_probe = True


def inner(n):
    global chain_probe
    if chain_probe:
        chain_probe = False
        where("chain", 0)
    s = 0
    for i in range(n):
        s = (s + i * i) & 0xffffff
    return s


def middle(n):
    return inner(n)


def outer(n):
    return middle(n)


def main_chain(deadline):
    while time.process_time() < deadline:
        outer(100000)


fact = probing("factorial", "fact", math.factorial)


def use_factorial(deadline):
    while time.process_time() < deadline:
        fact(3000)


DATA = [(i * 7919) % 10007 for i in range(20000)]
key_probe = True


def key_of(x):
    global key_probe
    # called by sorted from use_sorted's line, not through the probe
    if key_probe and sys._getframe(1).f_code is use_sorted.__code__:
        key_probe = False
        where("sorted_key", 0)
    # work of its own, so that samples land here and not only in the sort between calls
    # (some 30 of 400 did with a bare `return -x`; 3 in a loaded CI run)
    y = x
    for _ in range(20):
        y = (y * 31 + 7) % 10007
    return y


order = probing("sorted", "order", sorted)


def use_sorted(deadline):
    while time.process_time() < deadline:
        order(DATA, key=key_of)


OBJ = {"k%d" % i: [i, str(i), {"v": i * 0.5}] for i in range(3000)}
real_make_encoder = json.encoder.c_make_encoder


def make_encoder(*args):
    json.encoder.c_make_encoder = real_make_encoder

    def probe(*a):
        where("json")
        return []  # encode joins the chunks: no work done here
    return probe


json.encoder.c_make_encoder = make_encoder


def use_json(deadline):
    while time.process_time() < deadline:
        json.dumps(OBJ)


TEXT = " ".join("word%d=%d" % (i, i * 3) for i in range(20000))


class Pattern:
    def findall(self, text):
        where("re")
        globals()["PAT"] = re.compile(r"(\w+)=(\d+)")


PAT = Pattern()


def use_re(deadline):
    while time.process_time() < deadline:
        PAT.findall(TEXT)


def main():
    for phase in PHASES:
        print("phase %s %d" % (phase, time.monotonic_ns()), flush=True)
        deadline = time.process_time() + SECONDS
        {"chain": main_chain, "factorial": use_factorial, "sorted": use_sorted,
         "json": use_json, "re": use_re}[phase](deadline)
    print("done %d" % time.monotonic_ns(), flush=True)


main()
