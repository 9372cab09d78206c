# tally report / export / diff against outside oracles: go tool pprof reads our pprof with
# the same totals and per-function figures, tally reads pprof that Go wrote (a CPU profile
# of a Go program built here, and files rewritten by go tool pprof -proto), speedscope's own
# JSON schema accepts our speedscope files, folded stacks round-trip, output is
# byte-identical for identical input, and bad input gets a clear error.
. tests/lib.sh

# Offline, with the build cache in the scratch directory.
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off GOCACHE=$TMP/go-cache
have_go=true
command -v go >/dev/null || have_go=false

# A profile with inline and kernel frames, recursion, and names that need escaping in JSON
# and XML or are not UTF-8.
printf '%s\n' \
	'main;parse;read_line;sys_read_[k] 150' \
	'main;parse;read_line 50' \
	'main;parse;tokenize 100' \
	'main;hash;mix_[i] 300' \
	'main;hash;mix_[i];rotate_[i] 100' \
	'main;hash 200' \
	'main;walk;walk;walk;leaf 30' \
	'main;report<&'"'"'a "x\y">;printf 40' \
	'idle 45' >"$TMP/a.folded"
printf 'main;bad\xff\xfename 2\n' >>"$TMP/a.folded"
total=$(awk '{s += $NF} END {print s}' "$TMP/a.folded")

# ---- pprof, read by go tool pprof ----
"$TALLY" export -f pprof "$TMP/a.folded" -o "$TMP/a.pb.gz" 2>"$TMP/err" &&
	pass export_pprof_writes || fail export_pprof_writes "$(cat "$TMP/err")"

# Sums of the values in go tool pprof -raw's sample section, one per sample type.
raw_sum() {
	go tool pprof -raw "$1" 2>/dev/null | awk '
		/^Samples:/ {on = 1; next}
		/^Locations/ {on = 0}
		on && /:/ {n = split($0, f, ":"); split(f[1], v, " "); for (i = 1; i in v; i++) s[i] += v[i]; k = length(v)}
		END {for (i = 1; i <= k; i++) printf "%s%d", (i > 1 ? " " : ""), s[i]; print ""}'
}

# "name flat" per function from go tool pprof -top, inline markers removed.
go_flat() {
	go tool pprof -symbolize=none -top -nodecount=100000 -nodefraction=0 -edgefraction=0 ${2:+-sample_index=$2} "$1" 2>/dev/null |
		awk '/^ *flat/ {on = 1; next} on && NF >= 6 {
			name = $6; for (i = 7; i <= NF; i++) name = name " " $i
			sub(/ \((partial-)?inline\)$/, "", name); if ($1 + 0 != 0) print name "\t" $1 + 0}' | LC_ALL=C sort
}

# "name self" per leaf function from our folded export, inline/kernel suffixes off.
our_flat() {
	"$TALLY" export -f folded ${2:+--metric $2} "$1" | awk '{
		c = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); s[f[n]] += c}
		END {for (k in s) if (s[k]) print k "\t" s[k]}' | LC_ALL=C sort
}

# go tool pprof -traces, one line per sample ("value|leaf|...|root"), sorted.
go_traces() {
	go tool pprof -symbolize=none -traces "$1" 2>/dev/null | awk '
		/^-----------/ {if (b != "") print b; b = ""; next}
		/^ / || /^[0-9]/ {gsub(/^ +/, ""); b = b "|" $0}
		END {if (b != "") print b}' | LC_ALL=C sort
}

if $have_go; then
	got=$(raw_sum "$TMP/a.pb.gz")
	[ "$got" = "$total" ] && pass pprof_raw_total_equals_ours ||
		fail pprof_raw_total_equals_ours "go tool pprof -raw sums $got, we have $total"
	top=$(go tool pprof -top "$TMP/a.pb.gz" 2>/dev/null | sed -n 's/.* of \([0-9]*\) total$/\1/p')
	[ "$top" = "$total" ] && pass pprof_top_total_equals_ours ||
		fail pprof_top_total_equals_ours "go tool pprof -top says $top, we have $total"
	diff <(go_flat "$TMP/a.pb.gz") <(our_flat "$TMP/a.folded") >"$TMP/d" &&
		pass pprof_top_flat_per_function_equals_ours ||
		fail pprof_top_flat_per_function_equals_ours "$(head -5 "$TMP/d" | tr '\n' ' ')"
	go tool pprof -raw "$TMP/a.pb.gz" 2>/dev/null >"$TMP/raw"
	grep -A2 ': 0x0 rotate :0 s=0$' "$TMP/raw" | tr -s ' ' | tr '\n' '|' | grep -q ' mix :0 s=0| hash :0 s=0|$' &&
		grep -q ': 0x0 M=1 sys_read :0 s=0$' "$TMP/raw" && grep -q '^1: 0x0/0x1/0x0 \[kernel\]' "$TMP/raw" &&
		pass pprof_inline_frames_are_line_entries_innermost_first ||
		fail pprof_inline_frames_are_line_entries_innermost_first
else
	skip pprof_go_oracle "go is not installed"
fi

# ---- pprof written by Go ----
if $have_go; then
	if (cd "$TMP" && cp "$ROOT/tests/report/gocpu.go" . && go mod init gocpu >/dev/null 2>&1 &&
		go build -o gocpu . && ./gocpu cpu.pb.gz) 2>"$TMP/err"; then
		for idx in samples cpu; do
			theirs=$(raw_sum "$TMP/cpu.pb.gz")
			want=$([ $idx = samples ] && echo "${theirs% *}" || echo "${theirs#* }")
			ours=$("$TALLY" report --metric $idx "$TMP/cpu.pb.gz" | awk -v t=$idx '
				/^total:/ || (/^ / && on) {on = 1; if ($0 ~ " " t "/") print ($1 == "total:" ? $2 : $1)}')
			[ -n "$want" ] && [ "$ours" = "$want" ] && pass "go_cpu_profile_total_$idx" ||
				fail "go_cpu_profile_total_$idx" "go says $want, we say $ours"
		done
		diff <(go_flat "$TMP/cpu.pb.gz" samples) <(our_flat "$TMP/cpu.pb.gz" samples) >"$TMP/d" &&
			pass go_cpu_profile_flat_per_function ||
			fail go_cpu_profile_flat_per_function "$(head -5 "$TMP/d" | tr '\n' ' ')"
		# Every sample, with its whole stack and inline marks, as go tool pprof resolves
		# it: the same in Go's file and in ours written from it.
		"$TALLY" export -f pprof "$TMP/cpu.pb.gz" -o "$TMP/cpu-re.pb.gz"
		diff <(go_traces "$TMP/cpu.pb.gz") <(go_traces "$TMP/cpu-re.pb.gz") >"$TMP/d" &&
			[ -n "$(go_traces "$TMP/cpu.pb.gz")" ] && pass go_cpu_profile_traces_survive_our_export ||
			fail go_cpu_profile_traces_survive_our_export "$(head -5 "$TMP/d" | tr '\n' ' ')"
		go tool pprof -raw "$TMP/cpu-re.pb.gz" 2>/dev/null | grep -q '^1: 0x400000/0x[0-9a-f]*/0x0 .*/gocpu ' &&
			pass go_cpu_profile_mapping_survives || fail go_cpu_profile_mapping_survives
		"$TALLY" report "$TMP/cpu.pb.gz" | grep -q 'main.mix \[inline\]' &&
			pass go_cpu_profile_inlined_function_is_marked ||
			fail go_cpu_profile_inlined_function_is_marked "$("$TALLY" report "$TMP/cpu.pb.gz" | head -12)"
	else
		fail go_cpu_profile_built "$(tail -3 "$TMP/err")"
	fi
	go tool pprof -symbolize=none -proto "$TMP/a.pb.gz" >"$TMP/go.pb.gz" 2>/dev/null
	"$TALLY" export -f folded --kinds "$TMP/a.pb.gz" >"$TMP/ours.folded" &&
		"$TALLY" export -f folded --kinds "$TMP/go.pb.gz" >"$TMP/go.folded" &&
		[ -s "$TMP/ours.folded" ] && cmp -s "$TMP/ours.folded" "$TMP/go.folded" &&
		pass pprof_rewritten_by_go_reads_the_same ||
		fail pprof_rewritten_by_go_reads_the_same
fi

# ---- folded round trip, determinism ----
"$TALLY" export -f folded --kinds "$TMP/a.folded" >"$TMP/b.folded"
cmp -s <(LC_ALL=C sort "$TMP/a.folded") <(LC_ALL=C sort "$TMP/b.folded") &&
	pass folded_round_trip_with_kinds || fail folded_round_trip_with_kinds "$(diff <(LC_ALL=C sort "$TMP/a.folded") <(LC_ALL=C sort "$TMP/b.folded") | head -4)"
"$TALLY" export -f pprof "$TMP/a.pb.gz" -o "$TMP/a2.pb.gz"
"$TALLY" export -f folded --kinds "$TMP/a.pb.gz" >"$TMP/c.folded" && [ -s "$TMP/c.folded" ] &&
	cmp -s "$TMP/b.folded" "$TMP/c.folded" && pass folded_through_pprof_round_trip ||
	fail folded_through_pprof_round_trip
# The same stacks in another order, from a file of the same name (the source is recorded).
mkdir -p "$TMP/rev"
tac "$TMP/a.folded" >"$TMP/rev/a.folded"
ok=true
for fmt in pprof speedscope folded; do
	(cd "$TMP" && "$TALLY" export -f $fmt a.folded -o x1 && "$TALLY" export -f $fmt a.folded -o x2)
	(cd "$TMP/rev" && "$TALLY" export -f $fmt a.folded >"$TMP/x3")
	cmp -s "$TMP/x1" "$TMP/x2" && cmp -s "$TMP/x1" "$TMP/x3" || { ok=false; echo "differs: $fmt"; }
done
"$TALLY" report "$TMP/a.folded" >"$TMP/r1" && "$TALLY" report "$TMP/a.folded" >"$TMP/r2" &&
	[ -s "$TMP/r1" ] && cmp -s "$TMP/r1" "$TMP/r2" || ok=false
$ok && pass outputs_are_byte_identical_for_identical_input ||
	fail outputs_are_byte_identical_for_identical_input
cmp -s "$TMP/a.pb.gz" "$TMP/a2.pb.gz" && pass pprof_reexport_is_identical ||
	fail pprof_reexport_is_identical

# ---- speedscope, validated against the schema the speedscope package ships ----
NODE="$NPM_DIR"
if [ -f "$NODE/node_modules/speedscope/dist/release/file-format-schema.json" ]; then
	cat >"$TMP/validate.js" <<'JS'
const fs = require('fs');
const Ajv = require('ajv');
const schema = require(process.argv[2] + '/node_modules/speedscope/dist/release/file-format-schema.json');
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
const data = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
if (!validate(data)) { console.log(JSON.stringify(validate.errors).slice(0, 400)); process.exit(1); }
// Beyond the schema: weights add up, stacks index real frames, names survive escaping.
for (const p of data.profiles) {
	const sum = p.weights.reduce((a, b) => a + b, 0);
	if (sum !== p.endValue) { console.log('weights sum ' + sum + ' != ' + p.endValue); process.exit(1); }
	for (const s of p.samples) for (const i of s) if (!data.shared.frames[i]) process.exit(1);
}
const names = data.shared.frames.map(f => f.name);
for (const n of process.argv.slice(4)) if (!names.includes(n)) { console.log('missing ' + n); process.exit(1); }
JS
	"$TALLY" export -f speedscope "$TMP/a.folded" -o "$TMP/a.speedscope.json"
	out=$(NODE_PATH="$NODE/node_modules" node "$TMP/validate.js" "$NODE" "$TMP/a.speedscope.json" \
		'report<&'"'"'a "x\y">' $'bad\ufffd\ufffdname' 'mix [inline]' 'sys_read [kernel]' 2>&1) &&
		pass speedscope_validates_against_schema || fail speedscope_validates_against_schema "$out"
	if $have_go && [ -f "$TMP/cpu.pb.gz" ]; then
		"$TALLY" export -f speedscope "$TMP/cpu.pb.gz" -o "$TMP/cpu.json"
		out=$(NODE_PATH="$NODE/node_modules" node "$TMP/validate.js" "$NODE" "$TMP/cpu.json" 2>&1) &&
			pass speedscope_of_go_profile_validates || fail speedscope_of_go_profile_validates "$out"
	fi
else
	skip speedscope_validates_against_schema "no speedscope in $NPM_DIR (run scripts/install-deps.sh test)"
fi

# ---- report, diff ----
out=$("$TALLY" report "$TMP/a.folded")
grep -q "^total: *$total samples/count" <<<"$out" &&
	grep -q '^ *29.50% *300 *39.33% *400  mix \[inline\]$' <<<"$out" &&
	pass report_tables_have_totals_and_inline_marks || fail report_tables_have_totals_and_inline_marks "$out"
out=$("$TALLY" report --tree --threshold 5 "$TMP/a.folded")
grep -q '^ *19.67% *4.92%      read_line$' <<<"$out" && ! grep -q 'walk' <<<"$out" &&
	pass report_tree_prunes_at_threshold || fail report_tree_prunes_at_threshold "$out"
out=$("$TALLY" report --tree --fold-recursion --threshold 0 "$TMP/a.folded")
[ "$(grep -c ' walk$' <<<"$out")" = 1 ] && grep -q '^ *2.95% *2.95%      leaf$' <<<"$out" &&
	grep -q '^ *0.20% *0.20%    bad' <<<"$out" &&
	pass report_fold_recursion || fail report_fold_recursion "$out"
out=$("$TALLY" report --focus '^hash$' "$TMP/a.folded" | sed -n 2p)
[[ "$out" =~ ^total:\ +600\  ]] && pass report_focus_keeps_matching_stacks || fail report_focus_keeps_matching_stacks "$out"

out=$("$TALLY" export -f folded --kinds --hide '^(hash|parse)$' "$TMP/a.folded")
grep -qx 'main;mix_\[i\] 300' <<<"$out" && grep -qx 'main 200' <<<"$out" &&
	grep -qx 'main;read_line;sys_read_\[k\] 150' <<<"$out" && ! grep -q 'hash\|parse' <<<"$out" &&
	[ "$(awk '{s += $NF} END {print s}' <<<"$out")" = "$total" ] &&
	pass export_hide_gives_cost_to_callers || fail export_hide_gives_cost_to_callers "$out"

printf 'main;hash;mix_[i] 250\nmain;hash 200\nmain;parse;tokenize 130\nmain;newthing 7\n' >"$TMP/after.folded"
out=$("$TALLY" diff "$TMP/a.folded" "$TMP/after.folded")
changes=$(awk '/self before/ {on = 1; next} on {v = $3 + 0; print (v < 0 ? -v : v)}' <<<"$out")
sort -rn -c <<<"$changes" 2>/dev/null && [ "$(head -1 <<<"$changes")" = 150 ] &&
	grep -Eq '^ +300 +250 +-50 +-16.7% +400 +250 +-150 +-37.5%  mix \[inline\]$' <<<"$out" &&
	grep -Eq ' new .* newthing$' <<<"$out" && grep -Eq ' gone  sys_read \[kernel\]$' <<<"$out" &&
	pass diff_sorts_by_absolute_change || fail diff_sorts_by_absolute_change "$out"

# ---- bad input ----
expect_error() { # NAME PATTERN FILE...
	local name=$1 pat=$2 err rc
	shift 2
	err=$("$TALLY" "$@" 2>&1 >/dev/null); rc=$?
	[ $rc = 1 ] && [[ "$err" == $pat ]] && pass "$name" || fail "$name" "exit $rc: $err"
}
head -c 100 "$TMP/a.pb.gz" >"$TMP/trunc.pb.gz"
expect_error truncated_pprof_is_an_error "tally: $TMP/trunc.pb.gz: gzip data is truncated" report "$TMP/trunc.pb.gz"
gzip -dc "$TMP/a.pb.gz" | head -c 300 >"$TMP/trunc.pb"
expect_error truncated_plain_pprof_is_an_error "tally: $TMP/trunc.pb: at 0x*: *runs past the end*" report "$TMP/trunc.pb"
{ head -c 40 "$TMP/a.pb.gz"; printf 'XXXXXXXX'; tail -c +49 "$TMP/a.pb.gz"; } >"$TMP/corrupt.pb.gz"
expect_error corrupt_pprof_is_an_error "tally: $TMP/corrupt.pb.gz: *" report "$TMP/corrupt.pb.gz"
printf 'a;b 1\na;;c 2\n' >"$TMP/bad1.folded"
expect_error folded_empty_frame_is_an_error "tally: $TMP/bad1.folded: line 2: empty frame name at column 3" report "$TMP/bad1.folded"
printf 'a;b 1\na;b\n' >"$TMP/bad2.folded"
expect_error folded_missing_count_is_an_error "tally: $TMP/bad2.folded: line 2: expected 'frame;frame;... COUNT'" report "$TMP/bad2.folded"
: >"$TMP/empty"
expect_error empty_file_is_an_error "tally: $TMP/empty: empty file" report "$TMP/empty"
printf '<svg>hello</svg>\n' >"$TMP/notprof"
expect_error unknown_format_is_an_error "tally: $TMP/notprof: not a profile*" export -f pprof "$TMP/notprof"
printf 'PERFILE2\0\0\0\0' >"$TMP/perf.data"
expect_error perf_data_is_recognised "tally: $TMP/perf.data: too small for a perf.data file" report "$TMP/perf.data"
expect_error missing_file_is_an_error "tally: $TMP/nope: No such file or directory" report "$TMP/nope"
expect_error focus_matching_nothing_is_an_error "tally: no samples left after filtering" report --focus zzz "$TMP/a.folded"
err=$("$TALLY" export -f xml "$TMP/a.folded" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && [ "$err" = "tally: unknown format: xml (folded, pprof, speedscope, firefox)
Run 'tally help export' for usage." ] && pass unknown_export_format_is_usage_error ||
	fail unknown_export_format_is_usage_error "exit $rc: $err"
expect_error unwritable_output_is_an_error "tally: $TMP/no/such/dir/x: No such file or directory" \
	export -f folded "$TMP/a.folded" -o "$TMP/no/such/dir/x"
err=$("$TALLY" export -f pprof "$TMP/a.folded" 2>&1 >&-); rc=$?
[ $rc = 1 ] && [ "$err" = "tally: stdout: write error: Bad file descriptor" ] &&
	pass write_error_is_reported || fail write_error_is_reported "exit $rc: $err"
