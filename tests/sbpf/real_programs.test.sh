# Deployed programs from corpus/sbpf/programs, run bare with hand-serialized inputs (no
# accounts: u64 0, u64 data length, the instruction data, a 32-byte program id). What they
# must do is what their sources do: hello_world and hello_solana log their greeting,
# SPL Memo accepts UTF-8 and rejects anything else (v1 with ProgramError
# InvalidInstructionData, 3 << 32; v4 by logging the memo, which sol_log_ refuses).
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sbpf_real_programs "no corpus at $DIR"
	exit 0
fi

# input DATA_LENGTH_AS_OCTAL_ESCAPE DATA > FILE
input() {
	printf '\000\000\000\000\000\000\000\000'
	printf "$1"'\000\000\000\000\000\000\000'
	printf "$2"
	head -c 32 /dev/zero
}
input '\000' '' >"$TMP/empty"
input '\005' 'hello' >"$TMP/memo_ok"
input '\002' '\377\376' >"$TMP/memo_bad"

run() { "$TALLY" sbpf run "$DIR/$1" --input "$TMP/$2" --json 2>&1; }

out=$(run hello_world.so empty)
[[ "$out" == *'"result": "success"'* && "$out" == *'"Program log: Hello world!"'* ]] &&
	pass sbpf_hello_world_logs || fail sbpf_hello_world_logs "$out"
out=$(run hello_solana.so empty)
[[ "$out" == *'"result": "success"'* && "$out" == *'"Program log: Hello, Solana!"'* ]] &&
	pass sbpf_hello_solana_logs || fail sbpf_hello_solana_logs "$out"

out=$(run spl_memo-1.0.0.so memo_ok)
[[ "$out" == *'"result": "success", "return_value": 0,'* ]] && pass sbpf_memo1_accepts_utf8 ||
	fail sbpf_memo1_accepts_utf8 "$out"
out=$(run spl_memo-1.0.0.so memo_bad)
[[ "$out" == *'"result": "success", "return_value": 12884901888,'* ]] &&
	pass sbpf_memo1_rejects_bad_utf8 || fail sbpf_memo1_rejects_bad_utf8 "$out"
out=$(run spl_memo-4.0.0.so memo_ok)
[[ "$out" == *'"result": "success", "return_value": 0,'* && "$out" == *'"Program log: hello"'* ]] &&
	pass sbpf_memo4_logs_utf8 || fail sbpf_memo4_logs_utf8 "$out"
out=$(run spl_memo-4.0.0.so memo_bad)
[[ "$out" == *'"result": "InvalidString"'* ]] && pass sbpf_memo4_rejects_bad_utf8 ||
	fail sbpf_memo4_rejects_bad_utf8 "$out"

# Every program of the corpus loads and disassembles (ptoken_v3.so excepted: it carries
# sBPF v3 flags with e_machine EM_SBPF, which the reference's strict loader refuses).
for f in "$DIR"/*.so; do
	name=$(basename "$f")
	if [ "$name" = ptoken_v3.so ]; then
		err=$("$TALLY" sbpf disasm "$f" 2>&1 >/dev/null)
		[[ "$err" == *'FailedToParse(InvalidFileHeader)' ]] && pass sbpf_strict_refuses_em_sbpf ||
			fail sbpf_strict_refuses_em_sbpf "$err"
		continue
	fi
	n=$("$TALLY" sbpf disasm "$f" | grep -c -E '^ *[0-9]+:  ')
	[ "${n:-0}" -gt 10 ] && pass "sbpf_disasm_$name" || fail "sbpf_disasm_$name" "$n lines"
done

# Every function symbol becomes a label: as many as readelf lists distinct function
# addresses (aliases at one address give one label).
f="$DIR/symbols_442fn.so"
want=$(readelf -sW "$f" | awk '$4 == "FUNC" && $2 !~ /^0+$/ { print $2 }' | sort -u | wc -l)
got=$("$TALLY" sbpf disasm "$f" | grep -c -E '^[^ ].*:$')
[ "$want" -gt 400 ] && [ "$got" = "$want" ] && pass sbpf_labels_match_readelf ||
	fail sbpf_labels_match_readelf "readelf $want, tally $got"
