# Go programs (built with DWARF, go build's default): every goroutine's stack starts in
# runtime.goexit, every thread's in runtime.mstart or runtime.rt0_go, where no CFI marks
# the outermost frame; tally counts such stacks complete (unwind/module.c). The program
# (tests/unwind/go/main.go) starts goroutines from three places and, in a run of its own,
# writes its own CPU profile (runtime/pprof), the oracle for the shares of its hot functions.
. tests/lib.sh
GO_TEST=go_stacks
. tests/unwind/go/lib.sh

go_build "$TMP/prog"
if go_record dwarf "$TMP/prog"; then
	go_complete go_stacks_end_at_goexit_complete dwarf
	go_hot_stacks go_stacks_hot_functions_start_at_goexit dwarf
	go_shares_agree go_stacks_shares_agree_with_runtime_pprof dwarf
fi
