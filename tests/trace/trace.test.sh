# tally/trace.h: compiles everywhere it should, emits what <sys/sdt.h> emits, costs nothing
# detached, and works with the tracers people use (bpftrace, tally probes count).
. tests/lib.sh

T=$ROOT/tests/trace
OUT=$CORPUS/trace
mkdir -p "$OUT"
HDR=$ROOT/include/tally/trace.h
SDT_INC=$(dirname "$(dirname "$(find /usr/include -path '*/sys/sdt.h' | head -1)")")

# build OUT CC FLAGS... -- SOURCES...: compiles when OUT is missing or older than its inputs.
build() {
	local out=$1 cc=$2 flags=() srcs=() f
	shift 2
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	srcs=("$@")
	for f in "${srcs[@]}" "$HDR"; do
		[ "$f" -nt "$out" ] && { "$cc" "${flags[@]}" -I"$ROOT/include" "${srcs[@]}" -o "$out" || return 1; return 0; }
	done
	[ -e "$out" ] || "$cc" "${flags[@]}" -I"$ROOT/include" "${srcs[@]}" -o "$out"
}

notes() { readelf -n "$1" | grep -c NT_STAPSDT; }

# until_exec PID FILE: waits (up to 10 s) for the background process to be running FILE.
until_exec() {
	for _ in $(seq 1000); do
		[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.01
	done
	return 1
}

# ---- every arity, every language standard, both compilers, strict warnings ----
STRICT="-pedantic -Wall -Wextra -Wconversion -Wsign-conversion -Wshadow -Wundef -Wredundant-decls -Werror"
for cc in gcc clang; do
	for std in c99 c11 c17 c2x; do
		name=arity_${cc}_$std
		if out=$(build "$OUT/$name" $cc -std=$std $STRICT -Wnested-externs -O2 -- "$T/arity.c" 2>&1) &&
			out=$("$OUT/$name" 2>&1) && [ "$(notes "$OUT/$name")" = 15 ]; then
			pass "$name"
		else
			fail "$name" "$(head -5 <<<"$out")"
		fi
	done
done
for cc in g++ clang++; do
	for std in c++11 c++17 c++20; do
		name=arity_${cc}_$std
		if out=$(build "$OUT/$name" $cc -x c++ -std=$std $STRICT -Wold-style-cast \
			-Wzero-as-null-pointer-constant -O2 -- "$T/arity.c" 2>&1) &&
			out=$("$OUT/$name" 2>&1) && [ "$(notes "$OUT/$name")" = 15 ]; then
			pass "$name"
		else
			fail "$name" "$(head -5 <<<"$out")"
		fi
	done
done
for o in -O0 -O1 -O3 -Os; do
	name=arity_gcc_$o
	out=$(build "$OUT/$name" gcc $o -Wall -Werror -- "$T/arity.c" 2>&1) && out=$("$OUT/$name" 2>&1) \
		&& pass "arity_args_not_evaluated_gcc$o" || fail "arity_args_not_evaluated_gcc$o" "$out"
done

# -DTALLY_NO_TRACEPOINTS: no note, no semaphore, nothing evaluated, still warning-free.
for cc in gcc clang++; do
	lang=; [ $cc = clang++ ] && lang="-x c++"
	name=arity_off_$cc
	if out=$(build "$OUT/$name" $cc $lang -DTALLY_NO_TRACEPOINTS $STRICT -O2 -- "$T/arity.c" 2>&1) &&
		out=$("$OUT/$name" 2>&1) && ! readelf -SW "$OUT/$name" | grep -qE '\.note\.stapsdt|\.probes|stapsdt\.base'; then
		pass "no_tracepoints_compiles_to_nothing_$cc"
	else
		fail "no_tracepoints_compiles_to_nothing_$cc" "$out"
	fi
done

# ---- byte compatibility with <sys/sdt.h> ----
# The object's .note.stapsdt bytes (addresses are zero there, carried by relocations) are
# identical; so are the relocation types and offsets, with the semaphore symbols renamed.
# Linked, readelf -n agrees on every field but the semaphore addresses, whose order in
# .probes differs; those must lie in .probes, one per probe.
relocs() {
	readelf -rW "$1" | sed -n '/rela.note.stapsdt/,/^$/p' | awk 'NF>=5 {print $1, $3, $5}' |
		sed -E 's/tally_sem\.twin\.([a-z]+)/SEM_\1/; s/twin_([a-z]+)_semaphore/SEM_\1/'
}
for combo in gcc:-O0 gcc:-O1 clang:-O0 clang:-O1 clang:-O2; do
	cc=${combo%%:*} o=${combo#*:}
	a=$OUT/twin_tally_$cc$o.o b=$OUT/twin_sdt_$cc$o.o
	if ! build "$a" $cc $o -c -- "$T/twin.c" || ! build "$b" $cc $o -c -DUSE_SDT -I"$SDT_INC" -- "$T/twin.c"; then
		fail "note_bytes_match_sdt_h_$cc$o" "compile failed"
		continue
	fi
	if [ "$(readelf -x .note.stapsdt "$a")" = "$(readelf -x .note.stapsdt "$b")" ] &&
		[ "$(relocs "$a")" = "$(relocs "$b")" ] && [ -n "$(relocs "$a")" ]; then
		pass "note_bytes_match_sdt_h_$cc$o"
	else
		fail "note_bytes_match_sdt_h_$cc$o" "$(diff <(readelf -x .note.stapsdt "$a"; relocs "$a") <(readelf -x .note.stapsdt "$b"; relocs "$b") | head -6 | tr '\n' ' ')"
	fi
done
masked_notes() { readelf -n "$1" | grep -v 'Build ID' | sed -E 's/Semaphore: 0x[0-9a-f]+/Semaphore: S/'; }
for combo in gcc:-O1 clang:-O1 clang:-O2; do
	cc=${combo%%:*} o=${combo#*:}
	a=$OUT/twin_tally_$cc$o b=$OUT/twin_sdt_$cc$o
	build "$a" $cc $o -- "$T/twin.c" && build "$b" $cc $o -DUSE_SDT -I"$SDT_INC" -- "$T/twin.c" || {
		fail "readelf_notes_match_sdt_h_$cc$o" "compile failed"; continue; }
	if [ "$(masked_notes "$a")" = "$(masked_notes "$b")" ] && [ "$(notes "$a")" = 5 ]; then
		pass "readelf_notes_match_sdt_h_$cc$o"
	else
		fail "readelf_notes_match_sdt_h_$cc$o" "$(diff <(masked_notes "$a") <(masked_notes "$b") | head -6 | tr '\n' ' ')"
	fi
	read -r start size <<<"$(readelf -SW "$a" | awk '$2==".probes" {print $4, $6}')"
	sems=$(readelf -n "$a" | sed -nE 's/.*Semaphore: 0x([0-9a-f]+)/\1/p' | sort -u)
	ok=1
	[ "$(wc -l <<<"$sems")" = 5 ] || ok=0
	for s in $sems; do
		(( 16#$s >= 16#$start && 16#$s + 2 <= 16#$start + 16#$size )) || ok=0
	done
	[ $ok = 1 ] && pass "semaphores_in_probes_section_$cc$o" || fail "semaphores_in_probes_section_$cc$o" "$sems vs .probes $start+$size"
done

# ---- one semaphore per probe per linked object, across translation units and DSOs ----
build "$OUT/libmulti1.so" gcc -O2 -fPIC -shared -DLIB=1 -- "$T/multi_lib.c" &&
	build "$OUT/libmulti2.so" clang -O2 -fPIC -shared -DLIB=2 -- "$T/multi_lib.c" &&
	build "$OUT/multi" gcc -O2 -L"$OUT" -Wl,-rpath,"$OUT" -- "$T/multi_main.c" "$T/multi_a.c" -lmulti1 -lmulti2 ||
	fail multi_build
if [ -x "$OUT/multi" ]; then
	exe_sems=$(readelf -n "$OUT/multi" | sed -nE 's/.*Semaphore: (0x[0-9a-f]+)/\1/p' | sort -u)
	n_sym=$(nm "$OUT/multi" | grep -c ' tally_sem\.tally_test\.multi$')
	[ "$(notes "$OUT/multi")" = 2 ] && [ "$(wc -l <<<"$exe_sems")" = 1 ] && [ "$n_sym" = 1 ] \
		&& pass one_semaphore_across_translation_units \
		|| fail one_semaphore_across_translation_units "notes $(notes "$OUT/multi"), sems $exe_sems, symbols $n_sym"
	# Each shared object keeps its own, hidden: not exported, so nothing interposes it.
	if ! nm -D "$OUT/libmulti1.so" | grep -q tally_sem && nm "$OUT/libmulti1.so" | grep -q ' [a-z] tally_sem\.tally_test\.multi$' &&
		[ -n "$(readelf -n "$OUT/libmulti2.so" | grep -o 'Semaphore: 0x[0-9a-f]*[1-9a-f]')" ]; then
		pass semaphore_hidden_per_shared_object
	else
		fail semaphore_hidden_per_shared_object "$(nm -D "$OUT/libmulti1.so" | grep tally)"
	fi
	out=$("$TALLY" probes count 'tally_test:multi' -- "$OUT/multi" 250 2>&1)
	[ "$out" = "tally_test:multi 1000" ] && pass tally_counts_probe_in_all_objects \
		|| fail tally_counts_probe_in_all_objects "$out"
fi

# Link-time variations: LTO and section garbage collection keep one semaphore and every
# note; a C++ inline function's note goes with the COMDAT copy the linker drops.
for cc in gcc clang; do
	for how in "-flto" "-ffunction-sections -fdata-sections -Wl,--gc-sections"; do
		name=multi_${cc}_${how%% *}
		# shellcheck disable=SC2086
		if build "$OUT/$name" $cc -O2 $how -L"$OUT" -Wl,-rpath,"$OUT" -- "$T/multi_main.c" "$T/multi_a.c" -lmulti1 -lmulti2 &&
			[ "$(notes "$OUT/$name")" = 2 ] && [ "$(nm "$OUT/$name" | grep -c ' tally_sem\.tally_test\.multi$')" = 1 ] &&
			out=$("$TALLY" probes count -- "$OUT/$name" 10 2>&1) && [ "$out" = "tally_test:multi 40" ]; then
			pass "link_${name#multi_}"
		else
			fail "link_${name#multi_}" "${out:-build or notes}"
		fi
	done
done
for cc in g++ clang++; do
	name=inline_$cc
	if build "$OUT/$name" $cc -O0 -- "$T/inline_a.cc" "$T/inline_b.cc" && [ "$(notes "$OUT/$name")" = 1 ] &&
		out=$("$TALLY" probes count tally_test:inl -- "$OUT/$name" 25 2>&1) && [ "$out" = "tally_test:inl 50" ]; then
		pass "comdat_inline_function_keeps_one_note_$cc"
	else
		fail "comdat_inline_function_keeps_one_note_$cc" "${out:-notes: $(notes "$OUT/$name")}"
	fi
done

# ---- the seed's point: arguments are evaluated only while a tracer is attached ----
build "$OUT/fire" gcc -O2 -- "$T/fire.c" || fail fire_build
FIRE=$OUT/fire
out=$("$FIRE" 1000)
[ "$out" = "evaluated 0" ] && pass args_not_evaluated_when_detached || fail args_not_evaluated_when_detached "$out"

if [ "$(id -u)" != 0 ] || ! command -v bpftrace >/dev/null; then
	skip bpftrace_attach "needs root and bpftrace"
else
	# bpftrace raises the semaphore before its BPF program is in place: fire waits for a
	# go-file that the test creates when bpftrace's BEGIN has run.
	bpf_run() { # NAME N BPFTRACE_ARGS... : runs fire under bpftrace, checks count and detach
		local name=$1 n=$2 go=$TMP/go.$1 fo=$TMP/fire.$1 bo=$TMP/bt.$1 fp bp i
		shift 2
		rm -f "$go"
		"$FIRE" "$n" wait "$go" >"$fo" 2>&1 &
		fp=$!
		until_exec $fp "$FIRE"
		local args=("$@")
		args=("${args[@]//@PID@/$fp}")
		timeout 120 bpftrace "${args[@]}" >"$bo" 2>&1 &
		bp=$!
		for i in $(seq 600); do grep -q '^ready' "$bo" && break; sleep 0.1; done
		touch "$go"
		for i in $(seq 600); do grep -q '^fired' "$fo" && break; sleep 0.1; done
		local stop=$SECONDS
		kill -INT $bp 2>/dev/null
		wait $bp
		local stopped=$((SECONDS - stop))
		wait $fp
		local rc=$?
		local count=$(sed -nE 's/^@n: ([0-9]+)/\1/p' "$bo")
		if [ "$count" = "$n" ] && grep -qx "evaluated $n" "$fo" && grep -qx detached "$fo" && [ $rc = 0 ]; then
			pass "$name"
		else
			fail "$name" "count '$count', fire rc $rc, bpftrace stopped $stopped s after SIGINT: $(tr '\n' ' ' <"$fo") $(grep -v RLIMIT "$bo" | tr '\n' ' ' | cut -c1-300)"
		fi
	}
	bpf_run bpftrace_by_path_counts_exactly_and_detaches 1234 \
		-e "BEGIN { printf(\"ready\n\"); } usdt:$FIRE:tally_test:fire { @n = count(); }"
	bpf_run bpftrace_by_pid_counts_exactly_and_detaches 777 -p @PID@ \
		-e "BEGIN { printf(\"ready\n\"); } usdt:$FIRE:tally_test:fire { @n = count(); }"
	# bpftrace's arg0 is the evaluated side-effect argument: the sum of 0..n-1.
	rm -f "$TMP/go.sum"
	"$FIRE" 100 wait "$TMP/go.sum" >"$TMP/fire.sum" &
	fp=$!
	timeout 120 bpftrace -e "BEGIN { printf(\"ready\n\"); } usdt:$FIRE:tally_test:fire { @s = sum(arg0); @t = sum(arg1); }" >"$TMP/bt.sum" 2>&1 &
	bp=$!
	for i in $(seq 600); do grep -q '^ready' "$TMP/bt.sum" && break; sleep 0.1; done
	touch "$TMP/go.sum"
	for i in $(seq 600); do grep -q '^fired' "$TMP/fire.sum" && break; sleep 0.1; done
	kill -INT $bp; wait $bp; wait $fp
	grep -qx '@s: 4950' "$TMP/bt.sum" && grep -qx '@t: 14850' "$TMP/bt.sum" \
		&& pass bpftrace_reads_tracepoint_arguments \
		|| fail bpftrace_reads_tracepoint_arguments "$(grep '^@' "$TMP/bt.sum" | tr '\n' ' ')"
fi

# tally itself, as a command and on a running process, with the kernel's semaphore
# handling and with the /proc/PID/mem fallback.
out=$("$TALLY" probes count 'tally_test:fire' -- "$FIRE" 500 2>&1)
[ "$out" = $'evaluated 500\ntally_test:fire 500' ] && pass tally_count_command_evaluates_args \
	|| fail tally_count_command_evaluates_args "$out"
out=$(TALLY_PROBES_NO_REFCTR=1 "$TALLY" probes count 'tally_test:fire' -- "$FIRE" 300 2>&1)
grep -qx 'evaluated 300' <<<"$out" && grep -qx 'tally_test:fire 300' <<<"$out" &&
	grep -q 'raising them through /proc/PID/mem' <<<"$out" \
	&& pass tally_count_fallback_semaphore_command || fail tally_count_fallback_semaphore_command "$out"
for mode in refctr fallback; do
	env=(); [ $mode = fallback ] && env=(TALLY_PROBES_NO_REFCTR=1)
	# The program fires once tally says it counts: the kernel raises the semaphore before
	# it writes the breakpoint, so a program that fired as soon as it saw the semaphore
	# could run past the probe (CI saw 0 of 400 counted under ASan).
	rm -f "$TMP/go.p"
	"$FIRE" 400 wait "$TMP/go.p" >"$TMP/fire.p" 2>&1 &
	fp=$!
	until_exec $fp "$FIRE"
	# Stopped with SIGINT once the program has fired, not after a fixed time: attaching
	# can take seconds on a loaded machine.
	env "${env[@]}" "$TALLY" probes count 'tally_test:fire' -p $fp --duration 120 \
		>"$TMP/count.out" 2>&1 &
	tp=$!
	for i in $(seq 1200); do grep -q '^tally: counting' "$TMP/count.out" && break; sleep 0.1; done
	touch "$TMP/go.p"
	for i in $(seq 1200); do grep -q '^fired' "$TMP/fire.p" && break; sleep 0.1; done
	kill -INT $tp
	wait $tp
	out=$(cat "$TMP/count.out")
	wait $fp
	rc=$?
	grep -qx 'tally_test:fire 400' <<<"$out" && grep -qx 'evaluated 400' "$TMP/fire.p" &&
		grep -qx detached "$TMP/fire.p" && [ $rc = 0 ] \
		&& pass "tally_count_pid_counts_and_lowers_semaphore_$mode" \
		|| fail "tally_count_pid_counts_and_lowers_semaphore_$mode" "$out / $(tr '\n' ' ' <"$TMP/fire.p") rc $rc"
done
