# Separate debug files, against llvm-symbolizer given the same files: a corpus binary's
# DWARF moved into its own file (objcopy --only-keep-debug, the binary keeping its .symtab),
# found by build-id under --debug-dir (llvm-symbolizer --debug-file-directory) or by
# .gnu_debuglink next to the binary; a debuglink whose CRC does not match is not followed
# (both tools then fall back to the symbol table). The split files also agree with the
# original on every address that has DWARF (checked against llvm-symbolizer's output for
# the original, which adds only STT_FILE names like crtstuff.c for code without DWARF).
. tests/lib.sh
. tests/symbolize/addrs.sh
. tests/symbolize/tool.sh

OUT="$CORPUS/symbolize"
if ! notes=$(tests/symbolize/build-corpus.sh "$OUT" 2>&1); then
	fail corpus_builds "$(tail -3 <<<"$notes")"
	exit 0
fi
if ! tool_ready; then
	skip symbolize_debug_files "tally has no symbolize command"
	exit 0
fi

# compare NAME FILE ORACLE_OUTPUT [TOOL ARGS...]
compare() {
	local name=$1 file=$2 want=$3 report
	shift 3
	if ! tool_symbolize "$file" "$@" <"$TMP/addrs" >"$TMP/$name.got" 2>"$TMP/$name.err"; then
		fail "$name" "exit $?: $(head -3 "$TMP/$name.err" | tr '\n' ' ')"
	elif report=$(python3 tests/symbolize/compare.py llvm "$TMP/addrs" "$want" "$TMP/$name.got" \
		--name "$name" --examples 2); then
		head -1 <<<"$report"
		pass "$name"
	else
		printf '%s\n' "$report" | head -30
		fail "$name" "$(head -1 <<<"$report")"
	fi
}

for base in gcc-O2-dw5-bfd-pie clang-O2-dw5-lld-pie; do
	orig="$OUT/$base"
	text_addrs "$orig" >"$TMP/addrs"
	llvm-symbolizer --inlining --obj="$orig" <"$TMP/addrs" >"$TMP/$base.want"
	id=$(readelf -n "$orig" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')

	# By build-id, under a debug directory given on the command line.
	mkdir -p "$TMP/dbg/.build-id/${id:0:2}" "$TMP/bid"
	objcopy --only-keep-debug "$orig" "$TMP/dbg/.build-id/${id:0:2}/${id:2}.debug"
	objcopy --strip-debug "$orig" "$TMP/bid/$base"
	llvm-symbolizer --inlining --obj="$TMP/bid/$base" --debug-file-directory="$TMP/dbg" \
		<"$TMP/addrs" >"$TMP/bid.want"
	compare "build_id_debug_dir_$base" "$TMP/bid/$base" "$TMP/bid.want" --debug-dir "$TMP/dbg"

	# By .gnu_debuglink, the debug file next to the binary.
	mkdir -p "$TMP/link"
	cp "$TMP/dbg/.build-id/${id:0:2}/${id:2}.debug" "$TMP/link/$base.debug"
	objcopy --strip-debug --add-gnu-debuglink="$TMP/link/$base.debug" "$orig" "$TMP/link/$base"
	llvm-symbolizer --inlining --obj="$TMP/link/$base" <"$TMP/addrs" >"$TMP/link.want"
	compare "debuglink_$base" "$TMP/link/$base" "$TMP/link.want"
	# Guard: the split oracle must really have read the debug file.
	diff <(grep -v ':0:0$' "$TMP/$base.want") <(grep -v ':0:0$' "$TMP/link.want") >/dev/null ||
		fail "oracle_setup_$base" "llvm-symbolizer on the split files differs from the original"
done

# A debuglink whose file has another CRC: both tools must ignore that file.
base=gcc-O2-dw5-bfd-pie
text_addrs "$OUT/$base" >"$TMP/addrs"
mkdir -p "$TMP/crc"
objcopy --only-keep-debug "$OUT/gcc-O2-dw4-bfd-nopie" "$TMP/crc/$base.debug"
objcopy --strip-debug --add-gnu-debuglink="$TMP/link/$base.debug" "$OUT/$base" "$TMP/crc/$base"
llvm-symbolizer --inlining --obj="$TMP/crc/$base" <"$TMP/addrs" >"$TMP/crc.want"
grep -q 'main\.c:[1-9]' "$TMP/crc.want" &&
	fail debuglink_crc_oracle "llvm-symbolizer followed a debuglink with a wrong CRC"
compare debuglink_crc_mismatch_is_ignored "$TMP/crc/$base" "$TMP/crc.want"
