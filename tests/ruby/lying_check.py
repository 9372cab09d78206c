"""Checks what tally's Ruby reader made of the lying workload (rb/lying.rb), from the
driver's stacks (src/rb_check.c) of the main thread TID:
  - label phase: Liar#bad_label's frame shown as "[read failed]" for its label and path,
    its callers named as Ruby names them, in some samples; the lie's objects never shown;
  - frame phase: the stacks inside Liar#bad_frame marked read-failed (flag 2) and ending at
    bad_frame: nothing of the lying frame (frame_caller) or beyond it is shown.
Usage: lying_check.py SAMPLES TID NAME"""
import sys


def samples(path, tid):
    out, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("S "):
            f = line.split()
            cur = None
            if f[1] == tid:
                cur = (int(f[2]), [])
                out.append(cur)
        elif cur is not None and line[:2] in ("F ", "C "):
            cur[1].append(line[2:].split("\t")[0])
    return out


def main():
    path, tid, name = sys.argv[1:4]
    got = samples(path, tid)
    marked = [f for fl, f in got if "[read failed]" in f]
    in_frame = [(fl, f) for fl, f in got if "bad_frame" in f]
    bad = []
    for f in marked:
        inner = f[1:] if f[0] == "clock_gettime" else f
        if inner != ["until_stop", "[read failed]", "block in <main>", "phase", "<main>"]:
            bad.append(f)
    for fl, f in in_frame:
        if not fl & 2 or f[-1] != "bad_frame" or "frame_caller" in f:
            bad.append((fl, f))
    print(f"{name}: {len(got)} samples, {len(marked)} with the lying label marked, "
          f"{len(in_frame)} inside the lying frame")
    if len(marked) < 5 or len(in_frame) < 5 or bad:
        print(f"FAIL: {name}: {len(marked)} marked, {len(in_frame)} in the frame; wrong: {bad[:3]}")
        return 1
    print(f"PASS: {name}")
    return 0


sys.exit(main())
