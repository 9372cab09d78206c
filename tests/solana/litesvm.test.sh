# LiteSVM (npm `litesvm`: agave's program runtime and sBPF VM) as the oracle: every fixture
# of tests/solana/fixtures runs in tally and in LiteSVM (tests/solana/litesvm/fixture.mjs),
# which must agree on the result, the CU, the framed log, the return data and every
# account's post-state; and every fixture's `expect` is what LiteSVM gives now (written by
# tests/solana/litesvm/regen-expect.sh, never from tally).
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sol_litesvm "no corpus at $DIR"
	exit 0
fi
. tests/solana/litesvm/oracle.sh
litesvm_ready sol_litesvm || exit 0

mkdir -p "$TMP/fx"
cp "$ROOT"/tests/solana/fixtures/*.json "$TMP/fx/"
ln -s "$DIR" "$TMP/fx/programs"

for fx in "$TMP"/fx/*.json; do
	same_as_litesvm "sol_litesvm_$(basename "$fx" .json)" "$fx"
done

# SPL Memo v4 logs the memo with sol_log_: bytes that are not UTF-8 fail the syscall, and
# the log shows Rust's Utf8Error (the valid prefix, the invalid sequence's length, or an
# incomplete one at the end) and every byte, however many: 63 bytes, 600 (a 3 KB line),
# 1,101, and 2,101 (a line past the log collector's 10,000 bytes: "Log truncated").
long=$(python3 -c "print('414141' + 'ff' * 60, 'ff' * 600, 'e2' * 1100 + '41', 'c3' * 2100 + 'ff')")
for data in 41e2 414243e282 e080 eda080 f490 f0908080ff c0 41ff42 e282ac41f4 $long; do
	name=$data
	[ ${#data} -gt 20 ] && name=${#data}
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d['instruction']['data'] = sys.argv[2]; del d['expect']
json.dump(d, open(sys.argv[3], 'w'))" "$TMP/fx/spl_memo4_bad_utf8.json" $data "$TMP/fx/memo_$name.json"
	same_as_litesvm "sol_litesvm_memo_utf8_$name" "$TMP/fx/memo_$name.json"
	rm "$TMP/fx/memo_$name.json"
	# what the long cases rest on: LiteSVM's failure line lists all 600 bytes
	[ "$name" = 1200 ] && { grep -qE "failed: invalid utf-8 sequence of 1 bytes from index 0: \[(255, ){599}255\]" "$TMP/litesvm.json" &&
		pass sol_litesvm_memo_utf8_every_byte || fail sol_litesvm_memo_utf8_every_byte "$(head -c 300 "$TMP/litesvm.json")"; }
done

# The System program's nonce instructions (tests/solana/litesvm/nonce.py): each succeeding
# and failing every way agave checks, run directly; where the nonce account changes,
# LiteSVM's post-state must be the state the nonce layout says.
mkdir -p "$TMP/nonce"
python3 "$LITESVM/nonce.py" gen "$TMP/nonce"
for fx in "$TMP"/nonce/nonce_*.json; do
	name=$(basename "$fx" .json)
	same_as_litesvm "sol_litesvm_$name" "$fx"
	case ${name#nonce_} in
	init_ok | advance_ok | withdraw_all | authorize_ok | authorize_legacy | upgrade_legacy)
		python3 "$LITESVM/nonce.py" reach "${name#nonce_}" "$TMP/litesvm.json" &&
			pass "sol_litesvm_${name}_reached" ||
			fail "sol_litesvm_${name}_reached" "$(head -c 400 "$TMP/litesvm.json")" ;;
	esac
done

# How programs fail (tests/solana/litesvm/faults.c, linked by `tally sbpf link`): abort,
# panic, an access violation and a division by zero (VM failures, after which the runtime
# takes the whole budget), a syscall's own error, a custom error, running out of CU, an
# access violation inside a syscall (the syscall's error: the budget is left alone); and
# log lines that hold NULs, kept whole.
if command -v clang >/dev/null; then
	clang -target bpf -mcpu=v3 -O2 -c "$LITESVM/faults.c" -o "$TMP/faults.o" &&
		"$TALLY" sbpf link "$TMP/faults.o" -o "$TMP/faults.so" || fail sol_litesvm_faults_build "clang or link failed"
	for how in 00 01 02 03 04 05 06 07 08 09; do
		printf '{"programs": [{"id": "%s", "elf": "%s"}], "instruction": {"program_id": "%s", "data": "%s"}}\n' \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 "$TMP/faults.so" \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 $how >"$TMP/faults$how.json"
		same_as_litesvm "sol_litesvm_faults_$how" "$TMP/faults$how.json"
	done
	# LiteSVM's own lines (same_as_litesvm's last output) hold the NULs; a fixture that
	# expects them passes `tally sbpf test`, and one that expects the line cut does not;
	# `sbpf run` prints the bytes.
	grep -qF '"Program log: ab\u0000cd","Program log: \u0000"' "$TMP/litesvm.json" &&
		pass sol_litesvm_log_nul_reached || fail sol_litesvm_log_nul_reached "$(cat "$TMP/litesvm.json")"
	mkdir -p "$TMP/nul" "$TMP/nulcut"
	python3 - "$TMP/faults09.json" "$TMP/litesvm.json" "$TMP/nul/nul.json" "$TMP/nulcut/nul.json" <<'PY'
import json, sys
fx, lite = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fx["expect"] = {"result": lite["result"], "logs": lite["logs"]}
json.dump(fx, open(sys.argv[3], "w"))
fx["expect"]["logs"] = [l.split("\0")[0] for l in lite["logs"]]
json.dump(fx, open(sys.argv[4], "w"))
PY
	"$TALLY" sbpf test "$TMP/nul" >"$TMP/nul.out" 2>&1 && pass sol_litesvm_log_nul_expected ||
		fail sol_litesvm_log_nul_expected "$(cat "$TMP/nul.out")"
	"$TALLY" sbpf test "$TMP/nulcut" >"$TMP/nul.out" 2>&1 &&
		fail sol_litesvm_log_nul_cut_refused "$(cat "$TMP/nul.out")" || pass sol_litesvm_log_nul_cut_refused
	sed 's|faults.so"|faults.so\\u0000.txt"|' "$TMP/faults09.json" >"$TMP/nulpath.json"
	"$TALLY" sbpf run "$TMP/nulpath.json" >"$TMP/nul.out" 2>&1
	[ $? = 1 ] && grep -q 'a string holds a NUL' "$TMP/nul.out" && pass sol_fixture_nul_elsewhere_refused ||
		fail sol_fixture_nul_elsewhere_refused "$(cat "$TMP/nul.out")"
	"$TALLY" sbpf run "$TMP/faults09.json" >"$TMP/nul.txt" 2>&1
	printf 'log: Program log: ab\0cd\n' | cmp -s - <(grep -a 'ab' "$TMP/nul.txt") &&
		pass sol_sbpf_run_log_nul_text || fail sol_sbpf_run_log_nul_text "$(od -c "$TMP/nul.txt" | head -5)"
else
	skip sol_litesvm_faults "clang not installed"
fi

# What the differential fuzzer (fuzz/sbpf_diff.py) found, one case each
# (tests/solana/litesvm/found.c: the log collector's limit, syscall pointers' alignment,
# agave's error texts), and sol_get_stack_height / sol_get_processed_sibling_instruction
# across three levels of CPI with the System program among the siblings (siblings.c), and
# the instruction trace's limit of 64 instructions (trace_limit.c).
if command -v clang >/dev/null; then
	for prog in found siblings trace_limit; do
		clang -target bpf -mcpu=v3 -O2 -c "$LITESVM/$prog.c" -o "$TMP/$prog.o" &&
			"$TALLY" sbpf link "$TMP/$prog.o" -o "$TMP/$prog.so" ||
			fail "sol_litesvm_${prog}_build" "clang or link failed"
	done
	for how in 00 01 02 03 04 05 06 07 08; do
		printf '{"programs": [{"id": "%s", "elf": "%s"}], "instruction": {"program_id": "%s", "data": "%s"}}\n' \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 "$TMP/found.so" \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 $how >"$TMP/found$how.json"
		same_as_litesvm "sol_litesvm_found_$how" "$TMP/found$how.json"
	done
	P=42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 A=ArBY5Mui2E27kM5Lb4VvhHUJCQkJjggJoJufH3v2vPwW
	B=BjGGVGaaNZWEyrgojH4wGWAEMitNnEskRSCR3aqv2JB8 S=11111111111111111111111111111111
	cat >"$TMP/siblings.json" <<EOF
{"programs": [{"id": "$P", "elf": "$TMP/siblings.so"}],
 "accounts": [{"pubkey": "$A", "owner": "$S", "lamports": 10000000000, "data": ""},
              {"pubkey": "$B", "owner": "$S", "lamports": 1000000000, "data": ""}],
 "instruction": {"program_id": "$P", "data": "00", "accounts": [
   {"pubkey": "$P", "is_signer": false, "is_writable": false},
   {"pubkey": "$A", "is_signer": true, "is_writable": true},
   {"pubkey": "$B", "is_signer": false, "is_writable": true},
   {"pubkey": "$S", "is_signer": false, "is_writable": false}]}}
EOF
	same_as_litesvm sol_litesvm_siblings "$TMP/siblings.json"
	# the comparison is only as good as what the program logs: the mode 1 call (data
	# 01aa) is sibling 3 of the third mode 2 call, the Transfer sibling 0 of the first
	grep -q '"Program log: 0x1, 0x1, 0xaa, 0x1, 0x1"' "$TMP/litesvm.json" &&
		grep -q '"Program log: 0x0, 0x1, 0xc, 0x2, 0x0"' "$TMP/litesvm.json" &&
		pass sol_litesvm_siblings_found || fail sol_litesvm_siblings_found "$(cat "$TMP/litesvm.json")"

	# 63 invokes (of itself or of the System program, a builtin) fill the trace with the
	# transaction's instruction; the 64th fails the transaction, having paid its invoke.
	for data in 3f00 4000 4600 3f01 4001; do
		sed -e "s|$TMP/siblings.so|$TMP/trace_limit.so|" -e "s|\"data\": \"00\"|\"data\": \"$data\"|" \
			"$TMP/siblings.json" >"$TMP/trace_limit.json"
		same_as_litesvm "sol_litesvm_trace_limit_$data" "$TMP/trace_limit.json"
		want=MaxInstructionTraceLengthExceeded
		[ "${data%??}" = 3f ] && want=success
		[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["result"])' "$TMP/litesvm.json")" = $want ] &&
			pass "sol_litesvm_trace_limit_${data}_result" ||
			fail "sol_litesvm_trace_limit_${data}_result" "LiteSVM: expected $want: $(head -c 200 "$TMP/litesvm.json")"
	done

	# callx through function pointers (tests/solana/litesvm/callx.c), linked both ways: a
	# table and a chosen pointer, then a pointer into a function's body, off the
	# instruction grid (+3 bytes), past the text's end (CallOutsideTextSegment, a VM
	# failure). v3 reads callx's register from dst, where upstream clang does not put it.
	for v in v0 v3; do
		cpu=v3
		[ $v = v0 ] && cpu=v2
		clang -target bpf -mcpu=$cpu -O2 -c "$LITESVM/callx.c" -o "$TMP/callx_$v.o" &&
			"$TALLY" sbpf link --version $v "$TMP/callx_$v.o" -o "$TMP/callx_$v.so" &&
			llvm-objdump -d "$TMP/callx_$v.so" | grep -q 'callx r' ||
			fail "sol_litesvm_callx_${v}_build" "clang, link or the callx instruction failed"
		for data in "" 00 0102 05060708090a ff0000 ff0800 ff0300 ff0010 fff8ff; do
			printf '{"programs": [{"id": "%s", "elf": "%s"}], "instruction": {"program_id": "%s", "data": "%s"}}\n' \
				"$P" "$TMP/callx_$v.so" "$P" "$data" >"$TMP/callx.json"
			same_as_litesvm "sol_litesvm_callx_${v}_${data:-empty}" "$TMP/callx.json"
			# what the comparison rests on: the table's pointers ran (sub, add, mul, sub,
			# add, mul from 7, then sub 6: 0x23f), and the runtime saw the bad pointer
			case $data in
			05060708090a) want='"Program log: 0x23f, 0x6, 0x0, 0x0, 0x0"' ;;
			ff0010) want='callx attempted to call outside of the text segment' ;;
			*) continue ;;
			esac
			grep -q "$want" "$TMP/litesvm.json" && pass "sol_litesvm_callx_${v}_${data}_ran" ||
				fail "sol_litesvm_callx_${v}_${data}_ran" "$(cat "$TMP/litesvm.json")"
		done
	done

	# A short differential run (the 10,000-case one is a benchmark: fuzz/sbpf_diff.py):
	# generated programs and random instructions to the corpus's programs must be the
	# same in both, or differ only as docs/sbpf.md explains.
	# The corpus as the rest of this script finds it (tests/lib.sh: SHARED), wherever the
	# checkout lies.
	out=$(SBPF_CORPUS="${SBPF_CORPUS:-$SHARED/corpus/sbpf}" python3 "$ROOT/fuzz/sbpf_diff.py" \
		--cases 150 --seconds 50 --seed 7 --tally "$TALLY" 2>&1) &&
		pass sol_litesvm_fuzz_smoke || fail sol_litesvm_fuzz_smoke "$(echo "$out" | tail -8)"
else
	skip sol_litesvm_found "clang not installed"
fi

out=$(node "$LITESVM/expect.mjs" --check "$TMP"/fx/*.json 2>&1) &&
	pass sol_litesvm_expect_is_litesvms || fail sol_litesvm_expect_is_litesvms "$out"

# The comparison can fail: one CU more in tally's outcome is reported.
fx="$TMP/fx/spl_token_transfer.json"
"$TALLY" sbpf run "$fx" --json | sed 's/"compute_units": 4645/"compute_units": 4646/' >"$TMP/t.json"
node "$LITESVM/fixture.mjs" "$fx" >"$TMP/l.json"
out=$(python3 "$LITESVM/compare.py" "$TMP/t.json" "$TMP/l.json")
[ $? = 1 ] && [ "$out" = "compute_units: tally 4646, LiteSVM 4645" ] &&
	pass sol_litesvm_compare_reports || fail sol_litesvm_compare_reports "$out"
