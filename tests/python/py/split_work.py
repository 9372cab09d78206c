# The workload of tests/python/frames.test.sh's split check: ROUNDS rounds, each a call of
# one_round, which calls light twice with K steps and heavy once with 4 K steps of the same
# loop, so that light's share of the time in the two is what the call counts and step
# counts say: 2K / (2K + 4K). The calls are counted by CPython itself, through
# sys.setprofile, which also gives the call structure: every caller -> callee pair it saw.
# Prints "calls light N heavy N steps K 4K", then "edges CALLER->CALLEE;...".
import collections
import sys

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
K = 20000


def light(k):
    s = 0
    for i in range(k):
        s = (s + i) & 0xffff
    return s


def heavy(k):
    s = 0
    for i in range(k):
        s = (s + i) & 0xffff
    return s


def one_round(k):
    light(k)
    light(k)
    heavy(4 * k)


calls = collections.Counter()
edges = set()


def name(code):
    # co_qualname from 3.11; before, co_name, the name tally shows for those versions
    return getattr(code, "co_qualname", code.co_name)


def count(frame, event, arg):
    if event == "call":
        calls[name(frame.f_code)] += 1
        if frame.f_back:
            edges.add("%s->%s" % (name(frame.f_back.f_code), name(frame.f_code)))


sys.setprofile(count)
for r in range(ROUNDS):
    one_round(K)
sys.setprofile(None)
print("calls light %d heavy %d steps %d %d" % (calls["light"], calls["heavy"], K, 4 * K))
print("edges %s" % ";".join(sorted(edges)))
