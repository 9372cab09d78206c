# JIT regions registered with the agent, against perf itself: perf report names the
# samples in the JIT code from the agent's /tmp/perf-PID.map, and after `perf inject --jit`
# (which reads the agent's jitdump) from the ELF file perf made of the dumped code. The
# program (tests/agent/jit_prog.c) is x86-64 machine code. The files in /tmp of the test's
# own process (the map, the dump, and the jitted-PID-N.so perf inject writes beside the
# dump) are removed.
. tests/lib.sh

if [ "$(uname -m)" != x86_64 ]; then
	skip agent_jit "the JIT program is x86-64 code"
	exit 0
fi
if ! command -v perf >/dev/null; then
	skip agent_jit "no perf"
	exit 0
fi
libs=$(sed -n "s/^LIBS := //p" "$ROOT/Makefile")
san=$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined)
if ! cc -std=gnu11 -O2 -I"$ROOT/include" $san -o "$TMP/jit_prog" "$ROOT/tests/agent/jit_prog.c" \
	"$ROOT/$BUILD/libtally.a" $libs 2>"$TMP/cc.err"; then
	fail agent_jit_builds "$(head -5 "$TMP/cc.err")"
	exit 0
fi
cleanup() {
	local pid
	pid=$(cat "$TMP/pid" 2>/dev/null)
	[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump" /tmp/jitted-"$pid"-*.so
	rm -rf "$TMP"
}
trap cleanup EXIT

# -k 1: CLOCK_MONOTONIC timestamps, the jitdump's clock.
if ! HOME="$TMP" perf record -q -k 1 -e cpu-clock -o "$TMP/perf.data" -- \
	sh -c 'echo $$ >"$0"; exec "$1"' "$TMP/pid" "$TMP/jit_prog" >"$TMP/rec.out" 2>&1; then
	skip agent_jit "perf record failed: $(tail -2 "$TMP/rec.out")"
	exit 0
fi
share() { # share REPORT_OUTPUT: the percentage perf gives jit_spin
	awk '/jit_spin/ { sub("%", "", $1); print $1; exit }' "$1"
}
HOME="$TMP" perf report -i "$TMP/perf.data" --stdio --sort sym 2>/dev/null >"$TMP/map.report"
p=$(share "$TMP/map.report")
[ -n "$p" ] && [ "$(echo "$p > 80" | bc)" = 1 ] && pass agent_jit_perf_map_names_code ||
	fail agent_jit_perf_map_names_code "jit_spin at '${p}'%: $(grep -v '^#' "$TMP/map.report" | head -4)"

if HOME="$TMP" perf inject --jit -i "$TMP/perf.data" -o "$TMP/jit.data" 2>"$TMP/inject.err"; then
	HOME="$TMP" perf report -i "$TMP/jit.data" --stdio --sort dso,sym 2>/dev/null >"$TMP/dump.report"
	p=$(share "$TMP/dump.report")
	[ -n "$p" ] && [ "$(echo "$p > 80" | bc)" = 1 ] && grep -q 'jitted-.*jit_spin' "$TMP/dump.report" &&
		pass agent_jitdump_read_by_perf_inject ||
		fail agent_jitdump_read_by_perf_inject "jit_spin at '${p}'%: $(grep -v '^#' "$TMP/dump.report" | head -4)"
else
	fail agent_jitdump_read_by_perf_inject "perf inject: $(head -3 "$TMP/inject.err")"
fi
