# Checks tally's Python frames, as `go tool pprof -traces -lines` reads them from tally's
# pprof, against what the workload (frames_work.py) printed of CPython's own stacks at the
# same call sites. Prints PASS:/FAIL: lines (tests/lib.sh's protocol) and each share.
# Usage: frames_check.py chain WORK_OUT TRACES      the chain is complete and in order
#        frames_check.py calls WORK_OUT TRACES      C functions under their callers' lines
import re
import sys

SEP = re.compile(r'^-+\+-+$')
LOC = re.compile(r'^(?P<func>.*?)(?: (?P<file>\S+?)(?::(?P<line>\d+))?)?(?: \(inline\))?$')


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
        cur.append((m.group('func'), m.group('file') or '', int(m.group('line') or 0)))
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


def report(name, ok, total, need, least):
    share = ok / total if total else 0
    good = total >= least and share >= need
    print('%s: %s: %d of %d samples (%.2f%%, need %.0f%% of at least %d)' %
          ('PASS' if good else 'FAIL', name, ok, total, 100 * share, 100 * need, least))


def chain(work, traces):
    want = [q for q, _ in probes(work)['chain']]
    inside = ok = 0
    for n, st in stacks(traces):
        names = [f[0] for f in reversed(st) if is_python(f)]
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
        if 'key_of' not in names:
            continue
        total += n
        k = [f[0] for f in st].index('key_of')
        between = [f[0] for f in st[k + 1:]]
        caller = [(f[0], f[2]) for f in reversed(st) if is_python(f)][:-1]
        ok += n * (names[:-1] == outer_want and names[-1] == 'key_of' and
                   caller == want['sorted_key'][:-1] and 'builtin_sorted' in between and
                   between.index('builtin_sorted') < between.index('use_sorted'))
    report('python_called_back_from_c_is_a_run_of_its_own', ok, total, 0.98, 5)


# What each worker of churn_work.py may have on its stack below the thread's own frames,
# and where an eval activation of its own must separate two Python frames (a native frame
# between them) or must not (none between them).
THREAD = ['Thread._bootstrap', 'Thread._bootstrap_inner', 'Thread.run']
WORKERS = {'rec_worker': re.compile(r'^(;rec)*$'),
           'gen_worker': re.compile(r'^(;consume(;gen)?)?$'),
           'exc_worker': re.compile(r'^(;catch(;fail)*)?$')}


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
        if native_between != (st[a][0] == 'gen' or st[b][0] == 'Thread.run'):
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


{'chain': chain, 'calls': calls, 'churn': churn}[sys.argv[1]](sys.argv[2], sys.argv[3])
