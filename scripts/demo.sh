#!/bin/sh
# make demo: builds the bundled example and symbolizes the instructions of its hot
# function, showing the inline frames a profiler needs. (The native recorder, which will
# record it and draw a flame graph, is not there yet.)
set -eu
build=${1:-build}
cc=$(command -v clang || echo cc)
"$cc" -O2 -g examples/inline_chain.c -o "$build/inline_chain"
echo "== $build/tally $(${build}/tally --version | cut -d' ' -f2): the hot function of examples/inline_chain.c"
echo "== (each address: innermost inline frame first, then the functions it is inlined into)"
# Every instruction of compute(), then the two with the deepest inline chains.
objdump -d --no-show-raw-insn "$build/inline_chain" |
	awk '/<compute>:/ { on = 1; next } on && /^$/ { exit } on { sub(":", "", $1); print "0x" $1 }' \
	>"$build/demo-addrs"
"$build/tally" symbolize -e "$build/inline_chain" --json <"$build/demo-addrs" |
	awk -F'"function":' '{ print NF - 1, $0 }' | sort -s -k1,1nr | head -n 2 |
	sed 's/.*"address":"\([^"]*\)".*/\1/' | while read -r a; do
		echo
		echo "-- $a"
		"$build/tally" symbolize -e "$build/inline_chain" "$a" | sed '/^$/d'
	done
