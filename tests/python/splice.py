# The splice of Python frames into native stacks, on recordings written here
# (perfdata.py) whose every sample's Python stack and native stack are known: real code
# objects of a workload compiled by this interpreter (names, files and co_linetable as
# CPython has them), native pcs inside the interpreter's own functions (found by name in
# its debug file's symbol table). The oracles: Python's own co_lines() for the line of
# each frame's instruction, `go tool pprof -traces` reading tally's pprof, and the stacks
# each case was built from.
# Usage: python3.11 splice.py TALLY DIR INTERPRETER DEBUG_FILE
# Prints PASS:/FAIL: lines (tests/lib.sh's protocol).
import dis
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import perfdata  # noqa: E402

TALLY, DIR, PY, DEBUG = sys.argv[1:5]
PID, TID, TID2, TID3 = 4000, 4000, 4001, 4002

SRC = '''\
class Sorter:
    def run(self, x):
        y = x * 2
        return sorted([y, 1], key=abs)

def f2(n):
    a = n + 1
    return Sorter().run(a)

def f1(n):
    return f2(n)

def worker():
    return f1(5)

f1(3)
'''
FILE = '/app/work.py'
module = compile(SRC, FILE, 'exec')


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, 'co_code'):
            yield from codes(c)


CODE = {c.co_qualname: c for c in codes(module)}
ADDR = {q: 0x7f0000100000 + 0x1000 * i for i, q in enumerate(sorted(CODE))}


def call_at(qualname, nth=0):
    """lasti of the nth CALL instruction of a function: where it calls out."""
    calls = [i for i in dis.get_instructions(CODE[qualname]) if i.opname == 'CALL']
    return calls[nth].offset // 2


def symbols():
    out = subprocess.run(['readelf', '-Ws', DEBUG], capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == 'FUNC' and f[1] != '0000000000000000':
            syms.setdefault(f[7], int(f[1], 16))
    return syms


SYM = symbols()


def pc(name, off):
    return SYM[name] + off


# The interpreter's text segment as the loader maps it (whole pages).
def text_segment():
    out = subprocess.run(['readelf', '-lW', PY], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == 'LOAD' and 'E' in f[6:-1]:
            off, vaddr, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            page = vaddr & ~0xfff
            return page, (vaddr + memsz - page + 0xfff) & ~0xfff, off & ~0xfff
    raise SystemExit('no text segment in ' + PY)


START, LENGTH, PGOFF = text_segment()

LEAF = pc('PyObject_Call', 0x10)         # C code the innermost Python frame called
EVAL = pc('_PyEval_EvalFrameDefault', 0x200)
EVAL_COLD = pc('_PyEval_EvalFrameDefault.cold', 0x20)
VECTOR = pc('_PyEval_Vector', 0x40)
FUNC_CALL = pc('_PyFunction_Vectorcall', 0x30)
RUN_MAIN = pc('Py_RunMain', 0x100)
BYTES_MAIN = pc('Py_BytesMain', 0x10)
ENTRY = pc('_start', 0x20)               # where the CFI says the stack ends

# Two activations: the inner runs Sorter.run, called back from C; the outer (sampled in
# its out-of-line part) runs f2, f1 and the module.
NATIVE = [LEAF, EVAL, VECTOR, FUNC_CALL, EVAL_COLD, RUN_MAIN, BYTES_MAIN, ENTRY]
PYSTACK = [('Sorter.run', call_at('Sorter.run'), True), ('f2', call_at('f2', 1), False),
           ('f1', call_at('f1'), False), ('<module>', call_at('<module>', 1), True)]
# A thread running worker -> f1 -> f2 -> Sorter.run in one activation.
NATIVE3 = [LEAF, EVAL, VECTOR, BYTES_MAIN, ENTRY]
PYSTACK3 = [('Sorter.run', call_at('Sorter.run'), False), ('f2', call_at('f2', 1), False),
            ('f1', call_at('f1'), False), ('worker', call_at('worker'), True)]


def frames(stack):
    return [(ADDR[q], lasti, entry) for q, lasti, entry in stack]


def start(r, qualnames=None):
    r.comm(PID, PID, 'python3.11', 1000)
    r.mmap(PID, START, LENGTH, PGOFF, PY, 1001)
    for q in qualnames or sorted(CODE):
        r.code(PID, 1002, ADDR[q], CODE[q])


def tally(*args):
    p = subprocess.run([TALLY, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def folded(path):
    rc, out, err = tally('export', '-f', 'folded', '--kinds', path)
    if rc:
        raise RuntimeError(err)
    return [(l.rsplit(' ', 1)[0].split(';'), int(l.rsplit(' ', 1)[1]))
            for l in out.splitlines()]


def figures(path):
    rc, out, err = tally('report', path)
    if rc:
        raise RuntimeError(err)
    fig = {}
    for m in re.finditer(r'^(?:figures:)? +(python: [^\n]*?) (\d+)$', out, re.M):
        fig[m.group(1)] = int(m.group(2))
    return fig, out, err


def python_frames(stack):
    return [f[:-4] for f in stack if f.endswith('_[p]')]


def check(name, ok, why=''):
    print(('PASS: %s' % name) if ok else ('FAIL: %s: %s' % (name, why)))


def case(name):
    return os.path.join(DIR, name + '.data')


# ---- the splice: two activations, a native-only thread, a thread of its own stack ----
r = perfdata.Recording()
start(r)
for i in range(10):
    t = 2000 + 10 * i
    r.stack(PID, TID, t, frames(PYSTACK))
    r.sample(PID, TID, t + 1, NATIVE)
    r.stack(PID, TID2, t + 2, [])
    r.sample(PID, TID2, t + 3, [LEAF, RUN_MAIN, BYTES_MAIN, ENTRY])
    r.stack(PID, TID3, t + 4, frames(PYSTACK3))
    r.sample(PID, TID3, t + 5, NATIVE3)
r.write(case('splice'))
stacks = folded(case('splice'))
want_main = ['<module>', 'f1', 'f2', 'Sorter.run']
want_worker = ['worker', 'f1', 'f2', 'Sorter.run']
seen = {tuple(python_frames(s)): n for s, n in stacks}
check('python_runs_replace_each_eval_activation_in_order',
      seen.get(tuple(want_main)) == 10 and seen.get(tuple(want_worker)) == 10 and
      seen.get(()) == 10 and len(seen) == 3, repr(stacks))
check('no_eval_activation_left_where_python_frames_were',
      not any('_PyEval_EvalFrameDefault' in f for s, _ in stacks for f in s), repr(stacks))


def native_between(s, a, b):
    """The frames between Python frames a and b (adjacent in Python order)."""
    i, j = s.index(a + '_[p]'), s.index(b + '_[p]')
    return s[i + 1:j]


main = next(s for s, _ in stacks if python_frames(s) == want_main)
check('native_frames_stay_below_between_and_above_the_python_runs',
      main[-1] != 'Sorter.run_[p]' and not main[-1].endswith('_[p]') and
      any('Py_RunMain' in f for f in main[:main.index('<module>_[p]')]) and
      any('_PyFunction_Vectorcall' in f for f in native_between(main, 'f2', 'Sorter.run')) and
      native_between(main, '<module>', 'f1') == [] and
      native_between(main, 'f1', 'f2') == [], repr(main))
leaf_native = [s for s, _ in stacks if not python_frames(s)]
check('a_thread_without_python_stays_native',
      len(leaf_native) == 1 and any('Py_RunMain' in f for f in leaf_native[0]), repr(leaf_native))

# Names, files and lines: pprof read by go tool pprof, against co_lines() of the code.
pb = os.path.join(DIR, 'splice.pb.gz')
rc, _, err = tally('export', '-f', 'pprof', '-o', pb, case('splice'))
gp = subprocess.run(['go', 'tool', 'pprof', '-traces', '-lines', pb], capture_output=True,
                    text=True)
if rc or gp.returncode:
    check('python_lines_are_what_python_gives', False, err + gp.stderr)
else:
    want = ['%s %s:%d' % (q, FILE, perfdata.line_at(CODE[q], lasti))
            for q, lasti, _ in PYSTACK + PYSTACK3]
    lines = [l.strip() for l in gp.stdout.splitlines()]
    missing = [w for w in want if not any(l.endswith(w) for l in lines)]
    check('python_lines_are_what_python_gives', not missing and all(
        perfdata.line_at(CODE[q], lasti) for q, lasti, _ in PYSTACK), repr(missing))
    raw = subprocess.run(['go', 'tool', 'pprof', '-raw', pb], capture_output=True,
                         text=True).stdout
    first = {q: CODE[q].co_firstlineno for q in want_worker + ['<module>']}
    bad = [q for q, line in first.items()
           if not re.search(r'^ +\d+: 0x0 %s %s:\d+ s=%d\(%s \[python\]\)$' %
                            (re.escape(q), re.escape(FILE), line, re.escape(q)), raw, re.M)]
    check('pprof_start_line_is_co_firstlineno', not bad, repr(bad) + raw[-2000:])

fig, out, err = figures(case('splice'))
check('report_counts_python_samples_and_frames',
      fig.get('python: samples with Python frames') == 20 and
      fig.get('python: frames') == 80 and fig.get('python: stacks inconsistent') == 0 and
      fig.get('python: code unknown') == 0 and fig.get('python: stacks not recorded') == 0 and
      'samples:  30' not in out, repr(fig) + out[:600])
check('report_marks_python_frames', re.search(r'Sorter\.run \[python\]  \(/app/work\.py:2\)', out)
      is not None, out)

# ---- disagreements keep the native frames, counted ----
r = perfdata.Recording()
start(r)
r.stack(PID, TID, 2000, frames(PYSTACK[:1]))             # one run, two activations
r.sample(PID, TID, 2001, NATIVE)
r.stack(PID, TID, 2010, frames(PYSTACK[1:]))             # one run, one activation: fits
r.sample(PID, TID, 2011, NATIVE3)
r.stack(PID, TID, 2020, frames(PYSTACK[:2]))             # a frame no activation ran
r.sample(PID, TID, 2021, NATIVE3)
r.stack(PID, TID, 2030, frames(PYSTACK))                 # two runs, one activation
r.sample(PID, TID, 2031, NATIVE3)
r.write(case('inconsistent'))
stacks = folded(case('inconsistent'))
fig, _, _ = figures(case('inconsistent'))
nat = [s for s, _ in stacks if not python_frames(s)]
check('runs_and_activations_that_disagree_keep_native_frames',
      fig.get('python: stacks inconsistent') == 3 and
      sum(n for s, n in stacks if not python_frames(s)) == 3 and
      all(any('_PyEval_EvalFrameDefault' in f for f in s) for s in nat) and
      fig.get('python: samples with Python frames') == 1, repr(fig) + repr(stacks))

r = perfdata.Recording()
start(r, [q for q in CODE if q != 'f1'])
r.stack(PID, TID, 2000, frames(PYSTACK))
r.sample(PID, TID, 2001, NATIVE)
r.write(case('unknown'))
stacks = folded(case('unknown'))
fig, _, _ = figures(case('unknown'))
check('a_frame_of_unknown_code_keeps_native_frames',
      fig.get('python: code unknown') == 1 and len(stacks) == 1 and
      not python_frames(stacks[0][0]), repr(fig) + repr(stacks))

# ---- the match rule: a record goes to its thread's next sample only ----
r = perfdata.Recording()
start(r)
r.stack(PID, TID, 2000, frames(PYSTACK))
r.sample(PID, TID3, 2001, NATIVE)    # another thread's sample: not this record's
r.sample(PID, TID, 2002, NATIVE)     # takes it
r.sample(PID, TID, 2003, NATIVE)     # finds none
r.write(case('match'))
stacks = folded(case('match'))
fig, _, _ = figures(case('match'))
check('a_stack_record_goes_to_the_next_sample_of_its_thread_only',
      fig.get('python: stacks not recorded') == 2 and
      fig.get('python: samples with Python frames') == 1 and
      sum(n for s, n in stacks if python_frames(s) == want_main) == 1, repr(fig) + repr(stacks))

# ---- a stack the capture cut: its inner runs spliced, the rest native ----
r = perfdata.Recording()
start(r)
r.stack(PID, TID, 2000, frames(PYSTACK[:2]), flags=1)
r.sample(PID, TID, 2001, NATIVE)
r.write(case('cut'))
stacks = folded(case('cut'))
fig, _, _ = figures(case('cut'))
s = stacks[0][0] if stacks else []
check('a_cut_stack_splices_its_whole_runs_and_keeps_the_outer_activations',
      fig.get('python: stacks cut') == 1 and python_frames(s) == ['Sorter.run'] and
      sum('_PyEval_EvalFrameDefault' in f for f in s) >= 1, repr(fig) + repr(stacks))

# ---- a native stack whose unwind stopped: its inner activations take the inner runs ----
r = perfdata.Recording()
start(r)
r.stack(PID, TID, 2000, frames(PYSTACK))
r.sample(PID, TID, 2001, [LEAF, EVAL, VECTOR, FUNC_CALL])
r.write(case('truncated'))
stacks = folded(case('truncated'))
fig, _, _ = figures(case('truncated'))
s = stacks[0][0] if stacks else []
check('a_truncated_native_stack_takes_as_many_inner_runs_as_it_has_activations',
      python_frames(s) == ['Sorter.run'] and s[0] == '[truncated]' and
      fig.get('python: stacks inconsistent') == 0, repr(fig) + repr(stacks))

# ---- sampled in the eval loop between frames: that activation native, the runs outside ----
r = perfdata.Recording()
start(r)
r.stack(PID, TID, 2000, frames(PYSTACK[1:]))
r.sample(PID, TID, 2001, [EVAL] + NATIVE[2:])
r.write(case('between'))
stacks = folded(case('between'))
fig, _, _ = figures(case('between'))
s = stacks[0][0] if stacks else []
check('the_eval_loop_between_frames_keeps_its_activation_and_gives_the_runs_outside',
      python_frames(s) == ['<module>', 'f1', 'f2'] and
      any('_PyEval_EvalFrameDefault' in f for f in s[s.index('f2_[p]'):]) and
      fig.get('python: eval loop between frames') == 1 and
      fig.get('python: stacks inconsistent') == 0, repr(fig) + repr(stacks))

# ---- exec: the code records of the image before it are gone ----
r = perfdata.Recording()
start(r)
r.comm(PID, PID, 'python3.11', 1500, exec_=True)
r.mmap(PID, START, LENGTH, PGOFF, PY, 1501)
r.stack(PID, TID, 2000, frames(PYSTACK))
r.sample(PID, TID, 2001, NATIVE)
r.write(case('exec'))
fig, _, _ = figures(case('exec'))
check('exec_forgets_the_code_records_before_it', fig.get('python: code unknown') == 1, repr(fig))

# ---- hostile payloads: counted and left out, once warned; other programs' ignored ----
r = perfdata.Recording()
start(r)
r.raw(PID, TID, 1900, b'\x01\x02\x03\x04 not ours')
r.raw(PID, TID, 1901, perfdata.struct.pack('<IHHIIII', perfdata.MAGIC, 1, 0, PID, TID, 5000, 0))
r.raw(PID, TID, 1902, perfdata.struct.pack('<IHH', perfdata.MAGIC, 7, 0))
r.stack(PID, TID, 2000, frames(PYSTACK))
r.sample(PID, TID, 2001, NATIVE)
r.write(case('hostile'))
fig, out, err = figures(case('hostile'))
check('malformed_payloads_are_counted_and_warned_once',
      fig.get('python: malformed records') == 2 and err.count('warning') == 1 and
      'more than 1024' in err and fig.get('python: samples with Python frames') == 1,
      repr(fig) + err)
