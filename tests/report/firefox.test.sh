# tally export -f firefox, checked by the Firefox Profiler's own loader (npm
# @firefox-devtools/profiler-cli): the profile loads, its threads are the ones tally's
# report lists (name, pid, tid), and every thread's function totals (self and total, by
# function name) are those of `tally report --threads` for that thread.
. tests/lib.sh

PQ_JS="$NPM_DIR/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js"
if [ ! -f "$PQ_JS" ]; then
	skip firefox_loader "no $PQ_JS (run scripts/install-deps.sh test)"
	exit 0
fi
export PROFILER_CLI_SESSION_DIR="$TMP/pq"
pq() { timeout 120 node "$PQ_JS" "$@"; }

gcc -O2 -g -pthread -o "$TMP/prog" "$ROOT/tests/record/offcpu_prog.c" || { fail firefox_build; exit 0; }
"$TALLY" record -q -F 2000 -o "$TMP/t.data" -- "$TMP/prog" threads 300 >/dev/null \
	|| { fail firefox_record; exit 0; }

# The report's per-thread tables as "TID NAME SELF TOTAL" lines (NAME without its kind
# and source suffixes), the thread table as "PID TID NAME".
"$TALLY" report --threads --top 1000000 "$TMP/t.data" >"$TMP/report" 2>&1 || { fail firefox_report "$(cat "$TMP/report")"; exit 0; }
awk '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on {print $1, $2, $3}' "$TMP/report" | sort >"$TMP/threads.tally"
awk '/^Thread .* \(pid [0-9]+, tid [0-9]+\):$/ {tid = $NF; sub(/\):$/, "", tid); next}
	/^Top functions by total/ {on = 1; getline; next}
	/^Top functions by self/ || NF == 0 {on = 0}
	on {name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", name); sub(/  \(.*\)$/, "", name)
	    sub(/ \[[a-z]+\]$/, "", name); print tid, name, $2, $4}' "$TMP/report" | sort >"$TMP/funcs.tally"

"$TALLY" export -f firefox -o "$TMP/t.json" "$TMP/t.data" 2>"$TMP/err" || { fail firefox_export "$(cat "$TMP/err")"; exit 0; }
"$TALLY" export -f firefox -o "$TMP/t2.json" "$TMP/t.data" 2>"$TMP/err"
cmp -s "$TMP/t.json" "$TMP/t2.json" && pass firefox_export_is_deterministic \
	|| fail firefox_export_is_deterministic "two exports differ"

# loader_view FILE.json OUT: the loader's thread list (OUT.threads) and function totals
# (OUT.funcs), in the forms above. The daemon is started here, in the foreground of this
# script, not by `profiler-cli load`: that waits only 500 ms for it, too short on a loaded
# machine.
DAEMONS=""
trap 'for d in $DAEMONS; do kill "$d" 2>/dev/null; done; rm -rf "$TMP"' EXIT
loader_view() {
	local json=$1 out=$2 session tries=0
	session=$(basename "$out")
	node "$PQ_JS" --daemon "$json" --session "$session" >"$out.daemon" 2>&1 &
	local daemon=$!
	DAEMONS="$DAEMONS $daemon"
	until pq thread list --session "$session" --json >"$out.list" 2>"$out.err"; do
		tries=$((tries + 1))
		if [ $tries -ge 120 ] || ! kill -0 $daemon 2>/dev/null; then
			echo "load: $(tail -3 "$out.err") $(tail -3 "$out.daemon")"
			return 1
		fi
		sleep 0.5
	done
	node -e '
		const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		for (const t of l.threads) console.log(t.threadHandle, t.pid, t.tid, t.name);
	' "$out.list" >"$out.handles" || return 1
	awk '{print $2, $3, $4}' "$out.handles" | sort >"$out.threads"
	: >"$out.funcs"
	while read -r handle pid tid name; do
		pq thread functions --session "$session" --thread "$handle" --limit 0 --include-idle \
			--json >"$out.f" || return 1
		node -e '
			const f = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			for (const x of f.functions) console.log(process.argv[2], x.name, x.selfSamples, x.totalSamples);
		' "$out.f" "$tid" >>"$out.funcs" || return 1
	done <"$out.handles"
	sort -o "$out.funcs" "$out.funcs"
	pq stop "$session" >/dev/null 2>&1
	wait $daemon 2>/dev/null
}

if msg=$(loader_view "$TMP/t.json" "$TMP/ff" 2>&1); then
	pass firefox_profile_loads
	[ "$(wc -l <"$TMP/threads.tally")" -ge 2 ] && cmp -s "$TMP/threads.tally" "$TMP/ff.threads" \
		&& pass firefox_threads_are_tallys \
		|| fail firefox_threads_are_tallys "tally: $(cat "$TMP/threads.tally") / loader: $(cat "$TMP/ff.threads")"
	# the workload's own functions are there, each on its own thread
	grep -q " spin_a " "$TMP/ff.funcs" && grep -q " spin_b " "$TMP/ff.funcs" \
		&& cmp -s "$TMP/funcs.tally" "$TMP/ff.funcs" \
		&& pass firefox_function_totals_per_thread_equal_report \
		|| fail firefox_function_totals_per_thread_equal_report "$(diff "$TMP/funcs.tally" "$TMP/ff.funcs" | head -8)"
else
	fail firefox_profile_loads "$msg"
fi

# A profile without threads (pprof) is one thread whose totals are the whole report's.
"$TALLY" export -f pprof -o "$TMP/t.pb.gz" "$TMP/t.data" \
	&& "$TALLY" export -f firefox -o "$TMP/p.json" "$TMP/t.pb.gz" 2>"$TMP/err" \
	&& "$TALLY" report --top 1000000 "$TMP/t.pb.gz" >"$TMP/preport" 2>&1 \
	|| fail firefox_from_pprof "$(cat "$TMP/err")"
awk '/^Top functions by total/ {on = 1; getline; next} /^Top functions by self/ || NF == 0 {on = 0}
	on {name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  /, "", name); sub(/  \(.*\)$/, "", name)
	    sub(/ \[[a-z]+\]$/, "", name); print 0, name, $2, $4}' "$TMP/preport" | sort >"$TMP/pfuncs.tally"
if msg=$(loader_view "$TMP/p.json" "$TMP/pf" 2>&1); then
	[ "$(wc -l <"$TMP/pf.threads")" = 1 ] && cmp -s "$TMP/pfuncs.tally" "$TMP/pf.funcs" \
		&& pass firefox_pprof_input_is_one_thread_with_the_reports_totals \
		|| fail firefox_pprof_input_is_one_thread_with_the_reports_totals "$(diff "$TMP/pfuncs.tally" "$TMP/pf.funcs" | head -8)"
else
	fail firefox_pprof_input_is_one_thread_with_the_reports_totals "$msg"
fi
