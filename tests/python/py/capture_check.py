# Checks a recording of capture_work.py (tests/python/capture.test.sh) against what the
# workload printed about itself and what CPython computes from its own code objects.
# Usage: capture_check.py WORK_OUTPUT PYDATA_OUTPUT SCRIPT; prints one line per problem
# and exits 1 if there is any.
import sys

work_out, pydata_out, script = sys.argv[1:4]
problems = []


def problem(msg):
    problems.append(msg)


want = {}  # address -> (qualname, filename, firstlineno, linetable hex)
tids = {}
for line in open(work_out):
    f = line.split()
    if f[0] == "code":
        want[int(f[1], 16)] = (f[2], f[3], int(f[4]), f[5])
    elif f[0] == "thread":
        tids[f[1]] = int(f[2])
by_name = {v[0]: k for k, v in want.items()}

codes = {}   # (pid, address) -> (qualname, filename, firstlineno, linetable hex)
samples = set()
stacks = []
pids = set()
# The file holds each CPU's ring as tally drained it, so a code record written on one CPU can
# follow, in the file, a stack of another CPU that came later and uses the same code object
# (two threads starting up, both in threading's Condition). Time orders them, as replay
# reads them; a stack comes after the code records of its own sample, which share its time.
lines = [line.split() for line in open(pydata_out, errors="replace")]
for f in sorted(lines, key=lambda f: int(f[1])):
    if f[0] == "code":
        codes[(int(f[2]), int(f[3], 16))] = (f[6], f[7], int(f[5]), f[8])
    elif f[0] == "sample":
        samples.add((int(f[1]), int(f[3])))
    elif f[0] == "stack":
        frames = [(int(c, 16), int(l), int(e)) for c, l, e in (x.split(":") for x in f[6:])]
        for code, _, _ in frames:
            if (int(f[2]), code) not in codes:
                problem("stack at %s uses code %x before any code record of it" % (f[1], code))
        stacks.append((int(f[1]), int(f[2]), int(f[3]), int(f[4]), frames))
        pids.add(int(f[2]))

# 1. The code records say what the code objects are.
pid = tids["main"]
for addr, w in want.items():
    got = codes.get((pid, addr))
    if got is None:
        problem("no code record for %s at %x" % (w[0], addr))
    elif got != w:
        problem("code record of %x: %s, the interpreter says %s" % (addr, got, w))

# 2. Every stack is the Python stack of a CPU sample of its thread at the same time.
unpaired = [s for s in stacks if (s[0], s[2]) not in samples]
if unpaired:
    problem("%d of %d stacks have no CPU sample of their thread at their time"
            % (len(unpaired), len(stacks)))

# 3. The threads' stacks, innermost first, with each frame's entry flag.
def chain(frames):
    return [(codes.get((pid, c), ("?",))[0], e) for c, _, e in frames]


def share(tid, expect):
    mine = [chain(s[4]) for s in stacks if s[2] == tid and s[4]]
    hits = sum(1 for c in mine if c == expect)
    return hits, len(mine)


main_chain = [("beta", 0), ("alpha", 0), ("main", 0), ("<module>", 1)]
hits, n = share(tids["main"], main_chain)
if n < 50 or hits < 0.7 * n:
    problem("main thread: %d of %d stacks are beta < alpha < main < <module>" % (hits, n))
# Thread.run calls its target with *args, **kwargs (CALL_FUNCTION_EX), which 3.11 runs in an
# activation of its own, as it does a thread's first frame.
gamma_chain = [("gamma", 1), ("Thread.run", 0), ("Thread._bootstrap_inner", 0),
               ("Thread._bootstrap", 1)]
hits, n = share(tids["gamma"], gamma_chain)
if n < 50 or hits < 0.7 * n:
    problem("gamma thread: %d of %d stacks are gamma < Thread.run < ..." % (hits, n))

# 4. Each beta frame's instruction is on one of beta's lines, as CPython's own table says.
top = compile(open(script).read(), script, "exec")
beta = next(c for c in top.co_consts if hasattr(c, "co_qualname") and c.co_qualname == "beta")
lines = {}
for start, end, line in beta.co_lines():
    for off in range(start, end, 2):
        lines[off // 2] = line
body = range(beta.co_firstlineno, beta.co_firstlineno + 5)
bad = [l for s in stacks for c, l, _ in s[4] if c == by_name["beta"] and lines.get(l) not in body]
if bad:
    problem("beta frames at instructions off its lines: %s" % sorted(set(bad))[:10])

# 5. No CPU sample of a Python thread without its stack, once the first stack came.
first = min(s[0] for s in stacks) if stacks else 0
for name in ("main", "gamma"):
    tid = tids[name]
    mine = [t for t, st in samples if st == tid and t >= first]
    have = {s[0] for s in stacks if s[2] == tid}
    missing = [t for t in mine if t not in have]
    if len(missing) > 0.01 * len(mine) + 1:
        problem("%s thread: %d of %d samples without a stack" % (name, len(missing), len(mine)))

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
