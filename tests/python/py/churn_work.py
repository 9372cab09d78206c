# The workload of tests/python/frames.test.sh's consistency check: Python frames that
# change as fast as they can, one kind per thread so that a stack shows whose it is.
#   rec_worker   recursion to a depth that changes every call (one eval activation)
#   gen_worker   a generator resumed by FOR_ITER: in 3.11 each resumption is an eval
#                activation of its own, entered from C (gen_iternext)
#   exc_worker   exceptions raised at the bottom of a recursion and caught at its top
# The main thread waits for them in Thread.join; they stop after SECONDS of the process's
# CPU time (not of the clock, which a loaded machine stretches).
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def rec(n):
    if n == 0:
        return 1
    return rec(n - 1) + 1


def rec_worker(deadline):
    k = 1
    while time.process_time() < deadline:
        k = (k * 1103515245 + 12345) & 0x7fffffff
        rec(k % 60)


def gen(n):
    for i in range(n):
        yield i * i


def consume():
    t = 0
    for v in gen(300):
        t += v
    return t


def gen_worker(deadline):
    while time.process_time() < deadline:
        consume()


def fail(n):
    if n == 0:
        raise ValueError(n)
    return fail(n - 1)


def catch(n):
    try:
        fail(n)
    except ValueError:
        return n


def exc_worker(deadline):
    k = 7
    while time.process_time() < deadline:
        k = (k * 69069 + 1) & 0xffff
        catch(k % 40)


deadline = time.process_time() + SECONDS
threads = [threading.Thread(target=w, args=(deadline,))
           for w in (rec_worker, gen_worker, exc_worker)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done", flush=True)
