# Fixtures for deployed programs (tests/solana/fixtures/*.json) run through `tally sbpf test`.
# The programs come from the corpus: the fixtures are copied next to a `programs` link to it.
# Every `expect` (result, CU, framed log, return data, accounts) is LiteSVM's, written by
# tests/solana/litesvm/regen-expect.sh (litesvm.test.sh checks that it still is); SPL Token's
# Transfer costs 4645 CU there, the figure the p-token project publishes for SPL Token.
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sol_fixtures "no corpus at $DIR"
	exit 0
fi
mkdir -p "$TMP/fx"
cp "$ROOT"/tests/solana/fixtures/*.json "$TMP/fx/"
ln -s "$DIR" "$TMP/fx/programs"

out=$("$TALLY" sbpf test "$TMP/fx" 2>&1)
n=$(ls "$ROOT"/tests/solana/fixtures/*.json | wc -l)
[[ "$out" == *"$n passed, 0 failed"* ]] && pass sol_fixtures_all_pass || fail sol_fixtures_all_pass "$out"

# A fixture that does not hold fails, and says what differed.
sed 's/"result": "success"/"result": "Custom(1)"/' \
	"$TMP/fx/spl_token_transfer.json" >"$TMP/fx/wrong.json"
out=$("$TALLY" sbpf run "$TMP/fx/wrong.json" 2>&1)
rc=$?
[[ $rc == 1 && "$out" == *'expect.result: expected Custom(1), got success'* ]] &&
	pass sol_fixture_mismatch_reported || fail sol_fixture_mismatch_reported "rc=$rc $out"
out=$("$TALLY" sbpf test "$TMP/fx" 2>&1)
[[ $? == 1 && "$out" == *"FAIL $TMP/fx/wrong.json"* && "$out" == *"$n passed, 1 failed"* ]] &&
	pass sol_fixture_test_counts_failures || fail sol_fixture_test_counts_failures "$out"
rm "$TMP/fx/wrong.json"

# A wrong balance is named with the account and both values.
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d['expect']['accounts'][1]['data'] = d['expect']['accounts'][1]['data'][:128] + 'fb' + d['expect']['accounts'][1]['data'][130:]
json.dump(d, open(sys.argv[2], 'w'))" "$TMP/fx/spl_token_transfer.json" "$TMP/balance.json"
ln -sf "$DIR" "$TMP/programs"
out=$("$TALLY" sbpf run "$TMP/balance.json" 2>&1)
[[ $? == 1 && "$out" == *"balance.json: expect.accounts[1] ("*"): data: expected "*"fb00000000000000"*", got "*"fa00000000000000"* ]] &&
	pass sol_fixture_account_mismatch || fail sol_fixture_account_mismatch "$out"

# The clock the fixture sets is what the program reads (clock_sysvar.so returns the
# unix_timestamp, big-endian, as return data); without it the clock is zero.
python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); del d['sysvars']; d['expect'] = {'return_data': '0000000000000000'}
json.dump(d, open(sys.argv[2], 'w'))" "$TMP/fx/clock_sysvar.json" "$TMP/clock0.json"
out=$("$TALLY" sbpf run "$TMP/clock0.json" 2>&1)
[ $? = 0 ] && pass sol_fixture_default_clock || fail sol_fixture_default_clock "$out"

# Errors name the file and the field: an instruction account missing from "accounts", a
# bad key, bad hex.
edit() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d,open(sys.argv[3],'w'))" "$TMP/fx/$1" x "$TMP/bad.json"; }
edit spl_token_initialize_account.json "del d['accounts'][2]"
out=$("$TALLY" sbpf run "$TMP/bad.json" 2>&1)
[[ $? == 1 && "$out" == "tally: $TMP/bad.json: instruction.accounts[2].pubkey: account 3x9az88Dkbxa6tkKByxqEn7jBTJCJCD4dVvou49L24ET is not in \"accounts\"" ]] &&
	pass sol_fixture_missing_account || fail sol_fixture_missing_account "$out"
edit spl_token_transfer.json "d['accounts'][1]['owner']='0OIl'"
out=$("$TALLY" sbpf run "$TMP/bad.json" 2>&1)
[[ "$out" == *"bad.json: accounts[1].owner: not a base58 public key of 32 bytes" ]] &&
	pass sol_fixture_bad_key || fail sol_fixture_bad_key "$out"
edit spl_token_transfer.json "d['instruction']['data']='0g'"
out=$("$TALLY" sbpf run "$TMP/bad.json" 2>&1)
[[ "$out" == *"bad.json: instruction.data: not hex" ]] && pass sol_fixture_bad_hex ||
	fail sol_fixture_bad_hex "$out"
