#!/bin/bash
# Every output tally makes of a few recordings (native; Python, Node's JIT code through a
# perf map and a jitdump, an agent's VM frames where those are installed) (text report, --tree, --threads,
# folded, pprof, speedscope, Firefox, SVG flame graph, text and HTML annotation), to show
# with `diff -r` that a change leaves them byte-identical. The programs are built and
# recorded into OUT_DIR only when their recordings are not there yet (tally record; perf
# record --call-graph dwarf where perf works), so that a second build reads the same files:
#   bench/outputs.sh OLD/tally DIR; cp -a DIR DIR.old; bench/outputs.sh NEW/tally DIR;
#   diff -r DIR.old DIR
# Usage: bench/outputs.sh TALLY OUT_DIR
set -eu
cd "$(dirname "$0")/.."
tally=$(realpath "$1")
out=$2
mkdir -p "$out/bin" "$out/rec"

# build NAME SOURCE: the program, once
build() {
	[ -x "$out/bin/$1" ] || gcc -O2 -g -pthread -o "$out/bin/$1" "$2"
}
# record NAME TOOL-ARGS... -- CMD...: a recording, once; its log and status beside it
record() {
	local name=$1 rc=0
	shift
	[ -f "$out/rec/$name.data" ] && return 0
	"$@" >"$out/rec/$name.log" 2>&1 || rc=$?
	echo "exit $rc" >>"$out/rec/$name.log"
}
# run NAME CMD...: one output's stdout and stderr, and its exit status
run() {
	local name=$1 rc=0
	shift
	"$@" >"$out/$name" 2>&1 || rc=$?
	echo "exit $rc" >>"$out/$name"
}

build inline_chain examples/inline_chain.c
build deep tests/record/deep.c
build threads tests/record/offcpu_prog.c
record inline "$tally" record -F 999 -o "$out/rec/inline.data" -- "$out/bin/inline_chain" 30000000
record deep "$tally" record -F 999 -o "$out/rec/deep.data" -- "$out/bin/deep" 300
record deep_fp "$tally" record -F 999 --call-graph fp -o "$out/rec/deep_fp.data" -- "$out/bin/deep" 300
record threads "$tally" record -F 999 --off-cpu -o "$out/rec/threads.data" -- \
	"$out/bin/threads" threads 300
if perf record -q -e cpu-clock:u -o "$out/rec/probe" -- true >/dev/null 2>&1; then
	record perf_deep perf record -q -e cpu-clock:u -F 999 --call-graph dwarf \
		-o "$out/rec/perf_deep.data" -- "$out/bin/deep" 300
fi
rm -f "$out/rec/probe"
# The frame sources: CPython's frames, Node's perf map and jitdump, mixed mode's VM frames.
if [ -x /usr/bin/python3.11 ]; then
	record python "$tally" record -F 999 -o "$out/rec/python.data" -- /usr/bin/python3.11 -c \
		'def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
for _ in range(3): f(27)'
fi
if command -v node >/dev/null; then
	js='function f(n) { return n < 2 ? n : f(n - 1) + f(n - 2); } for (let i = 0; i < 20; i++) f(27);'
	record node_map "$tally" record -F 999 -o "$out/rec/node_map.data" -- node --perf-basic-prof -e "$js"
	record node_dump "$tally" record -F 999 -o "$out/rec/node_dump.data" -- \
		node --perf-prof --interpreted-frames-native-stack -e "$js"
fi
if [ ! -x "$out/bin/stackvm" ]; then
	cc -std=gnu11 -O2 -g -I include -o "$out/bin/stackvm" examples/stackvm.c \
		"$(dirname "$tally")/libtally.a" $(sed -n "s/^LIBS := //p" Makefile)
fi
mkdir -p "$out/rec/stackvm.data.jit" # where the agent writes its registry
record stackvm "$tally" record -F 1999 -o "$out/rec/stackvm.data" -- "$out/bin/stackvm" -n 1500 \
	--helper --mixed "$out/rec/stackvm.data.jit"

for data in "$out"/rec/*.data; do
	r=$(basename "${data%.data}")
	run "$r.report.txt" "$tally" report "$data"
	run "$r.tree.txt" "$tally" report --tree "$data"
	run "$r.threads.txt" "$tally" report --threads "$data"
	for f in folded pprof speedscope firefox; do
		run "$r.$f.log" "$tally" export -f "$f" -o "$out/$r.$f" "$data"
	done
	run "$r.folded-threads.log" "$tally" export -f folded --threads --kinds \
		-o "$out/$r.folded-threads" "$data"
	run "$r.svg.log" "$tally" flamegraph -o "$out/$r.svg" "$data"
	run "$r.annotate.txt" "$tally" annotate --color never "$data"
	run "$r.annotate-main.txt" "$tally" annotate --color never --function main "$data"
	run "$r.annotate.log" "$tally" annotate --html -o "$out/$r.annotate.html" "$data"
done
