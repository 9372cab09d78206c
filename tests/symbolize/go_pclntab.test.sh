# Go binaries without symbols or DWARF (go build -ldflags='-s -w', the usual release
# build) are named from Go's own table, .gopclntab (elf/gopclntab.c, symbolize/go.c):
# every instruction of the program's own functions gets the function, file and line that
# `go tool addr2line` gives for the same address of the DWARF build, and the inlined calls
# there that the DWARF build's inlined subroutines give, and a recording of the
# stripped build names the hot functions, with the shares Go's own CPU profile gives
# them, and its stacks complete, in tally's recording and in perf's. The table's layout here is Go 1.18's (go1.19).
. tests/lib.sh
GO_TEST=go_pclntab
. tests/unwind/go/lib.sh

go_build "$TMP/dwarf"
go_build "$TMP/stripped" -ldflags='-s -w'

# The stripped build has nothing else to name it by, and the same code at the same places.
if readelf -S "$TMP/stripped" | grep -q -e '\.symtab' -e '\.debug_info' ||
	! readelf -S "$TMP/stripped" | grep -q '\.gopclntab'; then
	fail go_pclntab_stripped_build "$(readelf -S "$TMP/stripped" | grep -e symtab -e debug -e pclntab)"
	exit 0
fi
"$TMP/dwarf" -addrs >"$TMP/dwarf.addrs" && "$TMP/stripped" -addrs >"$TMP/stripped.addrs" &&
	cmp -s "$TMP/dwarf.addrs" "$TMP/stripped.addrs" ||
	{ fail go_pclntab_same_layout "$(paste "$TMP/dwarf.addrs" "$TMP/stripped.addrs")"; exit 0; }

# Every instruction of package main. go tool addr2line gives the function an address lies
# in and the innermost line (of the call inlined there, if any): the outermost and the
# innermost of tally's frames (LLVM style, a blank line after each address's frames).
go tool objdump -s '^main\.' "$TMP/dwarf" | awk '$2 ~ /^0x[0-9a-f]+$/ {print $2}' >"$TMP/addrs"
go tool addr2line "$TMP/dwarf" <"$TMP/addrs" >"$TMP/want"
"$TALLY" symbolize -e "$TMP/stripped" <"$TMP/addrs" >"$TMP/got.llvm" 2>"$TMP/err"
awk -v RS= -F '\n' '{loc = $2; sub(/:[0-9]+$/, "", loc); print $(NF - 1); print loc}' \
	"$TMP/got.llvm" >"$TMP/got"
n=$(wc -l <"$TMP/addrs")
[ "$n" -gt 100 ] && cmp -s "$TMP/want" "$TMP/got" &&
	pass "go_pclntab_names_and_lines_equal_go_addr2line_on_dwarf ($n addresses)" ||
	fail go_pclntab_names_and_lines_equal_go_addr2line_on_dwarf "$n addresses; $(diff "$TMP/want" "$TMP/got" | head -6) $(head -2 "$TMP/err")"

# Inlined calls (time.Now in main.work, among others) are frames of their own, with the
# lines of the calls, as the DWARF build's inlined subroutines give them.
"$TALLY" symbolize --output-style=GNU -e "$TMP/dwarf" <"$TMP/addrs" >"$TMP/dwarf.frames"
"$TALLY" symbolize --output-style=GNU -e "$TMP/stripped" <"$TMP/addrs" >"$TMP/stripped.frames"
inl=$(($(wc -l <"$TMP/dwarf.frames") / 2 - n))
[ "$inl" -gt 10 ] && cmp -s "$TMP/dwarf.frames" "$TMP/stripped.frames" &&
	pass "go_pclntab_inline_frames_equal_dwarf_build ($inl inlined frames)" ||
	fail go_pclntab_inline_frames_equal_dwarf_build "$inl inlined frames; $(diff "$TMP/dwarf.frames" "$TMP/stripped.frames" | head -6)"

# A position-independent build keeps the table as .data.rel.ro.gopclntab (go tool addr2line
# cannot read such a build: tally's frames for its DWARF build are the oracle).
go_build "$TMP/pie" -buildmode=pie
go_build "$TMP/pie-stripped" -buildmode=pie -ldflags='-s -w'
go tool objdump -s '^main\.' "$TMP/pie" | awk '$2 ~ /^0x[0-9a-f]+$/ {print $2}' >"$TMP/pie.addrs"
"$TALLY" symbolize --output-style=GNU -e "$TMP/pie" <"$TMP/pie.addrs" >"$TMP/pie.frames"
"$TALLY" symbolize --output-style=GNU -e "$TMP/pie-stripped" <"$TMP/pie.addrs" >"$TMP/pie-stripped.frames"
n=$(wc -l <"$TMP/pie.addrs")
[ "$n" -gt 100 ] && ! grep -q '^??' "$TMP/pie.frames" &&
	cmp -s "$TMP/pie.frames" "$TMP/pie-stripped.frames" &&
	pass "go_pclntab_pie_frames_equal_dwarf_build ($n addresses)" ||
	fail go_pclntab_pie_frames_equal_dwarf_build "$n addresses; $(diff "$TMP/pie.frames" "$TMP/pie-stripped.frames" | head -6)"

# Where the section's name is gone, the symbols runtime.pclntab and runtime.epclntab find
# the table: the DWARF build without its DWARF and with the section renamed (it still runs:
# the runtime finds its table through its own data) gets the stripped build's frames.
objcopy --strip-debug --rename-section .gopclntab=.renamed "$TMP/dwarf" "$TMP/renamed"
"$TALLY" symbolize --output-style=GNU -e "$TMP/renamed" <"$TMP/addrs" >"$TMP/renamed.frames"
cmp -s "$TMP/stripped.frames" "$TMP/renamed.frames" &&
	pass go_pclntab_found_by_its_symbols_where_the_section_name_is_gone ||
	fail go_pclntab_found_by_its_symbols_where_the_section_name_is_gone "$(diff "$TMP/stripped.frames" "$TMP/renamed.frames" | head -6)"

if go_record stripped "$TMP/stripped"; then
	go_complete go_pclntab_stripped_stacks_complete stripped
	# No CFI: Go's SP-delta table finds the callers of the frameless hot functions, which
	# frame pointers skip (main.round).
	go_hot_stacks go_pclntab_stripped_stacks_have_every_frame stripped
	go_shares_agree go_pclntab_stripped_shares_agree_with_runtime_pprof stripped
fi

# perf's own recording of the stripped build (its stack copies, unwound and named by tally
# as its own recordings are): complete stacks with every frame from runtime.goexit down.
if perf record -q -e cpu-clock:u -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	"$TMP/stripped" -seconds 2 >/dev/null 2>"$TMP/perf.err" &&
	"$TALLY" report "$TMP/perf.data" >"$TMP/perf.report" 2>>"$TMP/perf.err" &&
	"$TALLY" export -f folded -o "$TMP/perf.folded" "$TMP/perf.data" 2>>"$TMP/perf.err"; then
	go_complete go_pclntab_perfs_recording_complete perf
	go_hot_stacks go_pclntab_perfs_recording_has_every_frame perf
else
	skip go_pclntab_perfs_recording "perf record: $(head -3 "$TMP/perf.err")"
fi

# A damaged table (its function count past what it holds) is warned of, with the file and
# the offset, and leaves the addresses unnamed.
off=$(readelf -SW "$TMP/stripped" | awk '{for (i = 1; i < NF; i++) if ($i == ".gopclntab") print $(i + 3)}')
cp "$TMP/stripped" "$TMP/damaged"
printf '\377\377\377\377' | dd of="$TMP/damaged" bs=1 seek=$((0x$off + 8)) conv=notrunc status=none
head -1 "$TMP/addrs" >"$TMP/one"
out=$("$TALLY" symbolize --output-style=GNU -e "$TMP/damaged" <"$TMP/one" 2>&1)
rc=$?
[ $rc = 0 ] && grep -q "^tally: warning: .*damaged: .gopclntab at 0x8: more functions than the function table holds" <<<"$out" &&
	grep -q '^??$' <<<"$out" &&
	pass go_pclntab_damaged_table_is_warned_of ||
	fail go_pclntab_damaged_table_is_warned_of "exit $rc: $out"
