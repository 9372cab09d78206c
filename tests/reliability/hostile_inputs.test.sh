# Bounded cost on hostile input (issue 18 §3): each reader given an input built to cost it
# time or memory answers, within a bound, with a clear error or the correct result. The
# inputs are written here by tests/reliability/hostile.py (nothing big is committed); the
# bounds (BOUND seconds, generous for ASan on a loaded machine) check that the cost is
# bounded, not that it is fast. The right answers come from the inputs' construction
# (a pprof that says 7 samples in one function), from the formats' own limits (Solana's
# 255 accounts an instruction) or from the tools that wrote the files (perf, gcc).
. tests/lib.sh

H=tests/reliability/hostile.py
BOUND=${BOUND:-60}

# bounded NAME WANT_RC PATTERN CMD...: CMD exits WANT_RC within BOUND seconds, its output
# (stdout and stderr, in $TMP/out) matches the grep pattern PATTERN, and no sanitizer
# complains.
bounded() {
	local name=$1 want=$2 pat=$3 rc t0=$SECONDS
	shift 3
	timeout "$BOUND" "$@" >"$TMP/out" 2>&1
	rc=$?
	if [ $rc = 124 ]; then
		fail "$name" "still running after $BOUND s"
	elif [ $rc != "$want" ] || ! grep -q -- "$pat" "$TMP/out" ||
		grep -qE 'Sanitizer|runtime error' "$TMP/out"; then
		fail "$name" "exit $rc after $((SECONDS - t0)) s: $(head -c 400 "$TMP/out")"
	else
		pass "$name"
	fi
}

# A million distinct sample types: refused at once (the duplicate scan was quadratic).
python3 $H pprof-types "$TMP/types.pb" 1000000
bounded pprof_million_sample_types 1 "^tally: $TMP/types.pb: more than 256 metrics" \
	"$TALLY" report "$TMP/types.pb"

# One sample 3 million frames deep (one function calling itself): read whole.
python3 $H pprof-deep "$TMP/deep.pb" 3000000
bounded pprof_three_million_frames 0 '^ 100.00% *7  100.00% *7  recurse$' \
	"$TALLY" report "$TMP/deep.pb"

# A 50 MB function name, kept whole (the folded line is the name and its count).
python3 $H pprof-name "$TMP/name.pb" 50000000
timeout "$BOUND" "$TALLY" export -f folded -o "$TMP/name.folded" "$TMP/name.pb" 2>"$TMP/err"
[ "$(wc -c <"$TMP/name.folded" 2>/dev/null)" = 50000003 ] &&
	[ "$(tail -c 3 "$TMP/name.folded")" = " 3" ] && ! grep -qE 'Sanitizer|runtime error' "$TMP/err" &&
	pass pprof_50mb_function_name || fail pprof_50mb_function_name "$(head -c 300 "$TMP/err")"

# A gzip member of 1.2 GB of zeros in 7 MB: stopped at the 1 GiB cap.
python3 $H gzip-bomb "$TMP/bomb.pb.gz" 1200000000
bounded pprof_gzip_bomb 1 "decompressed profile is larger than 1073741824 bytes" \
	"$TALLY" report "$TMP/bomb.pb.gz"

# Folded stacks: a line of 3 million frames, and a frame of 50 MB.
python3 $H folded-deep "$TMP/deep.folded" 3000000
bounded folded_three_million_frames 0 '^total: *5 samples' "$TALLY" report "$TMP/deep.folded"
python3 $H folded-name "$TMP/name2.folded" 50000000
bounded folded_50mb_frame_name 0 '^total: *5 samples' "$TALLY" report "$TMP/name2.folded"

# An ELF header whose 65,535 section headers would start right after it, past the end.
python3 $H elf-shdrs "$TMP/shdrs.elf"
echo 0x401000 >"$TMP/addr"
bounded elf_65535_section_headers_past_the_end 1 \
	"^tally: $TMP/shdrs.elf: .*section header table runs past the end of the file" \
	"$TALLY" symbolize -e "$TMP/shdrs.elf" <"$TMP/addr"

# perf.data from perf itself, with its attributes, data or feature sections 2^62 bytes.
perf record -q -F 200 -g -o "$TMP/perf.data" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' \
	>/dev/null 2>&1
if [ -s "$TMP/perf.data" ]; then
	for field in attrs data features; do
		python3 $H perf-sizes "$TMP/absurd.$field" $field "$TMP/perf.data"
		bounded perf_data_absurd_${field}_size 1 "^tally: $TMP/absurd.$field: " \
			"$TALLY" report "$TMP/absurd.$field"
	done
else
	fail perf_data_absurd_sizes "perf record wrote nothing"
fi

# A fixture nested 100,000 arrays deep: jansson's depth limit answers.
python3 $H nested-json "$TMP/nested.json" 100000
bounded fixture_nested_100000_deep 1 "^tally: $TMP/nested.json: .*maximum parsing depth" \
	"$TALLY" sbpf run "$TMP/nested.json"

# An instruction with 100,000 accounts: MaxAccountsExceeded, as agave says past 255
# (MAX_ACCOUNTS_PER_INSTRUCTION); summing the lamports first was quadratic in them.
HELLO=$SHARED/corpus/sbpf/programs/hello_world.so
if [ -f "$HELLO" ]; then
	python3 $H ix-accounts "$TMP/accounts.json" 100000 "$HELLO"
	bounded fixture_100000_instruction_accounts 1 '^result: MaxAccountsExceeded' \
		"$TALLY" sbpf run "$TMP/accounts.json"
	python3 $H ix-accounts "$TMP/accounts255.json" 255 "$HELLO"
	bounded fixture_255_instruction_accounts_run 0 '^result: success' \
		"$TALLY" sbpf run "$TMP/accounts255.json"
else
	skip fixture_100000_instruction_accounts "no $HELLO"
fi

# Real files cut at 40 points each, read by the commands users run: each cut is read or
# refused with "tally: FILE: ..." (the readers' every-byte cuts are in test_truncations).
cat >"$TMP/prog.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) double work(double x) { for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 0.25; return x; }
int main(void) { volatile double x = 1; for (int i = 0; i < 100000; i++) x = work(x); printf("%g\n", x); return 0; }
C
gcc -O1 -g -o "$TMP/prog" "$TMP/prog.c" || { fail truncations_build; exit 0; }
"$TALLY" record -q -F 500 -o "$TMP/rec.data" -- "$TMP/prog" >/dev/null 2>"$TMP/err" ||
	fail truncations_record "$(cat "$TMP/err")"
"$TALLY" export -f pprof -o "$TMP/rec.pb" "$TMP/rec.data" 2>"$TMP/err" ||
	fail truncations_export "$(cat "$TMP/err")"
addr=$(nm "$TMP/prog" | awk '$3 == "work" { print "0x" $1 }')
cuts() { # cuts NAME FILE CMD...: CMD run on FILE cut at 40 points ("CUT" in CMD)
	local name=$1 file=$2 size bad=
	shift 2
	size=$(stat -c %s "$file")
	for i in $(seq 0 39); do
		local len=$((size * i / 40 + i)) cmd=()
		head -c $len "$file" >"$TMP/cut"
		for a in "$@"; do cmd+=("${a/CUT/$TMP/cut}"); done
		timeout "$BOUND" "${cmd[@]}" >"$TMP/out" 2>&1 </dev/null
		local rc=$?
		if [ $rc -gt 1 ] || grep -qE 'Sanitizer|runtime error' "$TMP/out" ||
			{ [ $rc = 1 ] && ! grep -q "^tally: $TMP/cut: " "$TMP/out"; }; then
			bad="cut at $len of $size: exit $rc: $(head -c 300 "$TMP/out")"
			break
		fi
	done
	[ -z "$bad" ] && pass "$name" || fail "$name" "$bad"
}
cuts truncated_perf_data_report "$TMP/rec.data" "$TALLY" report CUT
cuts truncated_pprof_report "$TMP/rec.pb" "$TALLY" report CUT
cuts truncated_elf_symbolize "$TMP/prog" "$TALLY" symbolize -e CUT "$addr"
