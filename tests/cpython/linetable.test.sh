# The line-table decoders against the interpreters themselves. 3.11's location table: for every code object
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

# 3.12 and 3.13 keep 3.11's location table: every code unit's line of their own code
# objects against their co_positions().
for v in 3.12 3.13; do
	name=linetable_lines_match_co_positions_python${v/./}
	lib=$(pyenv_lib $v)
	[ -n "$lib" ] || { skip $name "no pyenv CPython $v"; continue; }
	"$(dirname "$(dirname "$lib")")/bin/python$v" "$ROOT/tests/cpython/py/linetables.py" "$TMP/tables$v" 2>"$TMP/py.err" ||
		{ fail $name "python$v: $(head -3 "$TMP/py.err")"; continue; }
	out=$("$TMP/cpy_check" lines "$TMP/tables$v" 2>&1)
	[[ "$out" == *" 0 mismatches" && "$out" != "0 code objects"* ]] &&
		pass "$name ($out)" || fail $name "$(head -5 <<<"$out")"
done

# 3.8 and 3.9's co_lnotab and 3.10's co_linetable: every code unit's line of their own code
# objects against the interpreter's own C decoder (PyCode_Addr2Line, through ctypes), and a
# frame not started yet (f_lasti -1) at co_firstlineno.
for v in 3.8:1 3.9:1 3.10:2; do
	format=${v#*:} v=${v%:*}
	name=linetable_lines_match_pycode_addr2line_python${v/./}
	lib=$(pyenv_lib $v)
	if [ -z "$lib" ]; then
		[ "${CI:-}" = true ] && fail $name "no pyenv CPython $v (CI)" || skip $name "no pyenv CPython $v"
		continue
	fi
	"$(dirname "$(dirname "$lib")")/bin/python$v" "$ROOT/tests/cpython/py/linetables.py" "$TMP/tables$v" 2>"$TMP/py.err" ||
		{ fail $name "python$v: $(head -3 "$TMP/py.err")"; continue; }
	out=$("$TMP/cpy_check" lines "$TMP/tables$v" "$format" 2>&1)
	# The pairs must have gone down in lines, over 127 bytes, over no bytes, and (3.10)
	# over instructions of no line, or the comparison proves less than it says.
	forms=$(python3 -c '
import sys
seen = set()
for line in open(sys.argv[1]):
    t = line.split()[2]
    b = b"" if t == "-" else bytes.fromhex(t)
    for i in range(0, len(b) - 1, 2):
        d = b[i + 1] - 256 if b[i + 1] >= 128 else b[i + 1]
        seen |= {"down"} if -128 < d < 0 else {"noline"} if d == -128 else set()
        seen |= {"wide"} if b[i] >= 128 else {"empty"} if b[i] == 0 else set()
print(len(seen))' "$TMP/tables$v")
	want=$([ "$format" = 2 ] && echo 4 || echo 3)
	[[ "$out" == *" 0 mismatches" && "$out" != "0 code objects"* && "$forms" = "$want" ]] &&
		pass "$name ($out)" || fail $name "$forms of $want pair forms; $(head -5 <<<"$out")"
done
