# The reference VM's conformance ELFs (anza-xyz/sbpf tests/elfs): every program gives the
# instruction count and result its INDEX.md lists (taken from the reference's own
# tests/execution.rs), and every rejection case fails with the reference's error.
. tests/lib.sh

DIR="${SBPF_CORPUS:-/work/shared/corpus/sbpf}/conformance"
if [ ! -f "$DIR/INDEX.md" ]; then
	skip sbpf_conformance "no corpus at $DIR"
	exit 0
fi

printf '\001' >"$TMP/input1"

# Rows of the execution table: | file | version | input | count | result |
grep -E '^\| [a-z0-9_]+\.so \|' "$DIR/INDEX.md" | while IFS='|' read -r _ file _ input count result _; do
	file=$(echo $file) input=$(echo $input) count=$(echo $count) result=$(echo $result)
	args=()
	[ "$input" = "[1]" ] && args=(--input "$TMP/input1")
	out=$("$TALLY" sbpf run "$DIR/$file" "${args[@]}" --json 2>&1)
	cu=$(sed -n 's/.*"compute_units": \([0-9]*\).*/\1/p' <<<"$out")
	got=$(sed -n 's/.*"result": "\([A-Za-z]*\)".*/\1/p' <<<"$out")
	case "$result" in
	Err*)
		want=$(sed 's/Err(\(.*\))/\1/' <<<"$result")
		[ "$got" = "$want" ] && [ "$cu" = "$count" ] && pass "sbpf_conformance_$file" ||
			fail "sbpf_conformance_$file" "want $want/$count CU, got: $out"
		;;
	Ok*)
		expr=$(sed 's/^Ok(\([^)]*\)).*/\1/' <<<"$result")
		want=$(printf '%u' $((expr)))
		r0=$(sed -n 's/.*"return_value": \([0-9]*\).*/\1/p' <<<"$out")
		[ "$got" = success ] && [ "$r0" = "$want" ] && [ "$cu" = "$count" ] &&
			pass "sbpf_conformance_$file" ||
			fail "sbpf_conformance_$file" "want Ok($want)/$count CU, got: $out"
		;;
	esac
done

# The loader rejections of tests/elf.rs, with the reference's error names.
reject() {
	local name=$1 want=$2 file=$3
	shift 3
	local err
	err=$("$TALLY" sbpf run "$@" "$file" 2>&1 >/dev/null)
	[ $? -eq 1 ] && [[ "$err" == "tally: $file: $want" ]] &&
		pass "sbpf_reject_$name" || fail "sbpf_reject_$name" "want '$want', got: $err"
}
reject data_section 'WritableSectionNotSupported(".data")' "$DIR/data_section_sbpfv0.so"
reject bss_section 'WritableSectionNotSupported(".bss")' "$DIR/bss_section_sbpfv0.so"
reject program_headers_overflow InvalidProgramHeader "$DIR/program_headers_overflow.so"
reject long_section_name 'FailedToParse(StringTooLong(".bss.__rust_no_a", 16))' \
	"$DIR/long_section_name.so"
reject long_dynamic_symbol_name 'UnknownSymbol(12)' "$DIR/long_dynamic_symbol_name_sbpfv0.so"
reject unresolved_syscall 'UnresolvedSymbol("log", 39, 312)' \
	"$DIR/syscall_reloc_64_32_sbpfv0.so" --reject-broken-elfs

# relative_call_sbpfv0.so with a call immediate patched to leave the text, both ways.
patch_imm() {
	cp "$DIR/relative_call_sbpfv0.so" "$2"
	printf "$3" | dd of="$2" bs=1 seek=$(($1)) conv=notrunc status=none
}
patch_imm 0x164 "$TMP/back.so" '\365\377\377\377'
reject relative_call_backward 'RelativeJumpOutOfBounds(8)' "$TMP/back.so"
patch_imm 0x17c "$TMP/fwd.so" '\005\000\000\000'
reject relative_call_forward 'RelativeJumpOutOfBounds(11)' "$TMP/fwd.so"

# A reserved version in e_flags.
cp "$DIR/strict_header.so" "$TMP/reserved.so"
printf '\377' | dd of="$TMP/reserved.so" bs=1 seek=$((0x30)) conv=notrunc status=none
reject reserved_version UnsupportedSBPFVersion "$TMP/reserved.so"

# The programs with long symbol names load (labels are debug information).
for f in long_symbol_name.so long_symbol_name_sbpfv0.so; do
	out=$("$TALLY" sbpf run "$DIR/$f" --input "$TMP/input1" --json 2>&1)
	[[ "$out" == *'"result": "success"'* ]] && pass "sbpf_loads_$f" || fail "sbpf_loads_$f" "$out"
done
