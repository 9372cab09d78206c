# The reference VM's conformance ELFs (anza-xyz/sbpf tests/elfs): every program gives the
# instruction count and result its INDEX.md lists (taken from the reference's own
# tests/execution.rs), and every rejection case fails with the reference's error.
. tests/lib.sh

DIR="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/conformance"
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

# The strict (v3) loader, one corrupted byte at a time, as the reference's test_strict_header
# does it: every e_ident byte, e_machine, e_version, e_entry, e_phoff, e_ehsize, e_phentsize
# and e_phnum matter (InvalidFileHeader); e_type and the section fields do not; e_flags
# turns into a reserved version. In both program headers every field but p_align matters.
strict_sweep() {
	local first=$1 last=$2 kind=$3 off err rc bad=""
	for off in $(seq "$first" "$last"); do
		cp "$DIR/strict_header.so" "$TMP/s.so"
		printf '\257' | dd of="$TMP/s.so" bs=1 seek="$off" conv=notrunc status=none
		err=$("$TALLY" sbpf run "$TMP/s.so" 2>&1 >/dev/null); rc=$?
		local want=ok
		if [ "$kind" = header ]; then
			if [ "$off" -lt 16 ] || { [ "$off" -ge 18 ] && [ "$off" -lt 40 ]; } ||
				{ [ "$off" -ge 52 ] && [ "$off" -lt 58 ]; }; then
				want='FailedToParse(InvalidFileHeader)'
			elif [ "$off" -ge 48 ] && [ "$off" -lt 52 ]; then
				want=UnsupportedSBPFVersion
			fi
		elif [ $(((off - 64) % 56)) -lt 48 ]; then
			want=InvalidProgramHeader
		fi
		if [ "$want" = ok ]; then
			[ $rc -eq 0 ] || bad="$bad $off($err)"
		else
			[[ "$err" == "tally: $TMP/s.so: $want" ]] || bad="$bad $off(want $want: $err)"
		fi
	done
	[ -z "$bad" ] && pass "sbpf_strict_$kind" || fail "sbpf_strict_$kind" "${bad:0:300}"
}
strict_sweep 0 63 header
strict_sweep 64 175 program_headers

# Raw bytecode: mov64 r0, 42; exit. Without --raw the same bytes are not an ELF file.
printf '\267\000\000\000\052\000\000\000\225\000\000\000\000\000\000\000' >"$TMP/raw.bin"
out=$("$TALLY" sbpf run --raw --version v0 "$TMP/raw.bin" --json)
[[ "$out" == *'"result": "success", "return_value": 42, "compute_units": 2,'* ]] &&
	pass sbpf_raw_bytecode || fail sbpf_raw_bytecode "$out"
reject not_an_elf 'ValueOutOfBounds' "$TMP/raw.bin"
