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

# The profile of ATA Create (the corpus's ATA and SPL Token programs, tests/solana/fixtures):
# its CU add up to LiteSVM's, and the frames under each sol_invoke_signed_rust's
# program:spl_token add up to what LiteSVM logs the Token program consumed.
DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sol_system_ata_profile "no corpus at $DIR"
	exit 0
fi
mkdir -p "$TMP/fx"
cp "$ROOT/tests/solana/fixtures/spl_ata_create.json" "$TMP/fx/"
ln -s "$DIR" "$TMP/fx/programs"
fx="$TMP/fx/spl_ata_create.json"
"$TALLY" sbpf run "$fx" --folded "$TMP/ata.folded" >/dev/null 2>"$TMP/err" &&
	node "$LITESVM/fixture.mjs" "$fx" >"$TMP/ata.litesvm.json" ||
	{ fail sol_system_ata_profile "$(cat "$TMP/err")"; exit 0; }
out=$(python3 - "$TMP/ata.folded" "$TMP/ata.litesvm.json" <<'PY'
import json, re, sys
lines = [l.rsplit(' ', 1) for l in open(sys.argv[1]).read().splitlines()]
lite = json.load(open(sys.argv[2]))
total = sum(int(cu) for _, cu in lines)
token = sum(int(cu) for stack, cu in lines if ';syscall:sol_invoke_signed_rust;program:spl_token;' in stack)
token_lite = sum(int(m.group(1)) for l in lite['logs']
                 for m in [re.match(r'Program Tokenkeg\S+ consumed (\d+) of', l)] if m)
invokes = sum(1 for l in lite['logs'] if re.match(r'Program \S+ invoke \[2\]', l))
if total != lite['compute_units'] or token != token_lite or invokes != 4:
    print(f"profile {total} CU, LiteSVM {lite['compute_units']}; under program:spl_token "
          f"{token}, LiteSVM's Token consumed {token_lite}; {invokes} invokes")
PY
)
[ -z "$out" ] && pass sol_system_ata_profile || fail sol_system_ata_profile "$out"
