# The target of tests/python/unprivileged.test.sh's runs of ptrace mode: the main thread and
# a second one each run a chain of Python calls for SECONDS of their own CPU time, a third
# started halfway (ptrace mode follows new threads) for a quarter of that; SIGUSR1s are
# counted by a handler. It prints what it computed (the same in every run), then each
# thread's kernel tid and CPU time (time.thread_time: the oracle of the threads' shares) to
# stderr, the signals it got, and exits with status 7: a run under tally must print the
# same to stdout and return the same. bench/python_ptrace.sh imports its chain (branch).
import signal
import sys
import threading
import time

got = 0


def on_usr1(sig, frame):
    global got
    got += 1


def leaf(n):
    s = 0
    for i in range(n):
        s = (s + i * i) & 0xffffff
    return s


def branch(n):
    return leaf(n)


cpu = {}


def work(share, out):
    deadline = time.thread_time() + share
    while time.thread_time() < deadline:
        out.append(branch(20000))
    cpu[threading.get_native_id()] = time.thread_time()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    signal.signal(signal.SIGUSR1, on_usr1)
    results = [[], [], []]
    second = threading.Thread(target=work, args=(seconds, results[1]), name="second")
    second.start()
    work(seconds / 2, results[0])
    third = threading.Thread(target=work, args=(seconds / 4, results[2]), name="third")
    third.start()
    work(seconds / 2, results[0])
    second.join()
    third.join()
    # every round computes the same: the rounds' count varies with the machine, not their
    # value
    print("value", sorted(set(v for r in results for v in r)))
    for tid, spent in cpu.items():
        print("cpu", tid, "%.4f" % spent, file=sys.stderr)
    if len(sys.argv) > 2:  # signals expected: wait for the last (they come by the clock)
        deadline = time.monotonic() + 20
        while got < int(sys.argv[2]) and time.monotonic() < deadline:
            time.sleep(0.01)
    print("usr1", got)
    sys.exit(7)


if __name__ == "__main__":
    main()
