#!/bin/bash
# Every output of the exact CU profile (pprof, folded, SVG, the HTML and text annotations,
# speedscope, the text report) for the sBPF test programs (built here with clang -target
# bpf), the corpus's real programs with hand-made inputs, and the Solana fixtures of
# tests/solana: run it with two builds and `diff -r` the directories to show that a change
# to the profiler leaves every profile byte-identical (the outputs name OUT_DIR: give both
# runs the same one, and move the first away).
# Usage: bench/sbpf/profiles.sh TALLY OUT_DIR [CORPUS_DIR]
set -eu
cd "$(dirname "$0")/../.."
tally=$(realpath "$1")
out=$2
corpus=${3:-../shared/corpus/sbpf}
mkdir -p "$out/obj" "$out/in" "$out/fx"
# profile NAME ARGS...: one run, every output
profile() {
	local name=$1
	shift
	"$tally" sbpf run "$@" --json -o "$out/$name.pb.gz" --folded "$out/$name.folded" \
		--flamegraph "$out/$name.svg" --annotate "$out/$name.html" >"$out/$name.json" 2>&1 || true
	[ -f "$out/$name.pb.gz" ] || return 0
	"$tally" export -f speedscope -o "$out/$name.speedscope.json" "$out/$name.pb.gz" || true
	"$tally" annotate "$out/$name.pb.gz" >"$out/$name.annotate.txt" 2>&1 || true
	"$tally" report "$out/$name.pb.gz" >"$out/$name.report.txt" 2>&1 || true
}
for src in tests/sbpf/programs/{calls,spin,runtime,isa,sysvar,pda,hash}.c \
	tests/cuprof/profile_progs/{inline,recurse}.c tests/solana/cpi/{caller,callee}.c; do
	o=$out/obj/$(basename "${src%.c}").o
	[ -f "$o" ] || clang -target bpf -mcpu=v3 -O2 -g -c "$src" -o "$o"
done
i=0
for bytes in '\000\000\000\000' '\005\011\003\000' '\007\377\001\000' '\003\200\001\002' \
	'\145\012\000\000' '\006\003\002\000' '\011\007\001\000' '\001\000\012\000' '\004\002\377\000'; do
	i=$((i + 1))
	{ printf "$bytes"; head -c 64 /dev/zero; } >"$out/in/$i"
	for o in "$out"/obj/*.o; do
		profile "$(basename "${o%.o}")_$i" "$o" --input "$out/in/$i"
	done
done
# the real programs: empty data, a UTF-8 memo, bytes that are not UTF-8
input() { printf '\000\000\000\000\000\000\000\000'; printf "$1"'\000\000\000\000\000\000\000'; printf "$2"; head -c 32 /dev/zero; }
input '\000' '' >"$out/in/empty"
input '\005' 'hello' >"$out/in/memo_ok"
input '\002' '\377\376' >"$out/in/memo_bad"
for f in "$corpus"/programs/*.so "$corpus"/dwarf/*.so; do
	for in in empty memo_ok memo_bad; do
		profile "$(basename "${f%.so}")_$in" "$f" --input "$out/in/$in"
	done
done
cp tests/solana/fixtures/*.json "$out/fx/"
ln -sfn "$(realpath "$corpus/programs")" "$out/fx/programs"
for f in "$out"/fx/*.json; do
	profile "fixture_$(basename "${f%.json}")" "$f"
done
rm -rf "$out/fx" "$out/in"
