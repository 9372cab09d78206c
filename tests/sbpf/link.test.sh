# `tally sbpf link` of two objects (tests/sbpf/link/main.c and lib.c), as sBPF v3 and as v0:
# readelf and llvm-readobj read the files; LiteSVM (agave's loader and VM) loads and runs
# both and agrees with tally on the result, the CU, the logs and the accounts; the DWARF
# carried into each file gives llvm-symbolizer the objects' own lines and tally symbolize
# llvm-symbolizer's inline frames (link/dwarf_check.py); tally's profile of either file
# has the inlined frames. Then the link's refusals: a symbol defined twice, one defined
# nowhere, a v0 section name agave's loader cannot read.
. tests/lib.sh
. tests/solana/litesvm/oracle.sh

if ! command -v clang >/dev/null || ! command -v llvm-symbolizer >/dev/null; then
	skip sbpf_link "clang or llvm-symbolizer not installed"
	exit 0
fi
SRC="$ROOT/tests/sbpf/link"
PROG=42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5

# v3 objects with DWARF 5 (clang's default); v0 needs BPF v2 (no jmp32) and DWARF 4 (v0's
# loader reads section names of at most 16 bytes: no .debug_str_offsets).
for f in main lib; do
	clang -target bpf -mcpu=v3 -O2 -g -c "$SRC/$f.c" -o "$TMP/${f}3.o" &&
		clang -target bpf -mcpu=v2 -O2 -gdwarf-4 -c "$SRC/$f.c" -o "$TMP/${f}0.o" ||
		{ fail sbpf_link_build "clang failed"; exit 0; }
done
"$TALLY" sbpf link "$TMP/main3.o" "$TMP/lib3.o" -o "$TMP/p3.so" &&
	"$TALLY" sbpf link --version v0 "$TMP/main0.o" "$TMP/lib0.o" -o "$TMP/p0.so" &&
	pass sbpf_link_two_objects || { fail sbpf_link_two_objects "link failed"; exit 0; }

for v in 3 0; do
	so="$TMP/p$v.so"
	out=$(readelf -aW "$so" 2>&1 >/dev/null; llvm-readobj --all "$so" 2>&1 >/dev/null)
	[ -z "$out" ] && readelf -hW "$so" | grep -q 'DYN (Shared object file)' &&
		pass "sbpf_link_v${v}_readelf" || fail "sbpf_link_v${v}_readelf" "$out"
	check "sbpf_link_v${v}_dwarf" python3 "$SRC/dwarf_check.py" "$TALLY" "$so" "$TMP/main$v.o" "$TMP/lib$v.o"
	out=$(llvm-dwarfdump --verify "$so" 2>&1)
	[[ "$out" == *"No errors."* ]] && pass "sbpf_link_v${v}_dwarfdump_verify" ||
		fail "sbpf_link_v${v}_dwarfdump_verify" "$(tail -3 <<<"$out")"
done

# v0 has what agave's loader relocates: lddw of the other object's global (R_BPF_64_64
# against its .dynsym entry), data words of the string table (R_BPF_64_RELATIVE) and the
# syscalls (R_BPF_64_32 against undefined .dynsym entries).
rel=$(readelf -rW "$TMP/p0.so")
[[ "$rel" == *"R_BPF_INSN_64"*"table"* && "$rel" == *"R_BPF_DATA_8"* &&
	"$rel" == *"R_BPF_INSN_DISP32"*"sol_log_"* ]] && ! readelf -rW "$TMP/p3.so" | grep -q R_BPF &&
	pass sbpf_link_v0_relocations || fail sbpf_link_v0_relocations "$rel"

# The profile of the linked files has the inline frames DWARF alone knows (step, mix).
printf '\0\0\0\0\0\0\0\0\3\0\0\0\0\0\0\0abc' >"$TMP/in.bin"
for v in 3 0; do
	"$TALLY" sbpf run "$TMP/p$v.so" --input "$TMP/in.bin" --folded "$TMP/p$v.folded" >/dev/null
done
grep -qx 'entrypoint;checksum;step [0-9]*' "$TMP/p3.folded" && grep -qx 'entrypoint;mix [0-9]*' "$TMP/p3.folded" &&
	cmp -s "$TMP/p3.folded" "$TMP/p0.folded" && pass sbpf_link_profile_inline ||
	fail sbpf_link_profile_inline "$(cat "$TMP/p3.folded" "$TMP/p0.folded")"

if litesvm_ready sbpf_link_litesvm; then
	for v in 3 0; do
		for data in "" 00 68656c6c6f 0102030405060708090a; do
			printf '{"programs": [{"id": "%s", "elf": "%s"}], "instruction": {"program_id": "%s", "data": "%s"}}\n' \
				$PROG "$TMP/p$v.so" $PROG "$data" >"$TMP/fx.json"
			same_as_litesvm "sbpf_link_v${v}_litesvm_${data:-empty}" "$TMP/fx.json"
		done
	done
fi

expect_err sbpf_link_duplicate 1 "tally: $TMP/lib3.o: duplicate symbol \"checksum\" (also defined in $TMP/lib3.o)" \
	"$TALLY" sbpf link "$TMP/main3.o" "$TMP/lib3.o" "$TMP/lib3.o" -o "$TMP/dup.so"
expect_err sbpf_link_undefined 1 "tally: $TMP/main3.o: UnresolvedSymbol(\"checksum\"" \
	"$TALLY" sbpf link "$TMP/main3.o" -o "$TMP/undef.so"
printf 'extern const unsigned long missing[2];\nunsigned long entrypoint(void) { return missing[1]; }\n' >"$TMP/data.c"
clang -target bpf -mcpu=v2 -O2 -c "$TMP/data.c" -o "$TMP/data.o"
expect_err sbpf_link_undefined_data 1 "tally: $TMP/data.o: UnresolvedSymbol(\"missing\"" \
	"$TALLY" sbpf link --version v0 "$TMP/data.o" -o "$TMP/undef.so"
clang -target bpf -mcpu=v2 -O2 -g -c "$SRC/lib.c" -o "$TMP/lib5.o"
expect_err sbpf_link_v0_long_name 1 "tally: $TMP/lib5.o: .debug_str_offsets: v0's loader reads section names of at most 16 bytes" \
	"$TALLY" sbpf link --version v0 "$TMP/main0.o" "$TMP/lib5.o" -o "$TMP/long.so"
"$TALLY" sbpf link --version v0 --no-debug "$TMP/main0.o" "$TMP/lib5.o" -o "$TMP/nodebug.so" &&
	! readelf -SW "$TMP/nodebug.so" | grep -q debug_ && pass sbpf_link_no_debug ||
	fail sbpf_link_no_debug "$(readelf -SW "$TMP/nodebug.so" 2>&1 | grep debug_)"
[ ! -e "$TMP/dup.so" ] && [ ! -e "$TMP/undef.so" ] && [ ! -e "$TMP/long.so" ] &&
	pass sbpf_link_failure_writes_nothing || fail sbpf_link_failure_writes_nothing "$(ls "$TMP")"

# A weak definition gives way to the strong one, in whichever object order, and two weak
# ones are no duplicate. The program then runs as the strong definition's (p3.so above,
# which LiteSVM ran).
printf 'typedef unsigned long u64;\n__attribute__((weak)) u64 checksum(const unsigned char *p, u64 n) { return n + 7; }\n' >"$TMP/weak.c"
clang -target bpf -mcpu=v3 -O2 -c "$TMP/weak.c" -o "$TMP/weak.o"
"$TALLY" sbpf run "$TMP/p3.so" --input "$TMP/in.bin" >"$TMP/strong.out"
"$TALLY" sbpf link "$TMP/weak.o" "$TMP/main3.o" "$TMP/lib3.o" -o "$TMP/w1.so" &&
	"$TALLY" sbpf link "$TMP/main3.o" "$TMP/lib3.o" "$TMP/weak.o" -o "$TMP/w2.so" &&
	"$TALLY" sbpf run "$TMP/w1.so" --input "$TMP/in.bin" | cmp -s - "$TMP/strong.out" &&
	"$TALLY" sbpf run "$TMP/w2.so" --input "$TMP/in.bin" | cmp -s - "$TMP/strong.out" &&
	"$TALLY" sbpf link "$TMP/main3.o" "$TMP/weak.o" "$TMP/weak.o" "$TMP/lib3.o" -o "$TMP/w3.so" &&
	"$TALLY" sbpf run "$TMP/w3.so" --input "$TMP/in.bin" | cmp -s - "$TMP/strong.out" &&
	pass sbpf_link_weak || fail sbpf_link_weak "$(cat "$TMP/strong.out")"
