# Checks tally's Python frames of lying_work.py (a process whose structures lie), as
# `go tool pprof -traces -lines` reads them from tally's pprof, against what the workload
# said of itself, and prints PASS:/FAIL: lines (tests/lib.sh's protocol):
#   - no frame is shown by what the lies say: the non-str's text is nowhere, and every
#     frame of the workload's file has one of its real names, in an order its calls make;
#   - lied_about's frames (under phase_code) are marked: name and file "[read failed]",
#     no line;
#   - the cycle's samples are counted as read failed (READ_FAILED figure) and none shows
#     a frame of the cycle;
#   - the thread that ran while the interpreters' list was a fake interpreter (faked_worker)
#     shows no frame, its samples read failed, where real_worker, run the same way once
#     the list is put back, does;
#   - honest's frames are named and lined (the check is not vacuous).
# Usage: lying_check.py WORK_OUT TRACES READ_FAILED TAG
import re
import sys

MARK = '[read failed]'
SEP = re.compile(r'^-+\+-+$')
# "FUNC FILE[:LINE]", FUNC and FILE either a name without the other's shape or the mark.
LOC = re.compile(r'^(?P<func>.*?) (?P<file>\S+\.py|\[read failed\])(?::(?P<line>\d+))?$')

# Who may call whom in the workload's file (outer first), the Python frames of a sample.
CALLS = {'<module>': {'main'},
         'main': {'phase_honest', 'phase_code', 'phase_cycle', 'phase_interp', 'name_of',
                  'words_holding'},
         'phase_interp': {'in_thread', 'word', 'set_word'},
         'phase_honest': {'honest'}, 'phase_code': {'lied_about', 'words_holding', 'word',
                                                      'set_word', MARK},
         'phase_cycle': {'lie_cycle'},
         'lie_cycle': {'honest', 'interpreter_frame', 'words_holding', 'word', 'set_word'},
         'interpreter_frame': {'words_holding', 'word'}, 'words_holding': {'word'}}


def stacks(path, ours):
    """(count, Python frames of the workload's file outermost first: (function, file,
    line)) per trace that has some; a frame marked read failed counts as the file's.
    Frames of other files (the interpreter's start-up, ctypes) and comprehensions are left
    out."""
    out, cur, count = [], None, 0
    for raw in open(path):
        line = raw.rstrip('\n')
        if SEP.match(line):
            if cur:
                out.append((count, cur[::-1]))
            cur, count = [], None
            continue
        if cur is None or not line.strip():
            continue
        text = line.strip()
        if count is None:
            n, text = text.split(None, 1)
            count = int(n)
        m = LOC.match(text)
        if m and m.group('file') in (ours, MARK) and (
                m.group('func') == '<module>' or '<' not in m.group('func')):
            cur.append((m.group('func'), m.group('file'), int(m.group('line') or 0)))
    if cur:
        out.append((count, cur[::-1]))
    return out


def report(name, good, detail):
    print('%s: %s%s (%s)' % ('PASS' if good else 'FAIL', name, SUFFIX, detail))


def main(work, traces, read_failed):
    said = dict(line.rstrip('\n').split(' ', 1) for line in open(work) if ' ' in line)
    names = set(said['names'].split(';'))
    fake = said['fake']
    text = open(traces).read()
    m = re.search(r' (\S*/lying_work\.py)(?::\d+)?$', text, re.M)
    ours = m.group(1) if m else 'lying_work.py'
    all_stacks = stacks(traces, ours)

    # Nothing the lies say shows, and every frame is a real one in a real order.
    wrong = []
    for n, st in all_stacks:
        fs = [f[0] for f in st]
        ok = all(f in names or f == '<module>' or f == MARK for f in fs) and all(
            b in CALLS.get(a, ()) for a, b in zip(fs, fs[1:]))
        if not ok:
            wrong.append('%d x %s' % (n, ';'.join(fs)))
    report('python_lying_no_wrong_frame_is_shown', fake not in text and not wrong,
           '%d stacks; %s' % (len(all_stacks), ' | '.join(wrong[:3]) or 'none wrong'))

    # lied_about (under phase_code): marked, never named, filed or lined by the lies.
    marked = lied = 0
    for n, st in all_stacks:
        fs = [f[0] for f in st]
        if 'phase_code' not in fs or fs[-1] == 'phase_code':
            continue
        f = st[fs.index('phase_code') + 1]
        if f[0] in ('words_holding', 'word', 'set_word'):
            continue
        lied += n
        marked += n * (f == (MARK, MARK, 0))
    report('python_lying_code_object_frames_are_marked_read_failed',
           lied >= 50 and marked == lied, '%d of %d samples' % (marked, lied))

    # The cycle: its samples read failed; none has a frame under phase_cycle but the
    # workload's own (checked above), and none in honest under lie_cycle (where the cycle
    # stood).
    in_cycle = sum(n for n, st in all_stacks if [f[0] for f in st][-2:] == ['lie_cycle', 'honest'])
    report('python_lying_cycle_is_read_failed_and_shows_no_frame',
           read_failed >= 50 and in_cycle == 0,
           '%d samples read failed, %d spliced in the cycle' % (read_failed, in_cycle))

    # The fake interpreter: its thread ran (its own CPU time) and is nowhere shown.
    if 'faked_worker' in said:
        ran = float(said['faked_worker'].split()[1])
        faked = sum(n for n, st in all_stacks if 'faked_worker' in [f[0] for f in st])
        real = sum(n for n, st in all_stacks if [f[0] for f in st] == ['real_worker'])
        # its samples read failed too (the list comes back): with the cycle's, some 1,000
        report('python_lying_fake_interpreter_shows_no_frame',
               ran >= 0.2 and faked == 0 and real >= 50 and read_failed >= 700,
               '%d samples in faked_worker, which ran %.2f s; %d in real_worker after; '
               '%d read failed in all' % (faked, ran, real, read_failed))

    # The honest phase: named, and lined inside honest.
    first = int(said.get('honest', '0'))
    total = good = 0
    for n, st in all_stacks:
        fs = [f[0] for f in st]
        if fs[-2:] == ['phase_honest', 'honest']:
            total += n
            good += n * (st[-1][2] > first)
    report('python_lying_honest_frames_are_read', total >= 50 and good == total,
           '%d of %d samples lined inside honest' % (good, total))


SUFFIX = '_' + sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else ''
main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
