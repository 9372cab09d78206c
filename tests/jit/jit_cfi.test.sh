# JIT_CODE_UNWINDING_INFO used by the unwinder. tests/jit/jit_cfi_prog.c (built here) puts a
# function without a frame pointer (it zeroes %rbp across its call) into anonymous memory,
# writes a jitdump announcing it, with (cfi) or without (nocfi) its CFI, and spins in a C
# callback the JIT code calls. The oracles: the program's known call chain, main -> run_jit
# -> jit_spin -> spin, and perf's stacks of the same kind of run (perf record -k 1
# --call-graph dwarf, perf inject --jit, perf script): with the CFI the chain is whole, from
# _start; without it, frame pointers cannot cross jit_spin and the stack is truncated there,
# for perf as for tally.
. tests/lib.sh

command -v perf >/dev/null || { skip jit_cfi "no perf"; exit 0; }
export HOME="$TMP/home" # perf's build-id cache
mkdir -p "$HOME"
gcc -O2 -g -fno-omit-frame-pointer -o "$TMP/prog" "$ROOT/tests/jit/jit_cfi_prog.c" \
	|| { fail jit_cfi_build "gcc failed"; exit 0; }

chain="_start;__libc_start_main;__libc_start_call_main;main;run_jit;jit_spin;spin"
# The share of the samples in spin (the leaf of the user stack) whose folded stack is
# exactly PREFIX;spin, kernel frames after it aside.
share_with() { awk -v want="$2" '{n = $NF; sub(/ [0-9]+$/, ""); k = split($0, fr, ";")
	s = ""; leaf = 0; for (i = 1; i <= k; i++) {s = s (i > 1 ? ";" : "") fr[i]; if (fr[i] == "spin") {leaf = 1; break}}
	if (!leaf) next; all += n; if (s == want) hit += n}
	END {printf "%.3f\n", all ? hit / all : 0}' "$1"; }
# The same from perf script's stacks (innermost first, a blank line after each).
perf_share_with() { awk -v want="$2" 'BEGIN {n = split(want, w, ";")}
	function done() {if (k && seen) {all++; ok = (k - at + 1 == n); for (i = 0; ok && i < n; i++) ok = (fr[at + i] == w[n - i]); hit += ok} k = 0; seen = 0}
	NF == 0 {done(); next}
	{sym = $2; sub(/@@.*/, "", sym); fr[++k] = sym; if (sym == "spin" && !seen) {seen = 1; at = k}}
	END {done(); printf "%.3f\n", all ? hit / all : 0}' "$1"; }
counter() { awk -v c="$2" 'index($0, c) {print $NF; exit}' "$1"; }

for mode in cfi nocfi; do
	dir="$TMP/$mode"
	mkdir -p "$dir/tally" "$dir/perf"
	cd "$dir/tally" || exit 1
	"$TALLY" record -o rec.data -- "$TMP/prog" $mode 1000 >/dev/null 2>err \
		|| { fail "jit_cfi_${mode}_record" "$(tail -3 err)"; cd "$ROOT"; continue; }
	"$TALLY" report rec.data >report.txt 2>report.err
	"$TALLY" export -f folded -o rec.folded rec.data 2>/dev/null
	cd "$dir/perf" || exit 1
	perf record -q -k 1 --call-graph dwarf -o rec.data -- "$TMP/prog" $mode 1000 >/dev/null 2>err \
		&& perf inject --jit -i rec.data -o inj.data 2>err \
		|| { fail "jit_cfi_${mode}_perf" "$(tail -3 err)"; cd "$ROOT"; continue; }
	perf script --no-inline -i inj.data -F ip,sym 2>/dev/null >perf.script
	"$TALLY" export -f folded -o rec.folded rec.data 2>/dev/null
	cd "$ROOT" || exit 1

	t_whole=$(share_with "$dir/tally/rec.folded" "$chain")
	tp_whole=$(share_with "$dir/perf/rec.folded" "$chain")
	p_whole=$(perf_share_with "$dir/perf/perf.script" "$chain")
	t_cut=$(share_with "$dir/tally/rec.folded" "[truncated];jit_spin;spin")
	p_cut=$(perf_share_with "$dir/perf/perf.script" "jit_spin;spin")
	why="spin's samples with the whole chain: tally $t_whole, tally on perf's file $tp_whole, perf $p_whole; cut at jit_spin: tally $t_cut, perf $p_cut"
	if [ $mode = cfi ]; then
		awk -v t="$t_whole" -v q="$tp_whole" -v p="$p_whole" \
			'BEGIN {exit !(p >= 0.9 && t >= 0.95 && t >= p - 0.02 && q >= p - 0.02)}' \
			&& pass jit_cfi_unwinding_info_gives_whole_chain_as_perf \
			|| fail jit_cfi_unwinding_info_gives_whole_chain_as_perf "$why"
		# Unwound while recording but for the walks that went into the JIT's code,
		# which keep their copies: the dump's CFI is read when the file is.
		kept=$(sed -n 's/.*, \([0-9]*\) in JIT code with a jitdump.*/\1/p' "$dir/tally/err")
		spin=$(awk '/;spin( |;)/ {s += $NF} END {print s + 0}' "$dir/tally/rec.folded")
		[ "${kept:-0}" -ge $((spin * 95 / 100)) ] && [ "$spin" -gt 100 ] &&
			pass "jit_cfi_jit_samples_keep_their_copies ($kept kept, $spin in spin)" ||
			fail jit_cfi_jit_samples_keep_their_copies "kept ${kept:-none} of $spin in spin: $(cat "$dir/tally/err")"
		steps=$(counter "$dir/tally/report.txt" "unwind: JIT CFI steps")
		[ "${steps:-0}" -gt 0 ] && ! grep -q "stopped in JIT code" "$dir/tally/report.txt" \
			&& pass jit_cfi_quality_counts_jit_cfi_steps \
			|| fail jit_cfi_quality_counts_jit_cfi_steps "$(grep unwind: "$dir/tally/report.txt")"
	else
		awk -v t="$t_cut" -v p="$p_cut" -v w="$t_whole" \
			'BEGIN {exit !(p >= 0.9 && t >= 0.95 && w == 0)}' \
			&& pass jit_cfi_without_unwinding_info_truncated_at_jit_frame_as_perf \
			|| fail jit_cfi_without_unwinding_info_truncated_at_jit_frame_as_perf "$why"
		stops=$(counter "$dir/tally/report.txt" "unwind: stopped in JIT code")
		[ "${stops:-0}" -gt 0 ] && ! grep -q "JIT CFI steps" "$dir/tally/report.txt" \
			&& pass jit_cfi_quality_says_walks_stopped_in_jit_code \
			|| fail jit_cfi_quality_says_walks_stopped_in_jit_code "$(grep unwind: "$dir/tally/report.txt")"
	fi
done

# Damaged dumps, in place of the cfi run's: a warning naming the dump, a report all the same,
# and nothing named or unwound from what is damaged. A CFI that lies (CFA = rsp + 24 where
# it is rsp + 32: the return address read from the saved rbp's slot) fails validation and
# ends the stack as truncated, never with a wrong caller.
cd "$TMP/cfi/tally" || exit 1
dump=$(ls jit-*.dump)
cp "$dump" good.dump
size=$(stat -c %s good.dump)
damaged_report() { "$TALLY" report rec.data >"$1.txt" 2>"$1.err" \
	&& "$TALLY" export -f folded -o "$1.folded" rec.data 2>/dev/null; }
head -c $((size - 10)) good.dump >"$dump"
damaged_report cut
grep -q "warning: .*$dump: offset 0x[0-9a-f]*: record of [0-9]* bytes runs past the end of the file" cut.err \
	&& ! grep -q -e jit_spin -e "JIT CFI steps" cut.txt \
	&& pass jit_cfi_cut_dump_warns_and_names_nothing \
	|| fail jit_cfi_cut_dump_warns_and_names_nothing "$(head -3 cut.err) $(grep -c jit_spin cut.txt)"
python3 - good.dump "$dump" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
at = d.index(bytes([0x44, 0x0e, 32]))  # after sub $16: def_cfa_offset 32
d[at + 2] = 24
open(sys.argv[2], 'wb').write(d)
PY
damaged_report lie
lie_cut=$(share_with lie.folded "[truncated];jit_spin;spin")
grep -q "truncated, step failed validation" lie.txt && ! grep -q "JIT CFI steps" lie.txt \
	&& awk -v c="$lie_cut" 'BEGIN {exit !(c >= 0.95)}' \
	&& pass jit_cfi_lying_cfi_fails_validation_and_truncates \
	|| fail jit_cfi_lying_cfi_fails_validation_and_truncates "cut at jit_spin: $lie_cut; $(grep unwind: lie.txt | tr -s ' ')"
cp good.dump "$dump"
cd "$ROOT" || exit 1
