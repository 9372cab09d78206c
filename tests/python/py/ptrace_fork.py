# tests/python/unprivileged.test.sh's target for processes that come and go under ptrace
# mode: it works, forks a child that works and then execs a new interpreter (which works
# and exits with status 4), waits for it, works again and exits with status 3. Each
# process runs Python and is read; each status and line printed must be what it is
# without tally.
import os
import sys
import time


def spin(seconds):
    deadline = time.process_time() + seconds
    while time.process_time() < deadline:
        sum(i * i for i in range(1000))


spin(0.3)
pid = os.fork()
if pid == 0:
    spin(0.3)
    os.execv(sys.executable, [sys.executable, "-c", "\n".join([
        "import time",
        "deadline = time.process_time() + 0.3",
        "while time.process_time() < deadline:",
        "    sum(i * i for i in range(1000))",
        "print('exec child', flush=True)",
        "raise SystemExit(4)"])])
_, status = os.waitpid(pid, 0)
print("child status", os.waitstatus_to_exitcode(status))
spin(0.2)
sys.exit(3)
