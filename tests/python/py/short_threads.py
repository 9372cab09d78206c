# Short-lived threads for tests/python/threads.test.sh: COUNT threading.Threads named
# py-short-N, one after another, each computing for MS milliseconds of its own CPU time
# (time.thread_time) and ending. Printed per thread: short NAME NATIVE_ID
import sys
import threading
import time

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 5
MS = int(sys.argv[2]) if len(sys.argv) > 2 else 15
seen = []


def short():
    start = time.thread_time_ns()
    while time.thread_time_ns() - start < MS * 1000000:
        pass
    seen.append((threading.current_thread().name, threading.get_native_id()))


for i in range(COUNT):
    t = threading.Thread(target=short, name="py-short-%d" % i)
    t.start()
    t.join()
    time.sleep(0.02)
for name, tid in seen:
    print("short", name, tid)
