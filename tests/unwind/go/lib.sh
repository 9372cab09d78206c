# Helpers of the Go tests (sourced after tests/lib.sh): building tests/unwind/go/main.go
# into $TMP with go's caches there too, and a recording of it compared with the CPU
# profile the program writes itself (runtime/pprof) in a run of its own.

command -v go >/dev/null || { skip "${GO_TEST:-go}" "no go (golang-go)"; exit 0; }
export HOME="$TMP" GOCACHE="$TMP/go-cache" GOPATH="$TMP/go" GOFLAGS= GO111MODULE=off

# go_build OUT [GO BUILD FLAGS...]: the program, built from a copy in $TMP.
go_build() {
	local out=$1
	shift
	mkdir -p "$TMP/src"
	cp "$ROOT/tests/unwind/go/main.go" "$TMP/src/main.go"
	(cd "$TMP/src" && go build "$@" -o "$out" main.go) >"$TMP/build.err" 2>&1 ||
		{ fail "${GO_TEST:-go}_build" "$(cat "$TMP/build.err")"; exit 0; }
}

# go_record NAME BIN: tally record of BIN: NAME.data, tally's report NAME.report and folded
# stacks NAME.folded; then BIN run again alone writing its own CPU profile, NAME.pprof, read
# by go tool pprof -top into NAME.top. Alone: under tally's recording, runtime/pprof's own
# samples came out skewed between the hot functions (CI run 13: hotB 18.9% where its work is
# a third; run alone, its shares are the work's: 17.3/33.2/49.5% of hotA/hotB/hotC).
go_record() {
	local name=$1 bin=$2
	if ! "$TALLY" record -q -o "$TMP/$name.data" -- "$bin" -seconds 3 \
		>"$TMP/$name.out" 2>"$TMP/$name.err" ||
		! "$TALLY" report "$TMP/$name.data" >"$TMP/$name.report" 2>>"$TMP/$name.err" ||
		! "$TALLY" export -f folded -o "$TMP/$name.folded" "$TMP/$name.data" 2>>"$TMP/$name.err" ||
		! "$bin" -seconds 3 -cpuprofile "$TMP/$name.pprof" >>"$TMP/$name.out" 2>>"$TMP/$name.err" ||
		! go tool pprof -top "$bin" "$TMP/$name.pprof" >"$TMP/$name.top" 2>>"$TMP/$name.err"; then
		fail "${GO_TEST:-go}_record_$name" "$(cat "$TMP/$name.err")"
		return 1
	fi
}

# go_shares_agree TEST NAME: the shares of hotA, hotB and hotC among the three, by self
# samples, in tally's folded stacks and in Go's own profile agree within three standard
# errors of both samples (plus 2 points for the two profilers' different sampling clocks).
go_shares_agree() {
	local test=$1 name=$2
	awk '
		FNR == 1 {f++}
		f == 1 {n = $NF; sub(/ [0-9]+$/, ""); k = split($0, fr, ";"); leaf = fr[k]
			if (leaf ~ /^main\.hot[ABC]$/) {t[leaf] += n; tt += n}}
		f == 2 && $NF ~ /^main\.hot[ABC]$/ {v = $1; ms = v ~ /ms$/; sub(/m?s$/, "", v)
			g[$NF] = ms ? v / 1000 : v; gt += g[$NF]}
		END {
			if (tt < 200 || gt <= 0) {printf "too few samples: tally %d, pprof %.2fs\n", tt, gt; exit 1}
			ok = 1; gn = gt * 100 # runtime/pprof samples at 100 Hz
			for (i = 0; i < 3; i++) {
				fn = "main.hot" substr("ABC", i + 1, 1)
				a = t[fn] / tt; b = g[fn] / gt
				e = 3 * sqrt(a * (1 - a) / tt + b * (1 - b) / gn) + 0.02
				printf "%s tally %.1f%% pprof %.1f%% (+-%.1f) ", fn, 100 * a, 100 * b, 100 * e
				if (a - b > e || b - a > e) ok = 0
			}
			printf "of %d and %d samples\n", tt, gn
			exit !ok
		}' "$TMP/$name.folded" "$TMP/$name.top" >"$TMP/$name.shares" &&
		pass "${test} ($(cat "$TMP/$name.shares"))" ||
		fail "$test" "$(cat "$TMP/$name.shares")"
}

# go_complete TEST NAME: at least 95% of tally's stacks complete (its report's unwind line),
# and none truncated just below runtime.goexit.
go_complete() {
	local test=$1 name=$2 line
	line=$(grep -m1 '^unwind:' "$TMP/$name.report")
	awk '/^unwind:/ {for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^complete/) {c = $i; sub(/%/, "", c)}
		exit !(c + 0 >= 95)}' "$TMP/$name.report" &&
		! grep -q '\[truncated\];runtime\.goexit' "$TMP/$name.folded" &&
		pass "$test ($line)" ||
		fail "$test" "$line; $(grep -c '\[truncated\];runtime\.goexit' "$TMP/$name.folded") stacks truncated below runtime.goexit"
}

# go_hot_stacks TEST NAME: every stack through a hot function has all its frames, from
# runtime.goexit down: then one of the wrappers go1.19 makes of the three go statements
# (main.main.funcN, main.spawn.funcN), main.work and main.round (at least 95% of them).
go_hot_stacks() {
	local test=$1 name=$2
	awk '{n = $NF; sub(/ [0-9]+$/, "")} /main\.hot[ABC]$/ {all += n
			if ($0 ~ /^runtime\.goexit(\.abi0)?;main\.(main|spawn)\.func[0-9]+;main\.work;main\.round;main\.hot[ABC]$/) ok += n}
		END {printf "%d of %d", ok, all; exit !(all >= 200 && ok >= all * 0.95)}' \
		"$TMP/$name.folded" >"$TMP/$name.starts" &&
		pass "$test ($(cat "$TMP/$name.starts"))" ||
		fail "$test" "$(cat "$TMP/$name.starts"); $(grep 'main\.hot' "$TMP/$name.folded" | sort -k2 -n | tail -2)"
}
