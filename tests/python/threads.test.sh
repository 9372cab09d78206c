# Threads and the GIL (docs/python.md, "Threads, the GIL and idle time"): tally record of
# a workload with two threads named by threading, one computing in Python and one hashing
# a large buffer with hashlib (which releases the GIL while it hashes), each for its own
# 0.6 s of CPU time, under CPython 3.8 to 3.13: with their debug information (pyenv's
# builds, Debian's python3.11 with python3.11-dbg; 3.13 from its _Py_DebugOffsets) and
# without (pyenv's libpython 3.8-3.12 stripped, Debian's python3.11 with nothing leading
# to its debug file: tally's table). Against the workload's own clocks (time.thread_time):
#   - each thread's share of the samples is its share of the two threads' CPU time;
#   - the computing thread held the GIL in its samples (all its CPU time is bytecode,
#     which runs only under the GIL), the hashing thread did not, but for the share of
#     its CPU time outside its hash calls;
# both within the sampling error (three standard deviations) plus 3 points, read from
# tally report --gil held / not-held --threads and from the pprof's gil labels as go
# tool pprof -tags reads them. And the threads' names (docs/python.md, "Thread names"),
# against the names the workload gave and the kernel's names it read from /proc:
#   - report --threads names each threading.Thread by its Python name, the thread started
#     by _thread and the main thread by the kernel's;
#   - perf script, reading the recording's COMM records, gives every CPU sample of the
#     named threads their name, and the thread renamed midway its old name before and its
#     new one after, within 250 ms of the rename;
#   - go tool pprof finds the named threads' samples, and only theirs, under their thread
#     labels;
#   - with --rotate, each file names them in all their samples; short-lived threads (15 ms
#     of CPU time) are named too (Debian's python3.11 for these two).
. tests/lib.sh
. tests/python/interpreters.sh

W=$ROOT/tests/python/py
command -v go >/dev/null || { skip python_threads "no go (golang-go)"; exit 0; }
command -v perf >/dev/null || { skip python_threads "no perf (linux-perf)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"

# samples_by_tid FILE [FILTER...]: "TID SAMPLES" per thread of tally report --threads.
samples_by_tid() {
	local data=$1
	shift
	"$TALLY" report --threads --top 1 "$@" "$data" 2>/dev/null |
		awk '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on {print $2, $4}'
}

# pprof_by_tid NAME GIL: "TID SAMPLES" of the pprof's samples labelled gil GIL, as go
# tool pprof -tags counts them.
pprof_by_tid() {
	go tool pprof -sample_index=samples -tags -tagfocus "gil=^$2\$" "$TMP/$1.pb.gz" 2>/dev/null |
		awk '/^ *tid: / {on = 1; next} /^ *[a-z]+: Total/ {on = 0} on && NF >= 3 {print $NF, $1}'
}

# within TRUTH SAMPLES HITS: HITS of SAMPLES is the share TRUTH, within 3 standard
# deviations of a binomial of SAMPLES draws plus 3 points (at least 100 samples).
within() {
	awk -v t="$1" -v n="$2" -v k="$3" 'BEGIN {
		if (n < 100) exit 1
		d = k / n - t; if (d < 0) d = -d
		exit !(d <= 3 * sqrt(t * (1 - t) / n) + 0.03) }'
}

# name_of DATA TID: the thread's name in tally report --threads.
name_of() {
	"$TALLY" report --threads --top 1 "$1" 2>/dev/null |
		awk -v t="$2" '/^Threads:/ {on = 1; getline; next} on && NF == 0 {exit} on && $2 == t {print $3}'
}

# perf_names DATA TID: "NAME SAMPLES" of the thread's CPU samples (not the bpf-output
# events'), each by the name perf script gives it.
perf_names() {
	perf script -i "$1" -F comm,tid,event 2>/dev/null |
		awk -v t="$2" '$2 == t && $3 !~ /software|bpf/ {n[$1]++} END {for (k in n) print k, n[k]}'
}

# pprof_tids NAME THREAD: "TID SAMPLES" of the pprof's samples labelled thread THREAD.
pprof_tids() {
	go tool pprof -sample_index=samples -tags -tagfocus "thread=^$2\$" "$TMP/$1.pb.gz" 2>/dev/null |
		awk '/^ *tid: / {on = 1; next} /^ *[a-z]+: Total/ {on = 0} on && NF >= 3 {print $NF, $1 + 0}'
}

# count TID LINES: the SAMPLES of TID in "TID SAMPLES" lines, 0 when absent.
count() { awk -v t="$1" '$1 == t {n = $2} END {print n + 0}' <<<"$2"; }

# check PYTHON TAG: record PYTHON running the workload, and check its threads' shares.
check() {
	local py=$1 tag=$2 name=threads_$2
	if ! "$TALLY" record -q -F 1000 -o "$TMP/$name.data" -- "$py" "$W/threads_work.py" 0.6 \
		>"$TMP/$name.out" 2>"$TMP/$name.err" ||
		! "$TALLY" export -f pprof --threads -o "$TMP/$name.pb.gz" "$TMP/$name.data" 2>>"$TMP/$name.err"; then
		fail "python_threads_record_$tag" "$(head -3 "$TMP/$name.err")"
		return
	fi
	if grep -q warning "$TMP/$name.err"; then
		fail "python_threads_record_$tag" "$(head -3 "$TMP/$name.err")"
		return
	fi
	local ctid ccpu htid hcpu hin
	read -r _ _ ctid ccpu _ < <(grep '^thread py-compute ' "$TMP/$name.out")
	read -r _ _ htid hcpu hin < <(grep '^thread c-hash ' "$TMP/$name.out")
	if [ -z "${ctid:-}" ] || [ -z "${htid:-}" ]; then
		fail "python_threads_record_$tag" "workload: $(head -3 "$TMP/$name.out")"
		return
	fi
	local all held notheld
	all=$(samples_by_tid "$TMP/$name.data")
	held=$(samples_by_tid "$TMP/$name.data" --gil held)
	notheld=$(samples_by_tid "$TMP/$name.data" --gil not-held)
	local ca ch cn ha hh hn
	ca=$(count "$ctid" "$all") ch=$(count "$ctid" "$held") cn=$(count "$ctid" "$notheld")
	ha=$(count "$htid" "$all") hh=$(count "$htid" "$held") hn=$(count "$htid" "$notheld")
	local cshare hshare
	cshare=$(awk -v c="$ccpu" -v h="$hcpu" 'BEGIN {print c / (c + h)}')
	hshare=$(awk -v c="$hcpu" -v i="$hin" 'BEGIN {print i / c}')
	local figures="compute: $ca samples, $ch held, $cn not; hash: $ha samples, $hh held, $hn not; CPU ms $((ccpu / 1000000)) and $((hcpu / 1000000)), hashing $((hin / 1000000))"
	within "$cshare" $((ca + ha)) "$ca" &&
		pass "python_threads_sample_shares_are_cpu_shares_$tag ($figures)" ||
		fail "python_threads_sample_shares_are_cpu_shares_$tag" "$figures; truth $cshare"
	within 1 $((ch + cn)) "$ch" && [ $((ch + cn)) -ge $((ca * 9 / 10)) ] &&
		pass "python_threads_computing_thread_holds_the_gil_$tag" ||
		fail "python_threads_computing_thread_holds_the_gil_$tag" "$figures"
	within "$hshare" $((hh + hn)) "$hn" && [ $((hh + hn)) -ge $((ha * 9 / 10)) ] &&
		pass "python_threads_hashing_thread_releases_the_gil_$tag" ||
		fail "python_threads_hashing_thread_releases_the_gil_$tag" "$figures; truth $hshare not held"
	# The same from the pprof's labels, read by go tool pprof.
	local ph pn
	ph=$(pprof_by_tid "$name" held) pn=$(pprof_by_tid "$name" "not held")
	local pch pcn phh phn
	pch=$(count "$ctid" "$ph") pcn=$(count "$ctid" "$pn")
	phh=$(count "$htid" "$ph") phn=$(count "$htid" "$pn")
	within 1 $((pch + pcn)) "$pch" && within "$hshare" $((phh + phn)) "$phn" &&
		pass "python_threads_pprof_gil_labels_$tag" ||
		fail "python_threads_pprof_gil_labels_$tag" "go tool pprof: compute $pch held, $pcn not; hash $phh held, $phn not; truth $hshare"
	check_names "$name" "$tag" "$ctid" "$ca" "$htid" "$ha"
}

# check_names NAME TAG CTID CSAMPLES HTID HSAMPLES: the threads' names, as above.
check_names() {
	local name=$1 tag=$2 data=$TMP/$1.data out=$TMP/$1.out
	local rold rnew rtid rbefore rafter rawtid rawcomm maintid maincomm
	read -r _ rold rnew rtid rbefore rafter < <(grep '^renamed ' "$out")
	read -r _ rawtid rawcomm < <(grep '^raw ' "$out")
	read -r _ maintid maincomm < <(grep '^main ' "$out")
	local got want
	got="$(name_of "$data" "$3") $(name_of "$data" "$5") $(name_of "$data" "$rtid") $(name_of "$data" "$rawtid") $(name_of "$data" "$maintid")"
	want="py-compute c-hash $rnew $rawcomm $maincomm"
	[ "$got" = "$want" ] && [ "$rnew" = py-renamed ] &&
		pass "python_threads_report_names_threads_as_python_does_$tag ($got)" ||
		fail "python_threads_report_names_threads_as_python_does_$tag" "report: $got; workload: $want"
	# every CPU sample of the two named threads under its name, as perf script reads it
	local pc ph
	pc=$(perf_names "$data" "$3") ph=$(perf_names "$data" "$5")
	[ "$pc" = "py-compute $4" ] && [ "$ph" = "c-hash $6" ] &&
		pass "python_threads_perf_script_names_every_sample_$tag" ||
		fail "python_threads_perf_script_names_every_sample_$tag" "perf script: ${pc//$'\n'/, } / ${ph//$'\n'/, }; report: $4 and $6 samples"
	# the renamed thread: its old name before the rename, its new one after (within 250
	# ms of it: the thread's samples in 250 ms are at most 250 at 1 kHz)
	local pr nold nnew
	pr=$(perf_names "$data" "$rtid")
	nold=$(awk -v n="$rold" '$1 == n {print $2 + 0}' <<<"$pr") nnew=$(awk -v n="$rnew" '$1 == n {print $2 + 0}' <<<"$pr")
	awk -v o="${nold:-0}" -v n="${nnew:-0}" -v b="$rbefore" -v a="$rafter" 'BEGIN {
		t = o + n; if (t < 100 || o == 0 || n == 0) exit 1
		share = a / (a + b); lag = 250e6 / (a + b); sd = 3 * sqrt(share * (1 - share) / t)
		exit !(n / t <= share + sd + 0.03 && n / t >= share - lag - sd - 0.03) }' &&
		pass "python_threads_rename_shows_the_new_name_$tag ($rold: ${nold:-0}, $rnew: ${nnew:-0} samples; CPU ms $((rbefore / 1000000)) before, $((rafter / 1000000)) after)" ||
		fail "python_threads_rename_shows_the_new_name_$tag" "perf script: ${pr//$'\n'/, }; CPU ms $((rbefore / 1000000)) before, $((rafter / 1000000)) after"
	# go tool pprof: the samples labelled with each name are that thread's, all of them
	local lc lh
	lc=$(pprof_tids "$name" py-compute) lh=$(pprof_tids "$name" c-hash)
	[ "$lc" = "$3 $4" ] && [ "$lh" = "$5 $6" ] &&
		pass "python_threads_pprof_thread_labels_are_python_names_$tag" ||
		fail "python_threads_pprof_thread_labels_are_python_names_$tag" "go tool pprof: py-compute ${lc//$'\n'/, }; c-hash ${lh//$'\n'/, }; report: $3 $4, $5 $6"
}

for_each_python check python_threads py311

# Without: tally's table.
export DEBUGINFOD_URLS=
if [ -x /usr/bin/python3.11 ]; then
	mkdir -p "$TMP/debian"
	objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink \
		/usr/bin/python3.11 "$TMP/debian/python3.11"
	check "$TMP/debian/python3.11" py311_debian_without_debug_info
fi
for v in 3.8 3.9 3.10 3.12; do
	home=$(ls -d "$PYENV_VERSIONS"/$v.* 2>/dev/null | tail -1)
	[ -n "$home" ] || continue
	lib=libpython$v.so.1.0
	mkdir -p "$TMP/lib$v"
	strip --strip-all -o "$TMP/lib$v/$lib" "$home/lib/$lib"
	LD_LIBRARY_PATH=$TMP/lib$v check "$home/bin/python$v" "py${v/./}_pyenv_stripped"
done

# --rotate: each file names the threads it has samples of by itself (the names are
# written again in each), as perf script reads each file.
if [ -x /usr/bin/python3.11 ]; then
	mkdir -p "$TMP/rot"
	if "$TALLY" record -q -F 1000 --rotate 1 -o "$TMP/rot/r.data" -- /usr/bin/python3.11 \
		"$W/threads_work.py" 1.2 >"$TMP/rot.out" 2>"$TMP/rot.err"; then
		read -r _ _ ctid _ < <(grep '^thread py-compute ' "$TMP/rot.out")
		files=0 named=0 seen=
		for f in "$TMP"/rot/r.data.*; do
			got=$(perf_names "$f" "$ctid")
			[ -n "$got" ] || continue
			files=$((files + 1))
			[ "$(awk '{print $1}' <<<"$got")" = py-compute ] && named=$((named + 1))
			seen="$seen ${got//$'\n'/,}"
		done
		[ "$files" -ge 2 ] && [ "$named" = "$files" ] &&
			pass "python_threads_rotated_files_each_name_their_threads ($files files:$seen)" ||
			fail python_threads_rotated_files_each_name_their_threads "$files files, $named named:$seen"
	else
		fail python_threads_rotated_files_each_name_their_threads "$(head -3 "$TMP/rot.err")"
	fi
fi

# Short-lived threads (15 ms of CPU time each, one after another): named too, their names
# read while they run, at their first samples.
if [ -x /usr/bin/python3.11 ]; then
	if "$TALLY" record -q -F 1000 -o "$TMP/short.data" -- /usr/bin/python3.11 \
		"$W/short_threads.py" 5 15 >"$TMP/short.out" 2>"$TMP/short.err"; then
		got= want=
		while read -r _ sname stid; do
			want="$want $sname"
			got="$got $(name_of "$TMP/short.data" "$stid")"
		done <"$TMP/short.out"
		[ "$(wc -l <"$TMP/short.out")" = 5 ] && [ "$got" = "$want" ] &&
			pass "python_threads_short_lived_threads_are_named ($got)" ||
			fail python_threads_short_lived_threads_are_named "report:$got; workload:$want"
	else
		fail python_threads_short_lived_threads_are_named "$(head -3 "$TMP/short.err")"
	fi
fi
