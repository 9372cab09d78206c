# Go programs (built with DWARF, go build's default): every goroutine's stack starts in
# runtime.goexit, every thread's in runtime.mstart or runtime.rt0_go, where no CFI marks
# the outermost frame; tally counts such stacks complete (unwind/module.c). The program
# (tests/unwind/go/main.go) starts goroutines from three places and writes its own CPU
# profile (runtime/pprof), the oracle for the shares of its hot functions.
. tests/lib.sh
GO_TEST=go_stacks
. tests/unwind/go/lib.sh

go_build "$TMP/prog"
if go_record dwarf "$TMP/prog"; then
	go_complete go_stacks_end_at_goexit_complete dwarf
	# Every stack through a hot function starts in runtime.goexit, then in one of the
	# wrappers go1.19 makes of the three go statements (main.main.funcN, main.spawn.funcN).
	awk '{n = $NF; sub(/ [0-9]+$/, "")} /main\.hot[ABC]$/ {all += n
			if ($0 ~ /^runtime\.goexit(\.abi0)?;main\.(main|spawn)\.func[0-9]+;main\.work;main\.round;/) ok += n}
		END {printf "%d of %d", ok, all; exit !(all >= 200 && ok >= all * 0.95)}' \
		"$TMP/dwarf.folded" >"$TMP/starts" &&
		pass "go_stacks_hot_functions_start_at_goexit ($(cat "$TMP/starts"))" ||
		fail go_stacks_hot_functions_start_at_goexit "$(cat "$TMP/starts"); $(grep 'main\.hot' "$TMP/dwarf.folded" | sort -k2 -n | tail -2)"
	go_shares_agree go_stacks_shares_agree_with_runtime_pprof dwarf
fi
