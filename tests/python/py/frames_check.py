# Checks tally's Python frames, as `go tool pprof -traces -lines` reads them from tally's
# pprof, against what the workload (frames_work.py) printed of CPython's own stacks at the
# same call sites. Prints PASS:/FAIL: lines (tests/lib.sh's protocol) and each share.
# Usage: frames_check.py chain WORK_OUT TRACES [TAG [RENAMES]]   the chain complete, in order
#        frames_check.py calls WORK_OUT TRACES [TAG [RENAMES]]   C functions under their callers
#        frames_check.py churn WORK_OUT TRACES [TAG [RENAMES]]   spliced frames agree with native
#        frames_check.py split WORK_OUT TRACES [TAG [RENAMES]]   callers as sys.setprofile saw
# TAG (py38 ... py313) ends each test's name: the same checks run for several interpreters;
# one that starts py312 or py313 has 3.12's activations, py38, py39 or py310 those of the
# frame-object versions (names without their class: no co_qualname before 3.11). RENAMES, a file of "SHOWN REAL"
# lines, names C functions that a stripped interpreter shows by address
# (python3.11!fn_5f77d0) as its symbols name them.
import re
import sys

SEP = re.compile(r'^-+\+-+$')
LOC = re.compile(r'^(?P<func>.*?)(?: (?P<file>\S+?)(?::(?P<line>\d+))?)?(?: \(inline\))?$')


RENAMES = {}


def stacks(path):
    """(count, frames innermost first: (function, file, line)) per trace."""
    out, cur, count = [], None, 0
    for raw in open(path):
        line = raw.rstrip('\n')
        if SEP.match(line):
            if cur:
                out.append((count, cur))
            cur = []
            continue
        if cur is None or not line.strip():
            continue
        text = line.strip()
        if not cur:
            n, text = text.split(None, 1)
            count = int(n)
        m = LOC.match(text)
        func = RENAMES.get(m.group('func'), m.group('func'))
        cur.append((func, m.group('file') or '', int(m.group('line') or 0)))
    if cur:
        out.append((count, cur))
    return out


def probes(path):
    got = {}
    for line in open(path):
        f = line.split()
        if f and f[0] == 'probe':
            got[f[1]] = [(q, int(n)) for q, n in (x.rsplit(':', 1) for x in f[2].split(';'))]
    return got


def is_python(frame):
    return frame[1].endswith('.py')


def in_probe(names):
    """Whether a sample is in the workload's own probe (where(), which prints a call
    site's stack once): not the code under test. A sample landed there in 2 of 20 runs
    here; under key_of, whose check has some 30 samples, one made CI run 20 fail."""
    return 'where' in names


def report(name, ok, total, need, least):
    share = ok / total if total else 0
    good = total >= least and share >= need
    name += SUFFIX
    print('%s: %s: %d of %d samples (%.2f%%, need %.0f%% of at least %d)' %
          ('PASS' if good else 'FAIL', name, ok, total, 100 * share, 100 * need, least))


def chain(work, traces):
    want = [q for q, _ in probes(work)['chain']]
    inside = ok = 0
    for n, st in stacks(traces):
        names = [f[0] for f in reversed(st) if is_python(f)]
        if in_probe(names):
            continue
        native = {f[0] for f in st if not is_python(f)}
        # In the chain, or in the main script's eval loop with its Python frames missing
        # (the interpreter's start-up, and the imports it makes, run elsewhere).
        if not (set(names) & set(want[2:]) or
                (not names and {'_PyEval_EvalFrameDefault', 'pyrun_file'} <= native)):
            continue
        inside += n
        ok += n * (names == want)
    report('python_chain_complete_and_in_order', ok, inside, 0.98, 50)


# The C function each probe's call site calls, as its native frame is named.
CALLS = {'factorial': 'math_factorial', 'sorted': 'builtin_sorted', 'json': 'encoder_call',
         're': '_sre_SRE_Pattern_findall'}


def calls(work, traces):
    want = probes(work)
    all_stacks = stacks(traces)
    for tag, marker in CALLS.items():
        total = ok = 0
        for n, st in all_stacks:
            at = [i for i, f in enumerate(st) if f[0] == marker]
            if not at:
                continue
            total += n
            outer = [(f[0], f[2]) for f in reversed(st[at[-1] + 1:]) if is_python(f)]
            inner = [f[0] for f in st[:at[-1]] if is_python(f)]
            ok += n * (outer == want[tag] and all(q == 'key_of' for q in inner))
        report('c_function_%s_sits_under_its_python_caller_and_line' % tag, ok, total, 0.98, 20)
    # key_of, called back by sorted: a run of its own above sorted's native frames
    total = ok = 0
    outer_want = [q for q, _ in want['sorted_key'][:-1]]
    for n, st in all_stacks:
        names = [f[0] for f in reversed(st) if is_python(f)]
        if 'key_of' not in names or in_probe(names):
            continue
        total += n
        k = [f[0] for f in st].index('key_of')
        between = [f[0] for f in st[k + 1:]]
        caller = [(f[0], f[2]) for f in reversed(st) if is_python(f)][:-1]
        ok += n * (names[:-1] == outer_want and names[-1] == 'key_of' and
                   caller == want['sorted_key'][:-1] and 'builtin_sorted' in between and
                   between.index('builtin_sorted') < between.index('use_sorted'))
    report('python_called_back_from_c_is_a_run_of_its_own', ok, total, 0.98, 50)


# What each worker of churn_work.py may have on its stack below the thread's own frames,
# and where an eval activation of its own must separate two Python frames (a native frame
# between them) or must not (none between them).
THREAD = ['Thread._bootstrap', 'Thread._bootstrap_inner', 'Thread.run']
WORKERS = {'rec_worker': re.compile(r'^(;rec)*$'),
           'gen_worker': re.compile(r'^(;consume(;gen)?)?$'),
           'exc_worker': re.compile(r'^(;catch(;fail)*)?$')}


# 3.12 and later may run those two in the caller's activation (a specialized FOR_ITER_GEN;
# CALL_FUNCTION_EX of a Python function), and did in every sample here: there a native
# frame between them is allowed, not required; anywhere else still none may be.
INLINES = False

# 3.8-3.10 run every Python frame in an eval activation of its own (a Python call goes
# through _PyFunction_Vectorcall and friends, native frames between caller and callee), so
# there a native frame must separate every two Python frames, whoever called whom.
EVERY_CALL_AN_ACTIVATION = False


def consistent(st):
    """Whether st's Python frames are one worker's, in order, each run where an activation
    of the eval loop was: gen entered from C, the worker from Thread.run through C,
    everything else called from Python in the same activation."""
    py = [i for i, f in enumerate(st) if is_python(f)]
    names = [st[i][0] for i in reversed(py)]
    if names[:3] != THREAD or len(names) < 4 or names[3] not in WORKERS:
        return False
    if not WORKERS[names[3]].match(''.join(';' + n for n in names[4:])):
        return False
    for a, b in zip(py, py[1:]):  # b is a's caller
        native_between = b > a + 1
        from_c = st[a][0] == 'gen' or st[b][0] == THREAD[2]
        if EVERY_CALL_AN_ACTIVATION:
            if not native_between:
                return False
        elif native_between != from_c and (native_between or not INLINES):
            return False
    # No activation left but, above the Python frames, one between frames (entering or
    # leaving one: the report's "eval loop between frames").
    return not any(f[0] == '_PyEval_EvalFrameDefault' for f in st[py[0]:])


def churn(work, traces):
    spliced = ok = 0
    for n, st in stacks(traces):
        names = {f[0] for f in st if is_python(f)}
        if not names & set(WORKERS):
            continue
        spliced += n
        ok += n * consistent(st)
    report('fast_changing_python_frames_agree_with_their_native_stacks', ok, spliced, 1.0, 100)


def split(work, traces):
    """The call structure of split_work.py's samples in light and heavy: their Python
    frames, outermost first, a path from <module> through caller -> callee pairs that
    sys.setprofile saw."""
    edges = set()
    for line in open(work):
        if line.startswith('edges '):
            edges = {tuple(e.split('->')) for e in line.split(None, 1)[1].strip().split(';')}
    inside = ok = 0
    for n, st in stacks(traces):
        names = [f[0] for f in reversed(st) if is_python(f)]
        if not {'light', 'heavy'} & set(names):
            continue
        inside += n
        ok += n * (names[0] == '<module>' and all(p in edges for p in zip(names, names[1:])))
    report('python_call_structure_agrees_with_setprofile', ok, inside, 0.98, 200)


TAG = sys.argv[4] if len(sys.argv) > 4 else ''
SUFFIX = '_' + TAG if TAG else ''
INLINES = TAG.startswith(('py312', 'py313'))
EVERY_CALL_AN_ACTIVATION = TAG.startswith(('py38', 'py39', 'py310'))
if EVERY_CALL_AN_ACTIVATION:
    THREAD = [name.split('.')[-1] for name in THREAD]
if len(sys.argv) > 5:
    RENAMES = dict(line.split() for line in open(sys.argv[5]) if line.strip())
{'chain': chain, 'calls': calls, 'churn': churn, 'split': split}[sys.argv[1]](sys.argv[2],
                                                                           sys.argv[3])
