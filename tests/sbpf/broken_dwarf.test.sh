# Real sBPF DWARF broken by old Solana linkers (the corpus's sbpf/dwarf: LLD 11 and an
# LLVM 8 fork, each with the unlinked object beside it; docs/sbpf.md, "Broken DWARF").
# The truth is llvm-symbolizer on the object (it applies the object's relocations itself),
# at the same offset into .text. tally symbolize on the broken file must never print a
# line or a directory the truth does not have: each address either gets the truth's
# file:line:column (its path a suffix of the truth's: a directory that was lost is left
# out) or no line at all. What the repair recovers is counted, and what it cannot recover
# is reported. The correct build's lines stay llvm-symbolizer's.
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/dwarf"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sbpf_broken_dwarf "no corpus at $DIR"
	exit 0
fi
if ! command -v llvm-symbolizer >/dev/null; then
	skip sbpf_broken_dwarf "llvm-symbolizer not installed"
	exit 0
fi

# never_wrong NAME SO OBJECT MIN: every .text address of SO against the truth from OBJECT;
# at least MIN addresses must get their line back.
never_wrong() {
	local name=$1 so=$2 obj=$3 min=$4 out
	if out=$(python3 - "$TALLY" "$so" "$obj" "$min" 2>&1 <<'PY'
import sys
sys.path.insert(0, 'tests/sbpf/link')
from dwarf_check import frames, sections
tally, so, obj, least = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def lines(cmd, addrs):
    return [answer[1] for answer in frames(cmd, addrs)]

base, size = sections(so)['.text']
offs = list(range(0, size, 8))
ours = lines([tally, 'symbolize', '-e', so], [base + x for x in offs])
# an object's .text starts at 0; a linked file (the correct build) is its own truth
truth = lines(['llvm-symbolizer', '--inlines', '-e', obj], offs if obj != so else [base + x for x in offs])
recovered, bad = 0, []
for x, o, t in zip(offs, ours, truth):
    path, line, col = o.rsplit(':', 2)
    tpath, tline, tcol = t.rsplit(':', 2)
    if line == '0':
        continue
    if (line, col) == (tline, tcol) and tpath.endswith(path) and path not in ('', '??'):
        recovered += 1
    else:
        bad.append('%#x: tally %s, truth %s' % (base + x, o, t))
if bad or recovered < least:
    sys.exit('\n'.join(bad[:10]) or 'only %d lines recovered' % recovered)
print('%d of %d addresses recovered' % (recovered, len(offs)))
PY
	); then pass "$name"; else fail "$name" "$out"; fi
}

# LLVM 8: each sequence's DW_LNE_set_address is shifted back; the opcodes the misapplied
# relocation zeroed after it are lost, so only the first row (binary_search's first line)
# comes back. The string offsets the linker left unrelocated are dropped, not followed.
never_wrong sbpf_broken_dwarf_llvm8_lines "$DIR/binarysearch_llvm8.so" "$DIR/binarysearch_llvm8.o" 1
out=$("$TALLY" symbolize -e "$DIR/binarysearch_llvm8.so" 0x11000 2>"$TMP/err")
[ "$(sed -n 2p <<<"$out")" = binarysearch.c:5:0 ] &&
	grep -q "binarysearch_llvm8.so: DWARF broken by an old Solana linker, repaired in part: line sequences cut where the linker zeroed their opcodes: 1; units whose strings it left unrelocated (their names dropped): 1" "$TMP/err" &&
	[ "$(llvm-symbolizer -e "$DIR/binarysearch_llvm8.o" 0 | sed -n 2p)" = /Users/sladuca/rbpf/tests/elfs/binarysearch.c:5:0 ] &&
	pass sbpf_broken_dwarf_llvm8_first_row || fail sbpf_broken_dwarf_llvm8_first_row "$out $(cat "$TMP/err")"

# LLD 11 also misapplied the 4-byte relocations (a pc-relative value written 4 bytes past
# every string and section offset): the unit header is overwritten (address size 254), so
# nothing of its DWARF is read, and tally says so; names come from .symtab.
never_wrong sbpf_broken_dwarf_lld11_lines "$DIR/noop_debug_lld11.so" "$DIR/noop_debug_lld11.o" 0
out=$("$TALLY" symbolize -e "$DIR/noop_debug_lld11.so" 0x1320 0x13a8 2>&1)
[[ "$out" == *"noop_debug_lld11.so: .debug_info at 0x0: unsupported address size; using symbol tables only"* &&
	"$out" == *$'foo_test\n??:0:0'* && "$out" == *$'entrypoint\n??:0:0'* ]] &&
	pass sbpf_broken_dwarf_lld11_reported || fail sbpf_broken_dwarf_lld11_reported "$out"

# The correct build: the repair leaves it alone (every line llvm-symbolizer has).
never_wrong sbpf_broken_dwarf_correct_build "$DIR/scratch_registers_debug.so" "$DIR/scratch_registers_debug.so" 20
