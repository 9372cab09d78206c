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

# The version written is the loader's own current one, so it loads without upgrading: the
# loader's upgrade step ends by setting meta.preprocessedProfileVersion to that version,
# the only such assignment in its bundle.
loader_version=$(grep -oE 'meta\.preprocessedProfileVersion=[0-9]+' "$PQ_JS" | sort -u | sed 's/.*=//')
written=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).meta.preprocessedProfileVersion)' "$TMP/t.json")
if [ -n "$loader_version" ] && [ "$(echo "$loader_version" | wc -l)" = 1 ] && [ "$written" = "$loader_version" ]; then
	pass firefox_version_is_the_loaders
else
	fail firefox_version_is_the_loaders "tally writes ${written:-nothing}, the loader's current is ${loader_version:-not found}"
fi

# loader_view FILE.json OUT: the loader's thread list (OUT.threads) and function totals
# (OUT.funcs), in the forms above. The daemon is started here, in the foreground of this
# script, not by `profiler-cli load`: that waits only 500 ms for it, too short on a loaded
# machine.
# The daemons' pids go to a file: start_loader runs in command substitutions (subshells).
trap 'kill_ids TERM $(cat "$TMP/daemons" 2>/dev/null); rm -rf "$TMP"' EXIT
# start_loader FILE.json SESSION OUT: the daemon of SESSION with the profile loaded (its
# thread list in OUT.list); stop_loader SESSION ends it.
start_loader() {
	local json=$1 session=$2 out=$3 tries=0 starts=0 daemon=
	# A daemon that ended before its session was written (seen once in CI, with nothing
	# on its output) is started again, at most three times; a live one is given 60 s.
	until pq thread list --session "$session" --json >"$out.list" 2>"$out.err"; do
		if [ -z "$daemon" ] || ! kill -0 "$daemon" 2>/dev/null; then
			if [ $starts -ge 3 ]; then
				echo "load: $(tail -3 "$out.err") $(tail -3 "$out.daemon")"
				return 1
			fi
			node "$PQ_JS" --daemon "$json" --session "$session" >>"$out.daemon" 2>&1 &
			daemon=$!
			proc_id $daemon >>"$TMP/daemons"
			starts=$((starts + 1))
		fi
		tries=$((tries + 1))
		if [ $tries -ge 120 ]; then
			echo "load: $(tail -3 "$out.err") $(tail -3 "$out.daemon")"
			return 1
		fi
		sleep 0.5
	done
}
stop_loader() { pq stop "$1" >/dev/null 2>&1; }
loader_view() {
	local json=$1 out=$2 session
	session=$(basename "$out")
	start_loader "$json" "$session" "$out" || return 1
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
	stop_loader "$session"
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
	# folded --threads: each thread's stacks below its own frame, as many samples as the
	# loader counts in that thread (the sum of its functions' self samples)
	"$TALLY" export -f folded --threads "$TMP/t.data" >"$TMP/t.folded" 2>"$TMP/err"
	awk '{n = split($1, fr, ";"); r = fr[1]; sub(/.*\//, "", r); s[r] += $NF} END {for (t in s) print t, s[t]}' \
		"$TMP/t.folded" | sort >"$TMP/folded.totals"
	awk '{s[$1] += $(NF - 1)} END {for (t in s) print t, s[t]}' "$TMP/ff.funcs" | sort >"$TMP/ff.totals"
	[ -s "$TMP/ff.totals" ] && cmp -s "$TMP/folded.totals" "$TMP/ff.totals" \
		&& pass folded_threads_totals_equal_the_loaders \
		|| fail folded_threads_totals_equal_the_loaders "folded: $(cat "$TMP/folded.totals") loader: $(cat "$TMP/ff.totals")"
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

# Off-CPU intervals are markers of their thread, with the stack it blocked in: the
# sleeper's add up to its sleeps as the program measured them (within 5%).
if "$TALLY" record -q --off-cpu -o "$TMP/s.data" -- "$TMP/prog" sleep 5 60 >"$TMP/s.out" 2>"$TMP/err"; then
	"$TALLY" export -f firefox -o "$TMP/s.json" "$TMP/s.data" 2>>"$TMP/err"
	if msg=$(start_loader "$TMP/s.json" sm "$TMP/sm"); then
		handle=$(node -e '
			const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			for (const t of l.threads) if (t.name === "sleeper") console.log(t.threadHandle);
		' "$TMP/sm.list")
		pq thread markers --session sm --thread "$handle" --json >"$TMP/sm.markers" 2>&1
		stop_loader sm
		got=$(node -e '
			const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			const o = m.byType.find((t) => t.markerName === "off-CPU");
			const stacks = o.topMarkers.every((x) => x.hasStack);
			console.log(o.count, o.durationStats.avg * o.count * 1e6, stacks);
		' "$TMP/sm.markers" 2>&1)
		truth=$(awk '$1 == "blocked" {s += $3} END {print s + 0}' "$TMP/s.out")
		awk -v g="$got" -v t="$truth" 'BEGIN {split(g, a, " "); exit !(a[1] >= 5 && a[3] == "true" &&
			t > 0 && (a[2] - t) ^ 2 <= (0.05 * t) ^ 2)}' \
			&& pass firefox_off_cpu_markers_add_up_to_the_sleeps \
			|| fail firefox_off_cpu_markers_add_up_to_the_sleeps "count/ns/stacks: $got, sleeps $truth ns"
	else
		fail firefox_off_cpu_markers_add_up_to_the_sleeps "$msg"
	fi
elif grep -q "tracefs\|perf_event_paranoid\|CAP_" "$TMP/err"; then
	skip firefox_off_cpu_markers_add_up_to_the_sleeps "$(cat "$TMP/err")"
else
	fail firefox_off_cpu_markers_add_up_to_the_sleeps "$(cat "$TMP/err")"
fi

# USDT probe hits are instant markers with their stack: as many as the program fires
# (tests/probes/paths.c: 30 hits on one path and 20 on another).
if gcc -O2 -g -pthread -I"$ROOT/include" "$ROOT/tests/probes/paths.c" -o "$TMP/paths" 2>"$TMP/err" &&
	"$TALLY" record -q -e usdt:tally_test:hit -o "$TMP/u.data" -- "$TMP/paths" 30 20 >/dev/null 2>"$TMP/err" &&
	"$TALLY" export -f firefox -o "$TMP/u.json" "$TMP/u.data" 2>"$TMP/err"; then
	if msg=$(start_loader "$TMP/u.json" um "$TMP/um"); then
		pq profile markers --session um --search "probe hit" --limit 0 --json >"$TMP/um.markers" 2>&1
		stop_loader um
		got=$(node -e '
			const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			const hits = m.markers.filter((x) => x.name === "probe hit");
			console.log(hits.length, hits.every((x) => x.hasStack && x.markerType === "USDT"));
		' "$TMP/um.markers" 2>&1)
		[ "$got" = "50 true" ] && pass firefox_usdt_hits_are_markers \
			|| fail firefox_usdt_hits_are_markers "markers: $got $(head -c 300 "$TMP/um.markers")"
	else
		fail firefox_usdt_hits_are_markers "$msg"
	fi
else
	fail firefox_usdt_hits_are_markers "$(cat "$TMP/err")"
fi

# A Python thread's runs of samples that held the GIL, and that did not, are interval
# markers: a thread computing in Python spent its marked time holding it, a thread hashing
# with hashlib (which releases the GIL) its time without it, but for the share of its CPU
# time the workload measured outside its hash calls (tests/python/py/threads_work.py). The
# threads have their Python names.
PY=/usr/bin/python3.11
if [ -x $PY ] && "$TALLY" record -q -F 1000 -o "$TMP/g.data" -- $PY \
	"$ROOT/tests/python/py/threads_work.py" 0.4 >"$TMP/g.out" 2>"$TMP/err" &&
	"$TALLY" export -f firefox -o "$TMP/g.json" "$TMP/g.data" 2>"$TMP/err"; then
	if msg=$(start_loader "$TMP/g.json" gm "$TMP/gm"); then
		got= names=
		for who in py-compute c-hash; do
			tid=$(awk -v w=$who '$2 == w {print $3}' "$TMP/g.out")
			read -r handle tname < <(node -e '
				const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
				for (const t of l.threads) if (String(t.tid) === process.argv[2]) console.log(t.threadHandle, t.name);
			' "$TMP/gm.list" "$tid")
			names="$names $tname"
			pq thread markers --session gm --thread "$handle" --json >"$TMP/gm.$who" 2>&1
			got="$got $(node -e '
				const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
				const ms = (name) => {
					const o = m.byType.find((t) => t.markerName === name);
					return o ? o.durationStats.avg * o.count : 0;
				};
				console.log(ms("GIL held"), ms("GIL not held"));
			' "$TMP/gm.$who" 2>&1)"
		done
		stop_loader gm
		# the threads' Python names (docs/python.md, "Thread names"), as the workload
		# named them
		[ "$names" = " py-compute c-hash" ] &&
			pass "firefox_python_threads_have_their_python_names ($names)" ||
			fail firefox_python_threads_have_their_python_names "the loader's names:$names"
		truth=$(awk '$2 == "c-hash" {print $5 / $4}' "$TMP/g.out")
		awk -v g="$got" -v t="$truth" 'BEGIN {n = split(g, a, " ");
			exit !(n == 4 && a[1] + a[2] > 100 && a[3] + a[4] > 100 &&
			       a[1] / (a[1] + a[2]) >= 0.95 && a[4] / (a[3] + a[4]) >= t - 0.05)}' \
			&& pass "firefox_gil_markers_are_the_threads_gil_time (ms held and not held, compute then hash:$got; hash calls $truth of its CPU)" \
			|| fail firefox_gil_markers_are_the_threads_gil_time "ms held and not held, compute then hash:$got; hash calls $truth of its CPU"
	else
		fail firefox_gil_markers_are_the_threads_gil_time "$msg"
	fi
elif [ ! -x $PY ]; then
	skip firefox_gil_markers_are_the_threads_gil_time "no $PY"
else
	fail firefox_gil_markers_are_the_threads_gil_time "$(cat "$TMP/err")"
fi
