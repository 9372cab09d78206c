# `tally sbpf test DIR --bench FILE.md`: the CU table of Mollusk's bencher (its
# compute_units.md layout, checked line by line here), whose CUs must be LiteSVM's (every
# fixture's expect.compute_units, written by tests/solana/litesvm/regen-expect.sh), compared
# with the newest table already in the file: a CU that grew past --bench-threshold fails
# and leaves the file alone, anything else puts a table with the deltas before the old ones.
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs"
if [ ! -f "$DIR/SOURCES.md" ]; then
	skip sbpf_bench "no corpus at $DIR"
	exit 0
fi
mkdir -p "$TMP/fx"
for f in hello_world spl_memo4_utf8 spl_token_transfer; do
	cp "$ROOT/tests/solana/fixtures/$f.json" "$TMP/fx/"
done
ln -s "$DIR" "$TMP/fx/programs"
md=$TMP/compute_units.md

# The layout, read back independently: date and version lines, the header and its rule,
# one row per fixture in name order with LiteSVM's CU, then an empty line. argv: FILE
# EXPECTED-DELTA... (one per fixture); the table must be the file's first.
layout_ok() {
	python3 - "$TMP/fx" "$@" <<'EOF'
import json, re, sys, glob, os
fx, path, deltas = sys.argv[1], sys.argv[2], sys.argv[3:]
lines = open(path).read().split('\n')
names = sorted(os.path.basename(p)[:-5] for p in glob.glob(fx + '/*.json'))
assert re.fullmatch(r'#### \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} UTC', lines[0]), lines[0]
assert lines[1] == '' and lines[2].startswith('Solana CLI Version: ') and lines[3] == ''
assert lines[4] == '| Name | CUs | Delta |' and lines[5] == '|------|------|-------|'
for i, (name, delta) in enumerate(zip(names, deltas)):
    cu = json.load(open('%s/%s.json' % (fx, name)))['expect']['compute_units']
    assert lines[6 + i] == '| %s | %d | %s |' % (name, cu, delta), (lines[6 + i], cu)
assert len(names) == len(deltas) and lines[6 + len(names)] == '', lines[6 + len(names)]
EOF
}

out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" 2>&1)
[[ $? == 0 && "$out" == *"3 fixtures benched"* ]] && layout_ok "$md" '- new -' '- new -' '- new -' &&
	pass sbpf_bench_new_table || fail sbpf_bench_new_table "$out"

# Nothing changed: Mollusk writes no new table, and neither do we.
cp "$md" "$TMP/before.md"
out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" 2>&1)
[[ $? == 0 && "$out" == *"no CU changed"* ]] && cmp -s "$md" "$TMP/before.md" &&
	pass sbpf_bench_unchanged_passes || fail sbpf_bench_unchanged_passes "$out"

# A previous table (aligned by a formatter, as committed files often are, with thousands
# separators and older tables below it) where Token's Transfer cost 10 CU less: growth
# fails by default, names the fixture, and leaves the file as it was.
cat >"$TMP/prev.md" <<'EOF'
#### 2025-07-15 08:15:04.827187 UTC

Solana CLI Version: solana-cli 2.2.17 (src:e998175d; feat:3073396398, client:Agave)

| Name               | CUs   | Delta   |
| :----------------- | ----: | ------- |
| hello_world        | 142   | --      |
| spl_memo4_utf8     | 615   | +1,000  |
| spl_token_transfer | 4,635 | - new - |

#### 2025-07-14 08:15:04.827187 UTC

Solana CLI Version: solana-cli 2.2.17 (src:e998175d; feat:3073396398, client:Agave)

| Name | CUs | Delta |
|------|------|-------|
| hello_world | 1 | - new - |

EOF
cp "$TMP/prev.md" "$md"
out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" 2>&1)
[[ $? == 1 && "$out" == *"tally: $md: spl_token_transfer: 4645 CU, was 4635 (+10, +0.22%): past --bench-threshold 0 CU"* ]] &&
	cmp -s "$md" "$TMP/prev.md" && pass sbpf_bench_growth_fails || fail sbpf_bench_growth_fails "$out"

# Within an absolute threshold it passes: the new table's deltas ("--" for none) go first,
# the old tables stay below it byte for byte.
out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" --bench-threshold 10 2>&1)
[[ $? == 0 ]] && layout_ok "$md" -- -- +10 &&
	tail -n +11 "$md" | cmp -s - "$TMP/prev.md" &&
	pass sbpf_bench_threshold_cu || fail sbpf_bench_threshold_cu "$out"

# A percentage of the previous CU: +10 on 4635 is 0.22%.
cp "$TMP/prev.md" "$md"
expect_err sbpf_bench_threshold_percent_fails 1 "past --bench-threshold 0%" \
	"$TALLY" sbpf test "$TMP/fx" --bench "$md" --bench-threshold 0%
check sbpf_bench_threshold_percent_passes "$TALLY" sbpf test "$TMP/fx" --bench "$md" --bench-threshold 1%

# A CU that went down always passes (its delta with a thousands separator); a fixture the
# table lacks is new; a row whose fixture is gone is reported and dropped.
sed 's/| 4,635 |/| 5,879 |/; s/| spl_memo4_utf8  /| spl_memo_gone   /' "$TMP/prev.md" >"$md"
out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" 2>&1)
[[ $? == 0 && "$out" == *"spl_memo_gone is no longer benched (was 615 CU)"* ]] &&
	layout_ok "$md" -- '- new -' -1,234 && ! head -n 10 "$md" | grep -q spl_memo_gone &&
	pass sbpf_bench_new_removed_lower || fail sbpf_bench_new_removed_lower "$out"

# A fixture that fails leaves the table alone.
cp "$TMP/prev.md" "$md"
sed 's/"compute_units": 142/"compute_units": 143/' "$TMP/fx/hello_world.json" >"$TMP/fx/wrong.json"
out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" --bench-threshold 10 2>&1)
[[ $? == 1 && "$out" == *"left as it was (a fixture failed)"* ]] && cmp -s "$md" "$TMP/prev.md" &&
	pass sbpf_bench_failed_fixture_untouched || fail sbpf_bench_failed_fixture_untouched "$out"
rm "$TMP/fx/wrong.json"

# Malformed tables: `tally: FILE.md: what`, before any fixture runs; the file is untouched.
bad() { # bad NAME MESSAGE TEXT
	printf '%b' "$3" >"$md"
	cp "$md" "$TMP/bad.md"
	local out rc
	out=$("$TALLY" sbpf test "$TMP/fx" --bench "$md" 2>&1)
	rc=$?
	[[ $rc == 1 && "$out" == "tally: $md: $2" ]] && cmp -s "$md" "$TMP/bad.md" &&
		pass "sbpf_bench_bad_$1" || fail "sbpf_bench_bad_$1" "rc=$rc $out"
}
hdr='| Name | CUs | Delta |\n|---|---|---|\n'
bad no_table 'no `| Name | CUs | Delta |` table' '# CU\n\n| a | b |\n'
bad no_rule 'line 2: expected |---|---|---| under the table'"'"'s header' '| Name | CUs | Delta |\n| x | 1 | -- |\n'
bad header_only 'the table ends after its header' '| Name | CUs | Delta |'
bad cu "line 3: CUs is not a count" "$hdr| x | 12x | -- |\n"
bad cu_overflow "line 3: CUs is not a count" "$hdr| x | 18446744073709551616 | -- |\n"
bad delta "line 3: Delta is not --, - new -, +N or -N" "$hdr| x | 1 | new |\n"
bad cells "line 4: a row has more cells, not 3 (Name, CUs, Delta)" "$hdr| x | 1 | -- |\n| y | 1 | -- | z |\n"
bad few_cells "line 3: a row has fewer cells, not 3 (Name, CUs, Delta)" "$hdr| x | 1 |\n"
bad no_name "line 3: a row without a name" "$hdr|  | 1 | -- |\n"
bad twice "the newest table lists x twice" "$hdr| x | 1 | -- |\n| x | 2 | -- |\n"
bad nul "a NUL byte: not a markdown file" "$hdr| x | 1\0 | -- |\n"
mkdir "$TMP/dir.md"
expect_err sbpf_bench_not_a_file 1 "tally: $TMP/dir.md: not a regular file" \
	"$TALLY" sbpf test "$TMP/fx" --bench "$TMP/dir.md"
expect_err sbpf_bench_bad_threshold 2 "expected N (CU) or N%" \
	"$TALLY" sbpf test "$TMP/fx" --bench "$md" --bench-threshold 5x
expect_err sbpf_bench_threshold_alone 2 "needs --bench FILE.md" \
	"$TALLY" sbpf test "$TMP/fx" --bench-threshold 5
