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
# incomplete one at the end) and the bytes.
for data in 41e2 414243e282 e080 eda080 f490 f0908080ff c0 41ff42 e282ac41f4; do
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); d['instruction']['data'] = sys.argv[2]; del d['expect']
json.dump(d, open(sys.argv[3], 'w'))" "$TMP/fx/spl_memo4_bad_utf8.json" $data "$TMP/fx/memo_$data.json"
	same_as_litesvm "sol_litesvm_memo_utf8_$data" "$TMP/fx/memo_$data.json"
	rm "$TMP/fx/memo_$data.json"
done

# How programs fail (tests/solana/litesvm/faults.c, linked by `tally sbpf link`): abort,
# panic, an access violation and a division by zero (VM failures, after which the runtime
# takes the whole budget), a syscall's own error, a custom error, running out of CU, an
# access violation inside a syscall (the syscall's error: the budget is left alone).
if command -v clang >/dev/null; then
	clang -target bpf -mcpu=v3 -O2 -c "$LITESVM/faults.c" -o "$TMP/faults.o" &&
		"$TALLY" sbpf link "$TMP/faults.o" -o "$TMP/faults.so" || fail sol_litesvm_faults_build "clang or link failed"
	for how in 00 01 02 03 04 05 06 07 08; do
		printf '{"programs": [{"id": "%s", "elf": "%s"}], "instruction": {"program_id": "%s", "data": "%s"}}\n' \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 "$TMP/faults.so" \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 $how >"$TMP/faults$how.json"
		same_as_litesvm "sol_litesvm_faults_$how" "$TMP/faults$how.json"
	done
else
	skip sol_litesvm_faults "clang not installed"
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
