#!/bin/bash
# Symbolizer benchmark (issue 2 section 7): tally, llvm-symbolizer --inlining, addr2line -f -i
# and eu-addr2line -f -i, side by side on the same 20,000-address batches of
#   (a) libc.so.6 with libc6-dbg's separate debug file (zlib-compressed, found by build-id),
#   (b) /usr/bin/python3.11d (python3.11-dbg: its DWARF 5 is inside the binary),
#   (c) a generated program (bench/symbolize/gen-large.py, 4,000 functions each built from
#       nested static inline helpers; clang -O2 -gdwarf-5, lld: no .debug_aranges).
# Per batch and tool: wall time of the whole process (start-up, decompression and output
# included; best of REPS runs, timed around the command alone), its CPU time (user + sys:
# steadier than wall time on a busy machine), addresses/s (from wall time), peak RSS (GNU
# time %M, one more run), the latency of one
# address (a whole process for a single address, median of 5), and how many addresses got a
# file:line. Prints a Markdown table and tally's standing against the targets.
#
# Figures of five runs and where tally's time goes: bench/README.md (December 2026: libc
# 3.0-4.3x llvm-symbolizer's CPU time, python3.11d 4.5-6.4x, generated 4.5-6.8x).
#
# usage: bench/symbolize/run.sh [BUILD_DIR]     (default build; TALLY=... overrides the binary)
#        REPS=3 N=20000 EU_TIMEOUT=300 TOOLS="tally llvm-symbolizer ..." (environment)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TALLY=${TALLY:-$ROOT/${1:-build}/tally}
REPS=${REPS:-3}
N=${N:-20000}
EU_TIMEOUT=${EU_TIMEOUT:-300}
WORK=$ROOT/build/bench/symbolize
mkdir -p "$WORK"
# tally's debug cache off for the table: llvm-symbolizer inflates libc6-dbg's compressed
# sections on every run, and so must tally here. The last line measures tally with it.
export TALLY_CACHE=off
. "$ROOT/tests/symbolize/addrs.sh"

die() { echo "bench: $*" >&2; exit 1; }
for t in llvm-symbolizer addr2line eu-addr2line objdump /usr/bin/time clang ld.lld python3; do
	command -v "$t" >/dev/null || die "$t missing (scripts/install-deps.sh test)"
done
have_tally=1
"$TALLY" help symbolize >/dev/null 2>&1 || { have_tally=0; echo "bench: $TALLY has no symbolize command: tally left out" >&2; }

# The generated program, rebuilt only when the generator changed.
large_program() {
	local dir=$WORK/large bin=$WORK/large/large
	if [ -x "$bin" ] && [ "$bin" -nt "$ROOT/bench/symbolize/gen-large.py" ]; then
		echo "$bin"
		return
	fi
	python3 "$ROOT/bench/symbolize/gen-large.py" "$dir/src" >&2 || die "gen-large.py failed"
	echo "bench: building the generated program (2 jobs)..." >&2
	(cd "$dir/src" && printf "%s\n" unit*.c main.c |
		xargs -P2 -I{} nice clang -O2 -g -gdwarf-5 -c {} -o {}.o) >&2 || die "compiling the generated program failed"
	clang -fuse-ld=lld "$dir"/src/*.o -o "$bin.tmp" && mv "$bin.tmp" "$bin" || die "linking the generated program failed"
	echo "$bin"
}

# batch FILE NAME: N addresses, every k-th instruction of .text with k chosen to give N.
batch() {
	local file=$1 out=$WORK/$2.addrs total every
	if [ ! -s "$out" ] || [ "$file" -nt "$out" ]; then
		total=$(text_addrs "$file" | wc -l)
		every=$((total / N))
		[ $every -ge 1 ] || every=1
		text_addrs "$file" objdump $every | head -n "$N" >"$out"
	fi
	echo "$out"
}

# run TOOL FILE < addresses > output: the command line of each tool.
run() {
	local tool=$1 file=$2
	case "$tool" in
	tally) "$TALLY" symbolize -e "$file" ;;
	llvm-symbolizer) llvm-symbolizer --inlining --obj="$file" ;;
	addr2line) addr2line -a -f -i -e "$file" ;;
	eu-addr2line) timeout "$EU_TIMEOUT" eu-addr2line -a -f -i -e "$file" ;;
	esac
}

# resolved TOOL OUTPUT: addresses whose innermost frame has a file:line (out of N). tally and
# llvm-symbolizer end each address with a blank line; the GNU tools run with -a, which
# prints each address before its frames.
resolved() {
	case "$1" in
	tally | llvm-symbolizer)
		awk 'BEGIN { RS = ""; FS = "\n" } $2 !~ /^\?\?:/ { r++ } END { print r + 0 }' "$2" ;;
	*)
		awk '/^0x[0-9a-f]+$/ { getline; getline; if ($0 !~ /^\?\?:/) r++ } END { print r + 0 }' "$2" ;;
	esac
}

# cpu_in FILE: seconds of CPU (user + sys) of the shell's finished children, from what the
# times builtin wrote to FILE (run in the shell itself: a subshell has no such children).
cpu_in() {
	sed -n 2p "$1" | tr 'ms' '  ' | awk '{ print $1 * 60 + $2 + $3 * 60 + $4 }'
}

# measure TOOL FILE ADDRS OUT: prints "seconds exit_status cpu_seconds" for one run of the
# tool alone, timed around it, its output left in OUT (its errors in $WORK/err.TOOL). (Wrapped in GNU time and bash -c, each run took 3-5 ms more, for
# every tool: a sixth of a fast run.)
measure() {
	local t0 t1 rc
	times >"$WORK/times0"
	t0=$EPOCHREALTIME
	run "$1" "$2" <"$3" >"$4" 2>"$WORK/err.$1"
	rc=$?
	t1=$EPOCHREALTIME
	times >"$WORK/times1"
	awk -v a="$t0" -v b="$t1" -v rc="$rc" -v c0="$(cpu_in "$WORK/times0")" \
		-v c1="$(cpu_in "$WORK/times1")" 'BEGIN { printf "%.4f %d %.3f\n", b - a, rc, c1 - c0 }'
}

# peak_rss TOOL FILE ADDRS: the peak RSS (KiB) of one run, from GNU time.
peak_rss() {
	/usr/bin/time -f '%M' -o "$WORK/rss" bash -c "$(declare -f run); TALLY='$TALLY' EU_TIMEOUT=$EU_TIMEOUT run $1 '$2'" \
		<"$3" >/dev/null 2>&1
	grep -E '^[0-9]+$' "$WORK/rss" | tail -1
}

libc=/lib/x86_64-linux-gnu/libc.so.6
python=/usr/bin/python3.11d
[ -e "$python" ] || die "$python missing (package python3.11-dbg)"
large=$(large_program)
batches=("libc.so.6 + libc6-dbg:$libc:libc" "python3.11d:$python:python" "generated ($(basename "$large")):$large:large")
tools=(llvm-symbolizer addr2line eu-addr2line)
[ $have_tally = 1 ] && tools=(tally "${tools[@]}")
# TOOLS="tally llvm-symbolizer" (say) runs only those: the GNU tools take minutes.
[ -n "${TOOLS:-}" ] && read -r -a tools <<<"$TOOLS"

load=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n) }' &&
	echo "bench: warning: load average $load on $(nproc) cores: wall times are inflated, compare CPU times" >&2
echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); llvm-symbolizer $(llvm-symbolizer --version | sed -n 's/.*LLVM version //p'), $(addr2line --version | head -1), $(eu-addr2line --version | head -1)" >&2
echo
echo "| batch | tool | wall (s) | CPU (s) | addresses/s | peak RSS (MiB) | 1 address (ms) | with file:line |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
declare -A rate rss lat cpu
for b in "${batches[@]}"; do
	IFS=: read -r label file key <<<"$b"
	addrs=$(batch "$file" "$key")
	n=$(wc -l <"$addrs")
	head -1 "$addrs" >"$WORK/one.addrs"
	# The tools take turns, run after run, so that a change in the machine's load falls on
	# all of them alike.
	declare -A wall_best=() cpu_best=() exit_status=() one_times=()
	for ((i = 0; i < REPS; i++)); do
		for tool in "${tools[@]}"; do
			# eu-addr2line takes minutes per batch: one run says enough
			[ "$tool" = eu-addr2line ] && [ $i -gt 0 ] && continue
			measure "$tool" "$file" "$addrs" "$WORK/out.$tool" >"$WORK/m"
			read -r s rc c <"$WORK/m"
			[ "$rc" -ne 0 ] && exit_status[$tool]=$rc
			if [ -z "${wall_best[$tool]:-}" ] || awk -v a="$s" -v b="${wall_best[$tool]}" 'BEGIN { exit !(a < b) }'; then
				wall_best[$tool]=$s cpu_best[$tool]=$c
			fi
		done
	done
	for ((i = 0; i < 5; i++)); do
		for tool in "${tools[@]}"; do
			measure "$tool" "$file" "$WORK/one.addrs" "$WORK/out.one" >"$WORK/m"
			read -r s _ _ <"$WORK/m"
			one_times[$tool]="${one_times[$tool]:-} $s"
		done
	done
	for tool in "${tools[@]}"; do
		got=$(resolved "$tool" "$WORK/out.$tool")
		bestrss=$(peak_rss "$tool" "$file" "$addrs")
		note='' st=${exit_status[$tool]:-0}
		if [ "$st" = 124 ]; then
			note=" (timed out after ${EU_TIMEOUT}s)"
		elif [ "$st" -ne 0 ]; then
			note=" (exit $st"
			[ -s "$WORK/err.$tool" ] && note="$note: $(head -1 "$WORK/err.$tool" | cut -c1-60)"
			readelf -S "$file" | grep -q '\.debug_aranges' || note="$note; the file has no .debug_aranges"
			note="$note)"
		fi
		# shellcheck disable=SC2086 # the list splits into its times
		med=$(printf '%s\n' ${one_times[$tool]} | sort -n | sed -n 3p)
		r=$(awk -v n="$n" -v s="${wall_best[$tool]}" 'BEGIN { printf "%.0f", n / s }')
		rate[$key.$tool]=$r rss[$key.$tool]=$bestrss lat[$key.$tool]=$med cpu[$key.$tool]=${cpu_best[$tool]}
		printf '| %s | %s | %.3f | %.3f | %s | %.1f | %.1f | %s%s |\n' "$label" "$tool" "${wall_best[$tool]}" \
			"${cpu_best[$tool]}" "$r" "$(awk -v k="$bestrss" 'BEGIN { print k / 1024 }')" \
			"$(awk -v s="$med" 'BEGIN { print s * 1000 }')" \
			"$(awk -v g="$got" -v n="$n" 'BEGIN { printf "%.1f%%", 100 * g / n }')" "$note"
	done
	unset wall_best cpu_best exit_status one_times
done
echo
echo "bench: load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# What starting any process costs here (one address is a whole process): /bin/true, timed
# as the tools are, median of 5. On the shared virtual machine it was 3 ms of the 10.
: >"$WORK/empty.addrs"
for ((i = 0; i < 5; i++)); do
	t0=$EPOCHREALTIME
	/bin/true <"$WORK/empty.addrs"
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) * 1000 }'
done | sort -n | sed -n 3p | awk '{ printf "bench: a process that does nothing (/bin/true) takes %.1f ms here\n", $1 }' >&2

[ $have_tally = 1 ] || exit 0
# The targets are ratios to llvm-symbolizer: without it among TOOLS there is nothing to say.
if [ -z "${rate[libc.llvm-symbolizer]:-}" ]; then
	echo "bench: llvm-symbolizer not among TOOLS: no targets to compare" >&2
	exit 0
fi
echo
echo "Targets (issue 2 section 7): >= 5x llvm-symbolizer's addresses/s, one address < 10 ms, peak RSS <= llvm-symbolizer's."
echo
for b in "${batches[@]}"; do
	IFS=: read -r label _ key <<<"$b"
	awk -v l="$label" -v tr="${rate[$key.tally]}" -v lr="${rate[$key.llvm-symbolizer]}" \
		-v tm="${rss[$key.tally]}" -v lm="${rss[$key.llvm-symbolizer]}" -v tl="${lat[$key.tally]}" \
		-v tc="${cpu[$key.tally]}" -v lc="${cpu[$key.llvm-symbolizer]}" 'BEGIN {
		x = tr / lr
		printf "- %s: %.1fx the throughput (%s; %s in CPU time), %.1f ms for one address (%s), RSS %.0f%% of llvm-symbolizer'"'"'s (%s)\n",
			l, x, (x >= 5 ? "met" : "NOT met"), (tc > 0 ? sprintf("%.1fx", lc / tc) : "too small to measure"),
			tl * 1000, (tl < 0.010 ? "met" : "NOT met"), 100 * tm / lm, (tm <= lm ? "met" : "NOT met") }'
done

# The libc batch again with the debug cache (the default outside this script) filled by a
# first run: the decompressed copy of libc6-dbg's file is read instead.
export TALLY_CACHE=$WORK/cache
addrs=$(batch "$libc" libc)
head -1 "$addrs" >"$WORK/one.addrs"
measure tally "$libc" "$addrs" "$WORK/out.cached" >/dev/null
best=''
for ((i = 0; i < REPS; i++)); do
	read -r s _ _ < <(measure tally "$libc" "$addrs" "$WORK/out.cached")
	[ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$s
done
lats=()
for ((i = 0; i < 5; i++)); do
	read -r s _ _ < <(measure tally "$libc" "$WORK/one.addrs" "$WORK/out.one")
	lats+=("$s")
done
awk -v s="$best" -v n="$(wc -l <"$addrs")" -v lr="${rate[libc.llvm-symbolizer]}" \
	-v one="$(printf '%s\n' "${lats[@]}" | sort -n | sed -n 3p)" 'BEGIN {
	printf "- libc.so.6 with tally'"'"'s debug cache filled: %.3f s, %.1fx llvm-symbolizer'"'"'s throughput, %.1f ms for one address\n",
		s, n / s / lr, one * 1000 }'
