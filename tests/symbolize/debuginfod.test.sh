# Debug information from a real debuginfod server (Debian's, started here on a free port,
# serving a directory that holds a test binary's separate debug file and nothing else):
# `tally symbolize` on the stripped binary gives what llvm-symbolizer gives on the
# unstripped one, only when DEBUGINFOD_URLS names the server and TALLY_DEBUGINFOD is not
# off; a second run reads tally's cache with the server gone; a closed port and a server
# that never answers each cost a bounded wait and one warning (once per command: a report
# asks a silent server once); `tally report` of a recording of the stripped binary names
# its function through the server.
. tests/lib.sh

if ! command -v debuginfod >/dev/null; then
	skip debuginfod_server "no debuginfod (Debian package debuginfod)"
	exit 0
fi

pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	pids=()
}
trap 'stop_all; rm -rf "$TMP"' EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ms_now() { date +%s%3N; }

cat >"$TMP/prog.c" <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin_served_by_debuginfod(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}
int main(int argc, char **argv)
{
	spin_served_by_debuginfod(argc > 1 ? strtoul(argv[1], NULL, 0) : 1000);
	return 0;
}
EOF
mkdir -p "$TMP/served" "$TMP/bin"
gcc -O1 -g -Wl,--build-id -o "$TMP/prog.full" "$TMP/prog.c" || { fail build_prog; exit 0; }
objcopy --only-keep-debug "$TMP/prog.full" "$TMP/served/prog.debug"
strip --strip-all -o "$TMP/bin/prog" "$TMP/prog.full"
id=$(readelf -n "$TMP/prog.full" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
addr=$(nm "$TMP/prog.full" | awk '$3 == "spin_served_by_debuginfod" {print "0x" $1}')
llvm-symbolizer --inlining --obj="$TMP/prog.full" "$addr" >"$TMP/want"
grep -q '^spin_served_by_debuginfod$' "$TMP/want" && grep -q 'prog\.c:[1-9]' "$TMP/want" ||
	{ fail oracle_names_the_function "$(cat "$TMP/want")"; exit 0; }

# start_server NAME: Debian's server on a free port, serving $TMP/served, its url in $url.
# It listens on every address (0.188 has no option to bind one) and is asked on 127.0.0.1;
# ready once its scan of the directory has found the debug file.
start_server() {
	local port
	port=$(free_port)
	debuginfod -F -p "$port" -d "$TMP/$1.sqlite" "$TMP/served" >"$TMP/$1.log" 2>&1 &
	pids+=($!)
	started+=($!)
	url=http://127.0.0.1:$port
	for _ in $(seq 100); do
		python3 -c 'import sys, urllib.request
sys.exit("found_debuginfo_total{source=\"files\"} 1" not in urllib.request.urlopen(sys.argv[1]).read().decode())' \
			"$url/metrics" 2>/dev/null && return 0
		sleep 0.2
	done
	fail "${1}_ready" "$(tail -3 "$TMP/$1.log")"
}
started=()
start_server server

# symbolize_case NAME CACHE [VAR=VALUE...]: tally symbolize of the stripped binary, with a
# cache of its own and HOME in $TMP (libdebuginfod's default cache must stay empty).
symbolize_case() {
	local name=$1 cache=$2
	shift 2
	env "$@" HOME="$TMP/home" TALLY_CACHE="$TMP/$cache" \
		"$TALLY" symbolize -e "$TMP/bin/prog" "$addr" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

symbolize_case none c1 -u DEBUGINFOD_URLS
! grep -q 'prog\.c' "$TMP/none.out" && [ ! -s "$TMP/none.err" ] && [ ! -e "$TMP/c1/debuginfod" ] &&
	pass debuginfod_not_asked_without_urls ||
	fail debuginfod_not_asked_without_urls "$(cat "$TMP/none.out" "$TMP/none.err")"

symbolize_case off c1 DEBUGINFOD_URLS="$url" TALLY_DEBUGINFOD=off
! grep -q 'prog\.c' "$TMP/off.out" && [ ! -s "$TMP/off.err" ] && [ ! -e "$TMP/c1/debuginfod" ] &&
	pass debuginfod_off_asks_nothing ||
	fail debuginfod_off_asks_nothing "$(cat "$TMP/off.out" "$TMP/off.err")"

symbolize_case served c1 DEBUGINFOD_URLS="$url"
if cmp -s "$TMP/want" "$TMP/served.out" && [ ! -s "$TMP/served.err" ]; then
	pass debuginfod_lines_agree_with_llvm
else
	fail debuginfod_lines_agree_with_llvm "want $(cat "$TMP/want") got $(cat "$TMP/served.out" "$TMP/served.err")"
fi
[ -s "$TMP/c1/debuginfod/$id/debuginfo" ] && [ ! -e "$TMP/home/.cache/debuginfod_client" ] &&
	pass debuginfod_downloads_into_tally_cache ||
	fail debuginfod_downloads_into_tally_cache "$(find "$TMP/c1" "$TMP/home" 2>&1 | head -5)"

stop_all
symbolize_case cached c1 DEBUGINFOD_URLS="$url"
cmp -s "$TMP/want" "$TMP/cached.out" && [ ! -s "$TMP/cached.err" ] &&
	pass debuginfod_second_run_reads_cache ||
	fail debuginfod_second_run_reads_cache "$(cat "$TMP/cached.out" "$TMP/cached.err")"

# bounded NAME URL: a fresh cache, several addresses; at most 15 s and one warning that
# names the server and the build-id, and no lines.
bounded() {
	local name=$1 u=$2 t0 ms
	t0=$(ms_now)
	env HOME="$TMP/home" TALLY_CACHE="$TMP/$name.cache" DEBUGINFOD_URLS="$u" \
		"$TALLY" symbolize -e "$TMP/bin/prog" "$addr" "$addr" 0x0 >"$TMP/$name.out" 2>"$TMP/$name.err"
	ms=$(($(ms_now) - t0))
	echo "$name: ${ms} ms: $(cat "$TMP/$name.err")"
	[ "$ms" -lt 15000 ] && [ "$(wc -l <"$TMP/$name.err")" = 1 ] &&
		grep -q "warning: debuginfod: $u.*$id" "$TMP/$name.err" && ! grep -q 'prog\.c' "$TMP/$name.out" &&
		pass "$name" || fail "$name" "${ms} ms: $(cat "$TMP/$name.out" "$TMP/$name.err")"
}
bounded debuginfod_closed_port_costs_one_warning "$url"

# Without the library (hidden in a mount namespace of its own): answers as before, and one
# warning that says it cannot be loaded.
lib=$(readlink -f "$(ldconfig -p | awk '$1 == "libdebuginfod.so.1" {print $NF; exit}')")
if [ -f "$lib" ] && unshare -m true 2>/dev/null; then
	env HOME="$TMP/home" TALLY_CACHE="$TMP/nolib.cache" DEBUGINFOD_URLS="$url" \
		unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
		"$TALLY" symbolize -e "$TMP/bin/prog" "$addr" "$addr" >"$TMP/nolib.out" 2>"$TMP/nolib.err"
	[ "$(wc -l <"$TMP/nolib.err")" = 1 ] && grep -q 'libdebuginfod.so.1 cannot be loaded' "$TMP/nolib.err" &&
		[ "$(grep -c '^??$' "$TMP/nolib.out")" = 2 ] &&
		pass debuginfod_missing_library_costs_one_warning ||
		fail debuginfod_missing_library_costs_one_warning "$(cat "$TMP/nolib.out" "$TMP/nolib.err")"
else
	skip debuginfod_missing_library_costs_one_warning "needs root (unshare -m) and libdebuginfod1"
fi

# start_silent NAME: a server that accepts connections and never says a word, its url in
# $silent_url; it writes its port once it listens, and how many connections it took.
start_silent() {
	python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16); held = []
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
	held.append(s.accept())
	open(sys.argv[1] + ".accepted", "w").write("%d\n" % len(held))' "$TMP/$1.port" &
	pids+=($!)
	for _ in $(seq 100); do [ -s "$TMP/$1.port" ] && break; sleep 0.1; done
	silent_url=http://127.0.0.1:$(cat "$TMP/$1.port")
}
start_silent silent
bounded debuginfod_silent_server_costs_bounded_wait "$silent_url"
grep -q 'no answer' "$TMP/debuginfod_silent_server_costs_bounded_wait.err" &&
	pass debuginfod_silent_server_is_said_so ||
	fail debuginfod_silent_server_is_said_so "$(cat "$TMP/debuginfod_silent_server_costs_bounded_wait.err")"
stop_all

# tally report of a recording of the stripped binary: the name comes from the server.
start_server server2
if ! TALLY_CACHE="$TMP/rec.cache" "$TALLY" record -q -o "$TMP/prog.data" -- "$TMP/bin/prog" 300000000 \
	>/dev/null 2>"$TMP/rec.err"; then
	fail debuginfod_report_names_function "record: $(cat "$TMP/rec.err")"
else
	env HOME="$TMP/home" TALLY_CACHE="$TMP/rep.cache" TALLY_DEBUGINFOD=off \
		"$TALLY" report "$TMP/prog.data" >"$TMP/report.off" 2>&1
	env HOME="$TMP/home" TALLY_CACHE="$TMP/rep.cache" DEBUGINFOD_URLS="$url" \
		"$TALLY" report "$TMP/prog.data" >"$TMP/report.on" 2>&1
	! grep -q spin_served_by_debuginfod "$TMP/report.off" &&
		grep -q spin_served_by_debuginfod "$TMP/report.on" &&
		pass debuginfod_report_names_function ||
		fail debuginfod_report_names_function "$(head -30 "$TMP/report.on")"
	# The other commands that read a recording go through the same lookup.
	for cmd in "export -f folded" "flamegraph -o $TMP/prog.svg"; do
		# shellcheck disable=SC2086
		env HOME="$TMP/home" TALLY_CACHE="$TMP/cmd.cache" DEBUGINFOD_URLS="$url" \
			"$TALLY" $cmd "$TMP/prog.data" >"$TMP/cmd.out" 2>&1
		grep -q spin_served_by_debuginfod "$TMP/cmd.out" "$TMP/prog.svg" 2>/dev/null &&
			pass "debuginfod_${cmd%% *}_names_function" ||
			fail "debuginfod_${cmd%% *}_names_function" "$(head -5 "$TMP/cmd.out")"
		rm -rf "$TMP/cmd.cache"
	done
	# Modules of a recording without a debug file on disk (the program, the vDSO, ...): a
	# silent server is waited for once, with one warning, and asked nothing more.
	start_silent silent2
	t0=$(ms_now)
	env HOME="$TMP/home" TALLY_CACHE="$TMP/rep2.cache" DEBUGINFOD_URLS="$silent_url" \
		"$TALLY" report "$TMP/prog.data" >"$TMP/report.silent" 2>"$TMP/report.silent.err"
	ms=$(($(ms_now) - t0))
	echo "report, silent server: ${ms} ms, $(cat "$TMP/silent2.port.accepted" 2>/dev/null) connection(s)"
	[ "$ms" -lt 15000 ] && [ "$(grep -c 'warning: debuginfod' "$TMP/report.silent.err")" = 1 ] &&
		[ "$(cat "$TMP/silent2.port.accepted")" = 1 ] &&
		pass debuginfod_report_asks_silent_server_once ||
		fail debuginfod_report_asks_silent_server_once "${ms} ms: $(cat "$TMP/report.silent.err")"
fi
stop_all
for p in "${started[@]}"; do
	! kill -0 "$p" 2>/dev/null || fail debuginfod_servers_stopped "pid $p still runs"
done
