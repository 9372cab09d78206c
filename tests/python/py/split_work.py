# The workload of tests/python/frames.test.sh's split check: ROUNDS rounds of light called
# twice with K steps and heavy once with 4 K steps of the same loop, so that light's share
# of the time in the two is what the call counts and step counts say: 2K / (2K + 4K). The
# calls are counted by CPython itself, through sys.setprofile, and printed at the end.
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


calls = collections.Counter()


def count(frame, event, arg):
    if event == "call":
        calls[frame.f_code.co_qualname] += 1


sys.setprofile(count)
for r in range(ROUNDS):
    light(K)
    light(K)
    heavy(4 * K)
sys.setprofile(None)
print("calls light %d heavy %d steps %d %d" % (calls["light"], calls["heavy"], K, 4 * K))
