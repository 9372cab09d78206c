# `tally sbpf run --sample`: the sBPF VM profiled through the agent's sampling path. The
# oracle for the shares is the exact CU profile of the same run (the VM is deterministic:
# a second run of the same program and input executes the same instructions), whose own
# invariant (its total equals the CU consumed) the cuprof tests check. Each function's
# share of the samples (by leaf) must lie within 4.5 binomial standard deviations of its
# share of the CU, plus 2 points for what CU do not weigh (time per instruction differs a
# little between loops compiled apart).
. tests/lib.sh

if ! command -v clang >/dev/null; then
	skip sbpf_sample "clang not installed"
	exit 0
fi
if ! clang -target bpf -mcpu=v3 -O2 -g -c "$ROOT/tests/agent/sbpf_shares.c" -o "$TMP/shares.o" 2>"$TMP/cc.err"; then
	fail sbpf_sample_build "$(head -3 "$TMP/cc.err")"
	exit 0
fi
printf '\144' >"$TMP/in" # 100 rounds: 480 M CU
run=("$TALLY" sbpf run "$TMP/shares.o" --input "$TMP/in" --budget 1000000000)

"${run[@]}" --json --folded "$TMP/exact.folded" >"$TMP/exact.json"
if ! "${run[@]}" --json --sample=4999 --folded "$TMP/s.folded" -o "$TMP/s.pb.gz" \
	--flamegraph "$TMP/s.svg" >"$TMP/s.json" 2>"$TMP/s.err"; then
	fail sbpf_sample_runs "$(cat "$TMP/s.err")"
	exit 0
fi
# The run itself is the same: result and CU as the exact run's.
if cmp -s "$TMP/exact.json" "$TMP/s.json"; then
	pass sbpf_sample_run_unchanged
else
	fail sbpf_sample_run_unchanged "$(cat "$TMP/exact.json") vs $(cat "$TMP/s.json")"
fi

verdict=$(awk '
	FNR == 1 { file++ }
	{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); w[file, f[k]] += n; tot[file] += n; fn[f[k]] = 1 }
	END {
		N = tot[2]
		if (N < 300) { print "only " N " samples"; exit }
		bad = ""
		for (g in fn) {
			pe = w[1, g] / tot[1]; ps = w[2, g] / N
			if (pe < 0.001 && ps < 0.01) continue
			bound = 4.5 * sqrt(pe * (1 - pe) / N) + 0.02
			d = ps - pe; if (d < 0) d = -d
			if (d > bound) bad = bad sprintf("%s: sampled %.4f exact %.4f bound %.4f; ", g, ps, pe, bound)
		}
		print bad == "" ? "ok " N : bad
	}' "$TMP/exact.folded" "$TMP/s.folded")
case $verdict in
ok*) pass sbpf_sample_shares_agree_with_exact ;;
*) fail sbpf_sample_shares_agree_with_exact "$verdict" ;;
esac

# The stacks are the exact profile's call paths (frames named alike).
bad=$(sed 's/ [0-9]*$//' "$TMP/s.folded" | sort -u | while read -r stack; do
	grep -q "^$stack [0-9]*$" "$TMP/exact.folded" || echo "$stack"
done)
[ -z "$bad" ] && pass sbpf_sample_stacks_are_exact_paths || fail sbpf_sample_stacks_are_exact_paths "$bad"

# The other outputs: pprof that go tool pprof reads with the same total, an SVG.
if command -v go >/dev/null; then
	total=$(awk '{ s += $NF } END { print s }' "$TMP/s.folded")
	go tool pprof -top "$TMP/s.pb.gz" 2>/dev/null | grep -q "of $total total" &&
		pass sbpf_sample_pprof || fail sbpf_sample_pprof "$(go tool pprof -top "$TMP/s.pb.gz" 2>&1 | head -4)"
fi
check sbpf_sample_flamegraph grep -q '<svg' "$TMP/s.svg"

expect_err sbpf_sample_bad_rate 2 'bad --sample rate' "${run[@]}" --sample=0
expect_err sbpf_sample_no_profile 2 'choose one' "${run[@]}" --sample --no-profile
