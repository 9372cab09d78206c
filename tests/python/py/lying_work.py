# The workload of tests/python/lying.test.sh: a process whose structures lie to a reader
# from outside, made so in place with ctypes while it runs (and put back before anything
# of its own could trip over them). Three phases, SECONDS of its own CPU time each:
#   honest   phase_honest -> honest, nothing lies: the reference that names are read
#   code     lied_about's code object, before it is called, has its name (co_qualname and
#            co_name) pointing at a copy of a str whose type is not str, its file at
#            address 8 (unmapped), its line table at that same non-str
#   cycle    lie_cycle makes its caller's frame say it was called by lie_cycle, then runs
#            honest: the chain honest -> lie_cycle -> phase_cycle -> lie_cycle -> ... never
#            ends
#   interp   (given the offsets below) _PyRuntime's list of interpreters made one fake
#            interpreter, all zeros but its next, which is itself (no thread, a cycle),
#            while a new thread runs faked_worker; then, the list put back, real_worker
# Where things are comes from the interpreter's own objects and headers: a frame object
# is the frame before 3.11; from 3.11 its _PyInterpreterFrame is at f_frame, the word after
# PyObject_HEAD and f_back (Include/internal/pycore_frame.h of 3.11-3.13), checked by its
# frame_obj pointing back; the caller pointer is the frame's word that holds the caller
# frame's address; a code object's pointers are the words that hold its objects' ids.
# Usage: lying_work.py SECONDS [HEAD NEXT SIZE]: the offset of interpreters.head in
# _PyRuntimeState, of next in PyInterpreterState, and the latter's size (gdb reads them
# from the interpreter's DWARF). Prints "names N1;N2;..." (the names a reader may show for this file's functions: 3.11's
# co_qualname, else co_name), "fake TEXT" (what the non-str would read as), "honest LINE"
# (its first line) and "done".
import ctypes
import gc
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
WORD = ctypes.sizeof(ctypes.c_void_p)
FAKE_TEXT = "LIE_NAME_SHOWN_AS_RIGHT"


def word(addr):
    return ctypes.c_uint64.from_address(addr).value


def set_word(addr, value):
    ctypes.c_uint64.from_address(addr).value = value


def name_of(code):
    return getattr(code, "co_qualname", code.co_name)


def honest(deadline):
    s = 0
    while time.process_time() < deadline:
        for i in range(1000):
            s = (s + i * i) & 0xffff
    return s


def phase_honest(seconds):
    return honest(time.process_time() + seconds)


def lied_about(deadline):
    s = 1
    while time.process_time() < deadline:
        for i in range(1000):
            s = (s * 3 + i) & 0xffff
    return s


def words_holding(addr, start, end, values):
    """The offsets in [start, end) of addr's words whose value is in values."""
    return [off for off in range(start, end - WORD + 1, WORD) if word(addr + off) in values]


def phase_code(seconds):
    code = lied_about.__code__
    table = code.co_linetable if sys.version_info >= (3, 10) else code.co_lnotab
    size = type(code).__basicsize__
    # past PyObject_HEAD (its refcount and type)
    names = words_holding(id(code), 2 * WORD, size, {id(code.co_name), id(name_of(code))})
    files = words_holding(id(code), 2 * WORD, size, {id(code.co_filename)})
    tables = words_holding(id(code), 2 * WORD, size, {id(table)})
    if not names or len(files) != 1 or len(tables) != 1:
        sys.exit("code object: names at %s, file at %s, line table at %s" %
                 (names, files, tables))
    # A copy of a real str, its type made bytearray's: readable, shaped like a str, not one.
    raw = ctypes.string_at(id(FAKE_TEXT), sys.getsizeof(FAKE_TEXT))
    fake = ctypes.create_string_buffer(raw, len(raw))
    set_word(ctypes.addressof(fake) + WORD, id(bytearray))
    lies = {off: ctypes.addressof(fake) for off in names + tables}
    lies[files[0]] = 8
    saved = {off: word(id(code) + off) for off in lies}
    for off, value in lies.items():
        set_word(id(code) + off, value)
    try:
        return lied_about(time.process_time() + seconds)
    finally:
        for off, value in saved.items():
            set_word(id(code) + off, value)


def interpreter_frame(frame):
    """The address of frame's own data: the frame object itself before 3.11, then its
    _PyInterpreterFrame, whose frame_obj points back at frame."""
    if sys.version_info < (3, 11):
        return id(frame)
    at = word(id(frame) + 3 * WORD)
    if not words_holding(at, 0, 12 * WORD, {id(frame)}):
        sys.exit("no _PyInterpreterFrame at f_frame (0x%x)" % at)
    return at


def lie_cycle(seconds):
    me = sys._getframe()
    v, c = interpreter_frame(me), interpreter_frame(me.f_back)
    back = words_holding(v, 0, 12 * WORD, {c})
    if len(back) != 1:
        sys.exit("the caller's address at %s in lie_cycle's frame" % back)
    saved = word(c + back[0])
    set_word(c + back[0], v)
    try:
        return honest(time.process_time() + seconds)
    finally:
        set_word(c + back[0], saved)


def phase_cycle(seconds):
    return lie_cycle(seconds)


def faked_worker(deadline):
    s = 0
    while time.process_time() < deadline:
        for i in range(1000):
            s = (s + i) & 0xffff
    print("faked_worker ran %.2f s" % time.thread_time(), flush=True)


def real_worker(deadline):
    s = 1
    while time.process_time() < deadline:
        for i in range(1000):
            s = (s ^ i) & 0xffff
    print("real_worker ran %.2f s" % time.thread_time(), flush=True)


def in_thread(work, seconds):
    t = threading.Thread(target=work, args=(time.process_time() + seconds,))
    t.start()
    t.join()


def phase_interp(seconds, head, next_, size):
    runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    fake = ctypes.create_string_buffer(size)
    set_word(ctypes.addressof(fake) + next_, ctypes.addressof(fake))
    saved = word(runtime + head)
    set_word(runtime + head, ctypes.addressof(fake))
    try:
        in_thread(faked_worker, seconds)
    finally:
        set_word(runtime + head, saved)
    in_thread(real_worker, seconds)


def main():
    gc.disable()  # the collector must not follow a lie while it stands
    print("names %s" % ";".join(sorted(
        name_of(f.__code__) for f in (
            word, set_word, name_of, honest, phase_honest, lied_about, words_holding,
            phase_code, interpreter_frame, lie_cycle, phase_cycle, faked_worker, real_worker,
            in_thread, phase_interp, main))), flush=True)
    print("fake %s" % FAKE_TEXT, flush=True)
    print("honest %d" % honest.__code__.co_firstlineno, flush=True)
    phase_honest(SECONDS)
    phase_code(SECONDS)
    phase_cycle(SECONDS)
    if len(sys.argv) > 4:
        phase_interp(SECONDS, *(int(a) for a in sys.argv[2:5]))
    print("done", flush=True)


main()
