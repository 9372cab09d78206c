# The workload of tests/python/threads.test.sh: two threads named by threading, one that
# computes in Python (it holds the GIL for all its CPU time: bytecode runs only under
# the GIL) and one that hashes a large buffer with hashlib, which releases the GIL while
# it hashes any buffer of 2 KiB or more. Each runs until it has used SECONDS of its own
# CPU time (time.thread_time, not the clock, which a loaded machine stretches), and the
# hashing thread times its hash calls by the same clock. Printed at the end, per thread:
#   thread NAME NATIVE_ID CPU_NS HASH_NS
# HASH_NS / CPU_NS is the share of the thread's CPU time spent in the calls that release
# the GIL (an upper bound of the share it ran without the GIL: the call holds it while it
# starts and ends, for microseconds out of each 10 ms hash).
# Besides, for the names of threads (tests/python/threads.test.sh): a threading.Thread
# named py-rename that computes for a third of SECONDS, renames itself (Thread.name) to
# py-renamed and computes for two thirds more; a thread started by _thread, which
# threading does not know, that computes for a quarter of SECONDS; and the main thread.
# Their lines, the kernel's names (comm) as /proc gives them:
#   renamed OLD NEW NATIVE_ID CPU_NS_BEFORE CPU_NS_AFTER
#   raw NATIVE_ID COMM
#   main NATIVE_ID COMM
import _thread
import hashlib
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
BUDGET = int(SECONDS * 1e9)
results = {}


def compute():
    start = time.thread_time_ns()
    x = 1
    while time.thread_time_ns() - start < BUDGET:
        for i in range(5000):
            x = (x * 1103515245 + i) & 0x7FFFFFFF
    results["py-compute"] = (threading.get_native_id(), time.thread_time_ns() - start, 0)


def hashing():
    buf = bytes(4 << 20)
    start = time.thread_time_ns()
    inside = 0
    while time.thread_time_ns() - start < BUDGET:
        t0 = time.thread_time_ns()
        hashlib.sha256(buf).digest()
        inside += time.thread_time_ns() - t0
    results["c-hash"] = (threading.get_native_id(), time.thread_time_ns() - start, inside)


def spin(ns):
    start = time.thread_time_ns()
    x = 1
    while time.thread_time_ns() - start < ns:
        for i in range(5000):
            x = (x * 1103515245 + i) & 0x7FFFFFFF
    return time.thread_time_ns() - start


def renaming():
    before = spin(BUDGET // 3)
    threading.current_thread().name = "py-renamed"
    after = spin(BUDGET * 2 // 3)
    results["renamed"] = (threading.get_native_id(), before, after)


def comm(tid):
    with open("/proc/self/task/%d/comm" % tid) as f:
        return f.read().strip()


def raw(done):
    tid = threading.get_native_id()
    spin(BUDGET // 4)
    results["raw"] = (tid, comm(tid))
    done.release()


threads = [threading.Thread(target=compute, name="py-compute"),
           threading.Thread(target=hashing, name="c-hash"),
           threading.Thread(target=renaming, name="py-rename")]
raw_done = _thread.allocate_lock()
raw_done.acquire()
for t in threads:
    t.start()
_thread.start_new_thread(raw, (raw_done,))
for t in threads:
    t.join()
raw_done.acquire()
for name in ("py-compute", "c-hash"):
    tid, cpu, inside = results[name]
    print("thread", name, tid, cpu, inside)
tid, before, after = results["renamed"]
print("renamed py-rename", threads[2].name, tid, before, after)
print("raw", *results["raw"])
print("main", threading.get_native_id(), comm(threading.get_native_id()))
