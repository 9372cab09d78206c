# The System program as a builtin reachable by CPI: tests/solana/system/system_caller.c
# (linked by `tally sbpf link`) invokes it with each case of tests/solana/system/cases.py
# (every System instruction tally runs, its success and each error path); tally and LiteSVM
# (the Solana runtime) must agree on the result, CU, logs and accounts of every case, and
# the result is the one agave's system_processor gives the path the case is named after.
. tests/lib.sh
. tests/solana/litesvm/oracle.sh
litesvm_ready sol_system || exit 0
if ! command -v clang >/dev/null || ! command -v python3 >/dev/null; then
	skip sol_system "clang or python3 not installed"
	exit 0
fi
SRC="$ROOT/tests/solana/system"
clang -target bpf -mcpu=v3 -O2 -c "$SRC/system_caller.c" -o "$TMP/system_caller.o" &&
	"$TALLY" sbpf link "$TMP/system_caller.o" -o "$TMP/system_caller.so" ||
	{ fail sol_system_build "clang or tally sbpf link failed"; exit 0; }
mkdir -p "$TMP/cases"
python3 "$SRC/cases.py" "$TMP/cases" "$TMP/system_caller.so" || { fail sol_system_cases "cases.py failed"; exit 0; }
while read -r name want; do
	same_as_litesvm "sol_system_$name" "$TMP/cases/$name.json"
	got=$(sed -n 's/^{"result": "\([^"]*\)".*/\1/p' "$TMP/tally.json")
	[ "$got" = "$want" ] && pass "sol_system_${name}_result" ||
		fail "sol_system_${name}_result" "expected $want, got $got"
done <"$TMP/cases/cases.txt"
