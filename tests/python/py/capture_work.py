# The workload of tests/python/capture.test.sh, and its own oracle: it prints what it is
# (its code objects' addresses, which id() gives in CPython, names, first lines, line
# tables; its threads' kernel ids) and then works for about SECONDS seconds: the main
# thread in beta (called by alpha, called by main), a second thread in gamma.
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
done = [False]


def beta(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def alpha(n):
    return beta(n)


def gamma():
    print("thread gamma %d" % threading.get_native_id(), flush=True)
    x = 0
    while not done[0]:
        x += 1
    return x


def main():
    t = threading.Thread(target=gamma)
    t.start()
    deadline = time.monotonic() + SECONDS
    total = 0
    while time.monotonic() < deadline:
        total += alpha(20000)
    done[0] = True
    t.join()
    return total


def describe(c):
    print("code %x %s %s %d %s" % (id(c), c.co_qualname, c.co_filename, c.co_firstlineno,
                                   c.co_linetable.hex()))


for f in (beta, alpha, gamma, main):
    describe(f.__code__)
describe(sys._getframe().f_code)
print("thread main %d" % threading.get_native_id(), flush=True)
print("result %d" % main(), flush=True)
