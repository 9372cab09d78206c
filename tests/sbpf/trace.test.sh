# The VM's tracepoints (provider tally_sbpf) and the runtime's log framing, on
# tests/sbpf/trace/ticker.c (N sol_log_ calls, M invocations of tests/solana/cpi/callee.c)
# built at test time with upstream clang. Oracles: the syscalls and invocations the
# programs' sources make, readelf -n for the probe notes, bpftrace for the counts and an
# argument, agave's stable_log formats for the framed lines.
. tests/lib.sh

OUT="$CORPUS/sbpf"
mkdir -p "$OUT"
if ! command -v clang >/dev/null || ! command -v python3 >/dev/null; then
	skip sbpf_trace "clang or python3 not installed"
	exit 0
fi
for p in sbpf/trace/ticker solana/cpi/callee; do
	o="$OUT/trace_${p##*/}.o"
	if [ ! -f "$o" ] || [ "$ROOT/tests/$p.c" -nt "$o" ] ||
		[ "$ROOT/tests/solana/cpi/solana_rt.h" -nt "$o" ]; then
		clang -target bpf -mcpu=v3 -O2 -g -c "$ROOT/tests/$p.c" -o "$o.tmp" &&
			mv "$o.tmp" "$o" || { fail "sbpf_trace_build_${p##*/}" "clang failed"; exit 0; }
	fi
done

# fixture NAME N M BAD: ticker logs N times and invokes the callee M times.
fixture() {
	PYTHONPATH="$ROOT/tests/solana" python3 - "$OUT" "$@" >"$TMP/$1.json" <<'PY'
import json, sys
from keys import b58, name_key
out, name, n, m, bad = sys.argv[1:]
key = lambda t: b58(name_key(t))
SYS = '11111111111111111111111111111111'
print(json.dumps({
    "programs": [{"id": key('ticker'), "elf": out + "/trace_ticker.o", "name": "ticker"},
                 {"id": key('callee'), "elf": out + "/trace_callee.o", "name": "callee"}],
    "accounts": [{"pubkey": key('vault'), "owner": key('callee'), "lamports": 1000000000, "data": "61"},
                 {"pubkey": key('dest'), "owner": SYS, "lamports": 890880, "data": ""}],
    "instruction": {"program_id": key('ticker'),
                    "accounts": [{"pubkey": key('callee')},
                                 {"pubkey": key('vault'), "is_writable": True},
                                 {"pubkey": key('dest'), "is_writable": True}],
                    "data": bytes([int(n), int(m), int(bad)]).hex()}}, indent=1))
PY
}
fixture t5x3 5 3 0
fixture t2x1 2 1 0
fixture t1x1bad 1 1 1
ids=$(PYTHONPATH="$ROOT/tests/solana" python3 -c '
from keys import b58, name_key
print(b58(name_key("ticker")), b58(name_key("callee")))')
read -r TICKER CALLEE <<<"$ids"
cu() { "$TALLY" sbpf run "$1" --json 2>/dev/null | sed -n 's/.*"compute_units": \([0-9]*\).*/\1/p'; }

# ---- the probes: five, with their argument specs, in tally (libtally has no VM) ----
declare -A nargs=([cpi_enter]=3 [cpi_exit]=4 [meter_flush]=3 [syscall_enter]=4 [syscall_exit]=6)
for bin in "$BUILD/tally"; do
	list=$("$TALLY" probes list "$bin" 2>&1)
	notes=$(readelf -n "$bin" | awk '/Provider: tally_sbpf/ { p = 1; next }
		p && /Name:/ { name = $2 } p && /Arguments:/ { sub(/^ *Arguments: /, ""); print name ": " $0; p = 0 }' | sort)
	ok=1
	for p in "${!nargs[@]}"; do
		# every site of the probe in tally's list has readelf's argument string, with
		# one decoded line per argument
		rows=$(grep -c "^  tally_sbpf:$p " <<<"$list")
		[ "$rows" -ge 1 ] && [ "$rows" = "$(grep -c "^$p: " <<<"$notes")" ] || ok=0
		while read -r args; do
			[ "$(wc -w <<<"$args")" = "${nargs[$p]}" ] && grep -qF "tally_sbpf:$p" <<<"$list" &&
				grep -F "tally_sbpf:$p " <<<"$list" | grep -qF -- "$args" || ok=0
		done < <(sed -n "s/^$p: //p" <<<"$notes")
	done
	[ $ok = 1 ] && [ "$(grep -c "^      arg" <<<"$list")" -ge 20 ] && pass "sbpf_trace_probes_listed_${bin##*/}" ||
		fail "sbpf_trace_probes_listed_${bin##*/}" "$(head -20 <<<"$list") / $notes"
done

# ---- counts: what the programs' sources make ----
# ticker N M: N + M syscalls of its own, 2 per callee run; a meter flush per syscall and at
# the end of each of the 1 + M VM runs.
want_counts() {
	local n=$1 m=$2
	printf 'tally_sbpf:cpi_enter %d\ntally_sbpf:cpi_exit %d\ntally_sbpf:meter_flush %d\n' $m $m $((n + 3 * m + 1 + m))
	printf 'tally_sbpf:syscall_enter %d\ntally_sbpf:syscall_exit %d\n' $((n + 3 * m)) $((n + 3 * m))
}
for f in "t5x3 5 3" "t2x1 2 1"; do
	set -- $f
	got=$("$TALLY" probes count 'tally_sbpf:*' -- "$TALLY" sbpf run "$TMP/$1.json" 2>&1 | grep '^tally_sbpf:' | awk '{print $1, $2}')
	[ "$got" = "$(want_counts $2 $3)" ] && pass "sbpf_trace_count_$1" || fail "sbpf_trace_count_$1" "$got"
done

# ---- bpftrace on the same probes: the same counts, and arguments that add up ----
total=$(cu "$TMP/t5x3.json")
if ! command -v bpftrace >/dev/null; then
	skip sbpf_trace_bpftrace "bpftrace not installed"
else
	T=$(readlink -f "$TALLY")
	bt=$(timeout 300 bpftrace -e "
		usdt:$T:tally_sbpf:syscall_enter { @enter[str(arg0)] = count(); }
		usdt:$T:tally_sbpf:syscall_exit { @exit = count(); @cost[str(arg0)] = sum(arg3 - arg4); }
		usdt:$T:tally_sbpf:cpi_enter { printf(\"cpi_enter depth %d budget %d\\n\", arg1, arg2); }
		usdt:$T:tally_sbpf:cpi_exit { @callee_cu = sum(arg2); @cpi_exit = count(); }
		usdt:$T:tally_sbpf:meter_flush { @flush = count(); @insns = sum(arg1); }" \
		-c "$T sbpf run $TMP/t5x3.json" 2>&1)
	val() { sed -nE "s/^@$1: ([0-9]+)$/\\1/p" <<<"$bt"; }
	# counts: N + M logs, M invokes, M return data; 14 exits, 18 flushes, 3 CPIs
	[ "$(val 'enter\[sol_log_\]')" = 8 ] && [ "$(val 'enter\[sol_invoke_signed_c\]')" = 3 ] &&
		[ "$(val 'enter\[sol_set_return_data\]')" = 3 ] && [ "$(val exit)" = 14 ] &&
		[ "$(val flush)" = 18 ] && [ "$(val cpi_exit)" = 3 ] &&
		[ "$(grep -c '^cpi_enter depth 2 budget ' <<<"$bt")" = 3 ] &&
		pass sbpf_trace_bpftrace_counts || fail sbpf_trace_bpftrace_counts "$bt"
	# CU: instructions flushed + the leaf syscalls' costs + the invokes' own cost (their
	# cost less what the callees consumed) is the run's total.
	sum=$(( $(val insns) + $(val 'cost\[sol_log_\]') + $(val 'cost\[sol_set_return_data\]') +
		$(val 'cost\[sol_invoke_signed_c\]') - $(val callee_cu) ))
	[ -n "$total" ] && [ "$sum" = "$total" ] && [ "$(val 'cost\[sol_log_\]')" = 800 ] &&
		pass sbpf_trace_bpftrace_cu_adds_up || fail sbpf_trace_bpftrace_cu_adds_up "$sum vs $total: $bt"
fi

# ---- log framing, as agave's runtime writes it ----
# The callee's CU inside the CPI equals its CU run alone on the same accounts and data.
python3 - "$TMP/t5x3.json" "$TMP/callee.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["instruction"] = {"program_id": d["programs"][1]["id"], "data": (100).to_bytes(8, "little").hex(),
                    "accounts": [{"pubkey": d["accounts"][0]["pubkey"], "is_writable": True},
                                 {"pubkey": d["accounts"][1]["pubkey"], "is_writable": True}]}
json.dump(d, open(sys.argv[2], "w"))
PY
callee=$(cu "$TMP/callee.json")
budgets=($(sed -n 's/^cpi_enter depth 2 budget //p' <<<"${bt:-}"))
{
	echo "Program $TICKER invoke [1]"
	for _ in 1 2 3 4 5; do echo "Program log: tick"; done
	for b in "${budgets[@]}"; do
		echo "Program $CALLEE invoke [2]"
		echo "Program log: callee"
		echo "Program $CALLEE consumed $callee of $b compute units"
		echo "Program return: $CALLEE b2s="
		echo "Program $CALLEE success"
	done
	echo "Program $TICKER consumed $total of 200000 compute units"
	echo "Program return: $TICKER b2s="
	echo "Program $TICKER success"
} >"$TMP/want.log"
"$TALLY" sbpf run "$TMP/t5x3.json" | sed -n 's/^log: //p' >"$TMP/got.log"
if [ -z "${bt:-}" ]; then
	skip sbpf_log_framing_cpi "needs bpftrace for the callees' budgets"
else
	[ ${#budgets[@]} = 3 ] && diff "$TMP/want.log" "$TMP/got.log" >"$TMP/diff" && pass sbpf_log_framing_cpi ||
		fail sbpf_log_framing_cpi "$(head -c 600 "$TMP/diff")"
fi

# A failing callee (7 bytes of data: Custom(1)): its consumed and failed lines, no return
# line (the runtime cleared the return data when it started), and the caller failing with
# the same instruction error.
python3 - "$TMP/callee.json" "$TMP/callee_bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["instruction"]["data"] = d["instruction"]["data"][:14]
json.dump(d, open(sys.argv[2], "w"))
PY
callee_bad=$(cu "$TMP/callee_bad.json")
bad_total=$(cu "$TMP/t1x1bad.json")
if command -v bpftrace >/dev/null; then
	bad_budget=$(timeout 300 bpftrace -e "usdt:$T:tally_sbpf:cpi_enter { printf(\"budget %d\\n\", arg2); }" \
		-c "$T sbpf run $TMP/t1x1bad.json" 2>/dev/null | sed -n 's/^budget //p')
fi
cat >"$TMP/want_bad.log" <<EOT
Program $TICKER invoke [1]
Program log: tick
Program $CALLEE invoke [2]
Program $CALLEE consumed $callee_bad of ${bad_budget:-?} compute units
Program $CALLEE failed: custom program error: 0x1
Program $TICKER consumed $bad_total of 200000 compute units
Program $TICKER failed: custom program error: 0x1
EOT
out=$("$TALLY" sbpf run "$TMP/t1x1bad.json")
sed -n 's/^log: //p' <<<"$out" >"$TMP/got_bad.log"
if [ -z "${bad_budget:-}" ]; then
	skip sbpf_log_framing_cpi_failure "needs bpftrace for the callee's budget"
else
	diff "$TMP/want_bad.log" "$TMP/got_bad.log" >"$TMP/diff" && grep -q '^result: Custom(1)' <<<"$out" &&
		pass sbpf_log_framing_cpi_failure || fail sbpf_log_framing_cpi_failure "$(head -c 600 "$TMP/diff")"
fi

# expect.logs: framed lines are compared with the framed log, bare ones with what the
# programs logged; a wrong framed line is reported with its index.
expect_logs() { # FILE JSON_LIST
	python3 - "$TMP/t5x3.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["expect"] = {"result": "success", "logs": json.loads(sys.argv[3])}
json.dump(d, open(sys.argv[2], "w"))
PY
}
expect_logs "$TMP/framed.json" "$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read().splitlines()))' "$TMP/want.log")"
expect_logs "$TMP/bare.json" '["Program log: tick", "Program log: tick", "Program log: tick", "Program log: tick",
	"Program log: tick", "Program log: callee", "Program log: callee", "Program log: callee"]'
sed 's/ invoke \[2\]/ invoke [3]/' "$TMP/want.log" >"$TMP/wrong.log"
expect_logs "$TMP/wrong.json" "$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read().splitlines()))' "$TMP/wrong.log")"
"$TALLY" sbpf run "$TMP/framed.json" >/dev/null 2>&1 && pass sol_expect_logs_framed || fail sol_expect_logs_framed
"$TALLY" sbpf run "$TMP/bare.json" >/dev/null 2>&1 && pass sol_expect_logs_bare || fail sol_expect_logs_bare
out=$("$TALLY" sbpf run "$TMP/wrong.json" 2>&1)
[ $? = 1 ] && grep -qF "expect.logs[6]: expected \"Program $CALLEE invoke [3]\", got \"Program $CALLEE invoke [2]\"" <<<"$out" &&
	[ "$(grep -c 'expect.logs' <<<"$out")" = 3 ] && pass sol_expect_logs_framed_mismatch ||
	fail sol_expect_logs_framed_mismatch "$out"

# ---- the same runs in LiteSVM, the programs linked by `tally sbpf link` ----
. tests/solana/litesvm/oracle.sh
if litesvm_ready sbpf_trace_litesvm; then
	mkdir -p "$TMP/so"
	for f in t5x3 t2x1 t1x1bad; do
		if linked "$TMP/$f.json" "$TMP/so/$f.json"; then
			same_as_litesvm "sbpf_trace_litesvm_$f" "$TMP/so/$f.json"
		else
			fail "sbpf_trace_litesvm_$f" "tally sbpf link failed"
		fi
	done
fi
