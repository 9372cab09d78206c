# tally record of an unmodified ruby (Debian's ruby3.1) with Ruby frames, end to end: the
# chain workload (rb/chain.rb) recorded at 1 kHz, its pprof read by go tool pprof
# (-traces -lines), against Ruby's own caller_locations at the same points (chain_check.py
# --traces): the whole chain, labels, paths and lines, in >= 98% of the script's samples
# and Array#sort's samples under the Ruby frame and line that called it; tally's report
# says Ruby frames were spliced into >= 95% of all samples (Ruby's start-up included) and
# kept native frames in at most 2% (inconsistent, unknown, not recorded). As root and as
# nobody (ptrace of one's own process). Needs the ptrace sampler for interpreters other
# than CPython (record/interp_procs.c listing rec_ruby_interp).
. tests/lib.sh

RUBY=/usr/bin/ruby3.1
[ -x "$RUBY" ] || { skip ruby_record "needs $RUBY (scripts/install-deps.sh test)"; exit 0; }
command -v go >/dev/null || { skip ruby_record "no go (golang-go)"; exit 0; }
export GOCACHE="$TMP/go-cache" GOPATH="$TMP/go"

# record NAME [AS...]: the workload recorded by AS (nothing: root), checked.
record() {
	local name=$1 d=$TMP/$1
	shift
	mkdir -p "$d"
	chmod 777 "$d"
	cp "$ROOT/tests/ruby/rb/chain.rb" "$d/chain.rb"
	if ! "$@" timeout 120 "$TALLY" record -F 1000 -o "$d/c.data" -- "$RUBY" "$d/chain.rb" \
		"$d/oracle" "$d/started" 1.5 >"$d/out" 2>"$d/err"; then
		fail "$name" "$(tail -3 "$d/err")"
		return
	fi
	verify "$name" "$d"
}

# verify NAME DIR: DIR/c.data of the workload, against its oracle.
verify() {
	local name=$1 d=$2
	if ! "$TALLY" export -f pprof -o "$d/c.pb.gz" "$d/c.data" 2>>"$d/err" ||
		! HOME="$TMP" go tool pprof -traces -lines "$d/c.pb.gz" >"$d/traces" 2>>"$d/err" ||
		! "$TALLY" report "$d/c.data" >"$d/report" 2>>"$d/err"; then
		fail "$name" "$(tail -3 "$d/err")"
		return
	fi
	python3 "$ROOT/tests/ruby/chain_check.py" "$d/oracle" "$d/traces" 0 "$name" --traces |
		grep -E '^(PASS|FAIL):' || fail "$name" "chain_check printed no verdict"
	# "ruby:     N stacks with Ruby frames (S%); native frames kept: A% inconsistent, ..."
	awk -v name="${name}_spliced" '/^ruby: / {
		found = 1; s = $7; gsub(/[(%);]/, "", s); kept = 0
		for (i = 10; i <= NF; i++) if ($i ~ /%/) { v = $i; gsub(/%/, "", v); kept += v }
		if (s + 0 >= 95 && kept <= 2) print "PASS: " name
		else print "FAIL: " name ": " $0 }
		END { if (!found) print "FAIL: " name ": no ruby: line in the report" }' "$d/report"
}

record ruby_record_chain_root

# -p of a running Ruby: taken over from its mappings as /proc lists them, read to its end.
# Its phases begin once tally traces it (loading the BPF program for Python first takes
# seconds on a loaded machine).
d=$TMP/pid
mkdir -p "$d"
cp "$ROOT/tests/ruby/rb/chain.rb" "$d/chain.rb"
"$RUBY" "$d/chain.rb" "$d/oracle" "$d/started" 1.5 "$d/go" &
rb=$!
timeout 120 "$TALLY" record -F 1000 -o "$d/c.data" -p "$rb" >"$d/out" 2>"$d/err" &
tp=$!
for _ in $(seq 1200); do
	grep -qs '^TracerPid:[[:space:]]*[1-9]' "/proc/$rb/status" && break
	sleep 0.05
done
touch "$d/go"
if wait "$tp"; then
	verify ruby_record_chain_pid "$d"
else
	fail ruby_record_chain_pid "$(tail -3 "$d/err")"
fi
wait "$rb"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v unshare >/dev/null; then
	chmod 711 "$TMP"
	record ruby_record_chain_nobody "$ROOT/scripts/as-nobody.sh" "$TMP"
else
	skip ruby_record_chain_nobody "needs root to drop to nobody, setpriv and unshare"
fi
