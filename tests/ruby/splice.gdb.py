# Run by gdb attached to a ruby (tests/ruby/splice.test.sh): the main thread's native stack
# as gdb unwinds it (its pcs, innermost first) and its FS base, handed to $RB_SPLICE while
# gdb holds the process stopped, its output into $RB_OUT.
import os
pid = gdb.selected_inferior().pid
f = gdb.newest_frame()
pcs = []
while f is not None and len(pcs) < 500:
    pcs.append("%x" % f.pc())
    f = f.older()
fs = int(gdb.parse_and_eval("$fs_base")) & (2**64 - 1)
print("PCS", len(pcs))
os.system("%s %d %x %s > %s" % (os.environ["RB_SPLICE"], pid, fs, " ".join(pcs), os.environ["RB_OUT"]))
