# The 3.11 location-table decoder against the interpreter itself: for every code object
# of tests/cpython/py/linetables.py (loops, handlers, comprehensions, multi-line
# expressions, generators, lambdas, a long function with big line jumps) and of a few
# standard modules, the line of every code unit equals co_positions()'s.
. tests/lib.sh
. tests/cpython/driver.sh
python_writes linetable_lines_match_co_positions linetables.py "$TMP/tables"
out=$("$TMP/cpy_check" lines "$TMP/tables" 2>&1)
# Every form of entry must have been met, or the comparison proves less than it says.
forms=$("$PY311" -c '
import sys
seen = set()
for line in open(sys.argv[1]):
    t = line.split()[2]
    seen.update(b >> 3 & 15 for b in (b"" if t == "-" else bytes.fromhex(t)) if b & 0x80)
print(len(seen))' "$TMP/tables")
if [ "$forms" = 16 ] && [[ "$out" == *" 0 mismatches" ]] && [[ "$out" != "0 code objects"* ]]; then
	pass linetable_lines_match_co_positions
else
	fail linetable_lines_match_co_positions "$forms of 16 entry forms; $(head -5 <<<"$out")"
fi
