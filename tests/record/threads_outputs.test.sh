# The outputs that have a notion of threads use it, on request (--threads; without it their
# bytes are what they were): pprof labels each sample with its thread (thread, pid, tid),
# as go tool pprof -tags lists them, and speedscope writes a profile per thread and metric.
# Oracles: go tool pprof's own per-tag totals (exact, in nanoseconds) and speedscope's file
# schema; each thread's totals equal `tally report --threads`'s table (shown rounded to
# 0.01 ms, so times agree within 0.005 ms, counts exactly).
. tests/lib.sh

gcc -O2 -g -pthread -o "$TMP/prog" "$ROOT/tests/record/offcpu_prog.c" || { fail threads_outputs_build; exit 0; }
"$TALLY" record -q --off-cpu -F 2000 -o "$TMP/t.data" -- "$TMP/prog" threads 200 >/dev/null 2>"$TMP/err" \
	|| { fail threads_outputs_record "$(cat "$TMP/err")"; exit 0; }
"$TALLY" report --threads "$TMP/t.data" >"$TMP/report" 2>&1 || { fail threads_outputs_report "$(cat "$TMP/report")"; exit 0; }
# "TID SAMPLES CPU_NS OFFCPU_NS" per thread, the times as the report rounds them
to_ns() { awk '{v = $0 + 0; u = $0; sub(/^[0-9.]+/, "", u)
	f = u == "ns" ? 1 : u == "us" || u == "µs" ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : -1
	printf "%.0f", f < 0 ? -1 : v * f}' <<<"$1"; }
awk '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on {print $2, $4, $5, $6}' "$TMP/report" >"$TMP/tt"
: >"$TMP/threads.tally"
while read -r tid n cpu off; do
	echo "$tid $n $(to_ns "$cpu") $(to_ns "$off")" >>"$TMP/threads.tally"
done <"$TMP/tt"
sort -o "$TMP/threads.tally" "$TMP/threads.tally"
[ "$(wc -l <"$TMP/threads.tally")" -ge 3 ] || { fail threads_outputs_threads "$(cat "$TMP/report")"; exit 0; }
# agree A B: the same tids, samples equal, times within 5000 ns
agree() { join "$1" "$2" | awk -v want="$(wc -l <"$1")" '
	function off(a, b) { return a - b > 5000 || b - a > 5000 }
	{n++; if ($2 != $5 || off($3, $6) || off($4, $7)) bad = 1} END {exit !(n == want && !bad)}'; }

if command -v go >/dev/null; then
	"$TALLY" export -f pprof --threads -o "$TMP/t.pb.gz" "$TMP/t.data" 2>"$TMP/err" || fail pprof_threads_export "$(cat "$TMP/err")"
	# go tool pprof -tags: the tid section of one metric as "TID VALUE"
	tid_totals() { go tool pprof -sample_index="$1" -tags -unit=ns "$TMP/t.pb.gz" 2>/dev/null |
		awk '/^ *tid:/ {on = 1; next} on && NF == 0 {exit}
		     on {v = $1; sub(/ns$/, "", v); t = $NF; sub(/ns$/, "", t); print t, v + 0}' | sort; }
	tid_totals samples >"$TMP/g.samples"
	tid_totals cpu >"$TMP/g.cpu"
	tid_totals off-cpu >"$TMP/g.off"
	join "$TMP/g.samples" "$TMP/g.cpu" | join - "$TMP/g.off" >"$TMP/threads.go"
	agree "$TMP/threads.tally" "$TMP/threads.go" && pass pprof_threads_totals_equal_the_report \
		|| fail pprof_threads_totals_equal_the_report "report: $(cat "$TMP/threads.tally" | tr '\n' ';') go: $(cat "$TMP/threads.go" | tr '\n' ';')"
	# -tagfocus selects one thread by name (the program's thread spin-a): its samples
	tid=$(awk '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on && $3 == "spin-a" {print $2}' "$TMP/report")
	name=spin-a
	got=$(go tool pprof -sample_index=samples -tagfocus=thread="^$name\$" -tags "$TMP/t.pb.gz" 2>/dev/null |
		awk '/^ *tid:/ {on = 1; next} on && NF == 0 {exit} on {print $NF, $1 + 0}')
	want=$(awk -v t="$tid" '$1 == t {print $1, $2}' "$TMP/threads.tally")
	[ -n "$name" ] && [ -n "$want" ] && [ "$got" = "$want" ] && pass pprof_threads_tagfocus_selects_a_thread \
		|| fail pprof_threads_tagfocus_selects_a_thread "thread $name ($tid): go $got, report $want"
	# without --threads, no labels (the bytes of before)
	"$TALLY" export -f pprof -o "$TMP/plain.pb.gz" "$TMP/t.data" 2>"$TMP/err"
	go tool pprof -tags "$TMP/plain.pb.gz" 2>&1 | grep -q "tid:" \
		&& fail pprof_without_threads_has_no_labels || pass pprof_without_threads_has_no_labels
else
	skip pprof_threads_totals_equal_the_report "no go"
fi

"$TALLY" export -f speedscope --threads -o "$TMP/t.json" "$TMP/t.data" 2>"$TMP/err" || fail speedscope_threads_export "$(cat "$TMP/err")"
# each profile "NAME-PID/TID (metric)": "TID SAMPLES CPU OFFCPU" from their endValues (and
# the weights must add up to them)
node -e '
	const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const t = {};
	for (const p of d.profiles) {
		const m = /^.*-(\d+)\/(\d+) \((.*)\)$/.exec(p.name);
		if (!m) { console.log("bad name " + p.name); process.exit(1); }
		if (p.weights.reduce((a, b) => a + b, 0) !== p.endValue) process.exit(1);
		(t[m[2]] = t[m[2]] || {})[m[3]] = p.endValue;
	}
	for (const tid in t) console.log(tid, t[tid]["samples"], t[tid]["cpu"], t[tid]["off-cpu"]);
' "$TMP/t.json" | sort >"$TMP/threads.ss"
agree "$TMP/threads.tally" "$TMP/threads.ss" && pass speedscope_threads_totals_equal_the_report \
	|| fail speedscope_threads_totals_equal_the_report "report: $(tr '\n' ';' <"$TMP/threads.tally") speedscope: $(tr '\n' ';' <"$TMP/threads.ss")"
# speedscope's schema, from the package scripts/install-deps.sh installs.
SCHEMA="$NPM_DIR/node_modules/speedscope/dist/release/file-format-schema.json"
if [ -f "$SCHEMA" ]; then
	out=$(NODE_PATH="$NPM_DIR/node_modules" node -e '
		const Ajv = require("ajv");
		const v = new Ajv({ strict: false, allErrors: true }).compile(require(process.argv[1]));
		if (!v(JSON.parse(require("fs").readFileSync(process.argv[2], "utf8")))) {
			console.log(JSON.stringify(v.errors).slice(0, 400)); process.exit(1);
		}' "$SCHEMA" "$TMP/t.json" 2>&1) \
		&& pass speedscope_threads_validates_against_schema || fail speedscope_threads_validates_against_schema "$out"
else
	skip speedscope_threads_validates_against_schema "no $SCHEMA (run scripts/install-deps.sh test)"
fi

expect_err firefox_threads_is_usage 2 "--threads: not with firefox" "$TALLY" export -f firefox --threads "$TMP/t.data"
