# C test programs compiled at test time with upstream clang (-target bpf -mcpu=v3 -g -c),
# linked in memory by tally and run in its VM. The oracle is the same source compiled for
# the host (tests/sbpf/programs/native.c defines the syscalls the way the runtime logs
# them): logs and return value must agree line for line. Then the CU meter's edges.
. tests/lib.sh

SRC="$ROOT/tests/sbpf/programs"
OUT="$CORPUS/sbpf"
mkdir -p "$OUT"
if ! command -v clang >/dev/null; then
	skip sbpf_programs "clang not installed"
	exit 0
fi
for p in calls spin runtime isa sysvar pda; do
	if [ ! -f "$OUT/$p.o" ] || [ "$SRC/$p.c" -nt "$OUT/$p.o" ] || [ "$SRC/solana.h" -nt "$OUT/$p.o" ]; then
		clang -target bpf -mcpu=v3 -O2 -g -c "$SRC/$p.c" -o "$OUT/$p.o.tmp" &&
			mv "$OUT/$p.o.tmp" "$OUT/$p.o" || { fail "sbpf_build_$p" "clang -target bpf failed"; exit 0; }
	fi
done
for p in calls isa; do
	if [ ! -x "$OUT/$p.native" ] || [ "$SRC/$p.c" -nt "$OUT/$p.native" ] || [ "$SRC/native.c" -nt "$OUT/$p.native" ]; then
		cc -O1 -o "$OUT/$p.native.tmp" "$SRC/$p.c" "$SRC/native.c" &&
			mv "$OUT/$p.native.tmp" "$OUT/$p.native" || { fail sbpf_build_native "cc failed"; exit 0; }
	fi
done

# Same logs and return value as the host build, for several inputs.
i=0
for bytes in '\000\000' '\005\011\003' '\007\377' '\003\200\001\002' '\145\012'; do
	i=$((i + 1))
	printf "$bytes" >"$TMP/in$i"
	head -c 64 /dev/zero >>"$TMP/in$i"
	for p in calls isa; do
		want=$("$OUT/$p.native" "$TMP/in$i")
		got=$("$TALLY" sbpf run "$OUT/$p.o" --input "$TMP/in$i" | grep -v -e '^compute units:' -e '^return data:')
		[ "$got" = "$want" ] && pass "sbpf_${p}_matches_host_$i" ||
			fail "sbpf_${p}_matches_host_$i" "$(diff <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
	done
done

# The disassembler agrees with llvm-objdump on every instruction but calls (whose targets
# LLVM prints as raw offsets); tests/sbpf/llvm_to_sbpf_asm.py rewrites LLVM's C-like syntax.
if command -v llvm-objdump >/dev/null && command -v python3 >/dev/null; then
	for p in calls spin runtime isa; do
		want=$(llvm-objdump -d --no-show-raw-insn "$OUT/$p.o" | python3 "$ROOT/tests/sbpf/llvm_to_sbpf_asm.py")
		got=$("$TALLY" sbpf disasm "$OUT/$p.o" | grep -E '^ *[0-9]+:' | grep -v -E ': +(call|syscall) ' |
			sed -E 's/^ *([0-9]+): +/\1: /')
		[ -n "$want" ] && [ "$got" = "$want" ] && pass "sbpf_disasm_matches_llvm_$p" ||
			fail "sbpf_disasm_matches_llvm_$p" "$(diff <(echo "$want") <(echo "$got") | head -4 | tr '\n' ' ')"
	done
else
	skip sbpf_disasm_matches_llvm "llvm-objdump or python3 missing"
fi

# The budget is exact: N CU succeed, N-1 run out on the last instruction.
json=$("$TALLY" sbpf run "$OUT/calls.o" --input "$TMP/in2" --json)
n=$(sed -n 's/.*"compute_units": \([0-9]*\).*/\1/p' <<<"$json")
ok=$("$TALLY" sbpf run "$OUT/calls.o" --input "$TMP/in2" --budget "$n" --json)
short=$("$TALLY" sbpf run "$OUT/calls.o" --input "$TMP/in2" --budget $((n - 1)) --json)
[[ "$ok" == *'"result": "success"'* && "$ok" == *"\"compute_units\": $n,"* &&
	"$short" == *'"result": "ExceededMaxInstructions"'* && "$short" == *"\"compute_units\": $((n - 1)),"* ]] &&
	pass sbpf_budget_is_exact || fail sbpf_budget_is_exact "n=$n ok=$ok short=$short"

# Two runs print the same bytes.
again=$("$TALLY" sbpf run "$OUT/calls.o" --input "$TMP/in2" --json)
[ "$again" = "$json" ] && pass sbpf_runs_are_deterministic || fail sbpf_runs_are_deterministic

# A long loop stops at the budget, with exit status 1 and the error at a pc in entrypoint.
printf '\001' >"$TMP/spin1"
out=$("$TALLY" sbpf run "$OUT/spin.o" --input "$TMP/spin1" --budget 5000); rc=$?
[ $rc -eq 1 ] && [[ "$out" == *"result: ExceededMaxInstructions at pc "*"(entrypoint+"* ]] &&
	[[ "$out" == *"compute units: 5000"* ]] && pass sbpf_loop_stops_at_budget ||
	fail sbpf_loop_stops_at_budget "rc=$rc $out"
out=$("$TALLY" sbpf run "$OUT/spin.o" --input "$TMP/spin1" --json)
[[ "$out" == *'"result": "ExceededMaxInstructions"'* && "$out" == *'"compute_units": 200000,'* ]] &&
	pass sbpf_default_budget_is_200000 || fail sbpf_default_budget_is_200000 "$out"

# A call to a syscall tally lacks fails at link time, naming it.
printf 'extern void sol_frobnicate(void);\nunsigned long entrypoint(void) { sol_frobnicate(); return 0; }\n' >"$TMP/bad.c"
clang -target bpf -mcpu=v3 -O2 -c "$TMP/bad.c" -o "$TMP/bad.o"
err=$("$TALLY" sbpf run "$TMP/bad.o" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$err" == *'UnresolvedSymbol("sol_frobnicate"'* ]] &&
	pass sbpf_link_unknown_syscall || fail sbpf_link_unknown_syscall "$err"

# Runtime syscalls: sha256 as sha256sum computes it, agave's bump allocator (8-byte
# aligned from the heap start, 0 when full), return data, abort and panic.
printf '\012\000abcdefghijklmnop' >"$TMP/rt"
want=$(printf 'abcdefghij' | sha256sum | cut -d' ' -f1)
out=$("$TALLY" sbpf run "$OUT/runtime.o" --input "$TMP/rt" --json)
[[ "$out" == *"\"Program log: $want\""* ]] && pass sbpf_sha256_matches_sha256sum ||
	fail sbpf_sha256_matches_sha256sum "want $want: $out"
[[ "$out" == *'"Program log: 0x300000000, 0x300000068, 0x0, 0x0, 0x0"'* ]] &&
	pass sbpf_heap_allocator || fail sbpf_heap_allocator "$out"
[[ "$out" == *'"Program log: 0x5, 0x74, 0x79, 0x0, 0x0"'* && "$out" == *'"return_data": "74616c6c79"'* &&
	"$out" == *'"return_value": 5,'* ]] && pass sbpf_return_data || fail sbpf_return_data "$out"
printf '\000\001' >"$TMP/rt_abort"
out=$("$TALLY" sbpf run "$OUT/runtime.o" --input "$TMP/rt_abort" --json)
[[ "$out" == *'"result": "Abort"'* ]] && pass sbpf_abort || fail sbpf_abort "$out"
printf '\000\002' >"$TMP/rt_panic"
out=$("$TALLY" sbpf run "$OUT/runtime.o" --input "$TMP/rt_panic" --json)
[[ "$out" == *'"result": "Panic"'* && "$out" == *'SBF program Panicked in runtime.c at 42:7'* ]] && pass sbpf_panic || fail sbpf_panic "$out"

# Sysvars in a bare run are the runtime's defaults as LiteSVM 1.5 reports them (Rent after
# SIMD-0194: 6960 lamports per byte, threshold 1.0, burn 50; EpochSchedule::default()); a
# syscall tally lacks fails naming itself (blake3, refused at load: hash.test.sh).
printf '\000' >"$TMP/sv0"
out=$("$TALLY" sbpf run "$OUT/sysvar.o" --input "$TMP/sv0" --json)
[[ "$out" == *'"Program log: 0x1b30, 0x3ff0000000000000, 0x32, 0x0, 0x0"'* &&
	"$out" == *'"Program log: 0x69780, 0x69780, 0x1, 0xe, 0x7ffe0"'* && "$out" == *'"result": "success"'* ]] &&
	pass sbpf_sysvar_defaults || fail sbpf_sysvar_defaults "$out"
printf '\001' >"$TMP/sv1"
out=$("$TALLY" sbpf run "$OUT/sysvar.o" --input "$TMP/sv1" --json)
[[ "$out" == *'"result": "UnsupportedSyscall"'* && "$out" == *'sol_invoke_signed_c is not implemented'* ]] &&
	pass sbpf_unsupported_syscall_names_itself || fail sbpf_unsupported_syscall_names_itself "$out"

# Program-derived addresses: the vectors of the Solana SDK's test_create_program_address,
# and try_find's answer recreated from its bump seed.
b58() {
	python3 -c 'import sys
a = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
n = 0
for c in sys.argv[1]: n = n * 58 + a.index(c)
sys.stdout.buffer.write(n.to_bytes(32, "big"))' "$1"
}
if command -v python3 >/dev/null; then
	{ b58 BPFLoaderUpgradeab1e11111111111111111111111; b58 SeedPubey1111111111111111111111111111111111
	  printf '\000'; } >"$TMP/pda"
	out=$("$TALLY" sbpf run "$OUT/pda.o" --input "$TMP/pda" --json)
	want='"Program log: BwqrghZA2htAcqq8dzP1WDAhTXYTYWj7CHxF5j7TDBAe", "Program log: 13yWmRpaTR4r5nAktwLqMpRNr28tnVUZw26rTvPSSB19", "Program log: 2fnQrngrQT4SeLcdToJAD96phoEjNL2man2kfRLCASVk", "Program log: 976ymqVnfE32QFe6NfGDctSvVa36LWnvYxhU6G2232YL"'
	[[ "$out" == *"$want"* && "$out" == *'"result": "success"'* ]] && pass sbpf_pda_sdk_vectors ||
		fail sbpf_pda_sdk_vectors "$out"
	[[ "$out" =~ \"Program\ log:\ 0x[0-9a-f]+,\ 0x1,\ 0x0,\ 0x0,\ 0x0\" ]] && pass sbpf_pda_find_roundtrip ||
		fail sbpf_pda_find_roundtrip "$out"
	{ b58 BPFLoaderUpgradeab1e11111111111111111111111; b58 SeedPubey1111111111111111111111111111111111
	  printf '\001'; } >"$TMP/pda17"
	out=$("$TALLY" sbpf run "$OUT/pda.o" --input "$TMP/pda17" --json)
	[[ "$out" == *'"result": "BadSeeds"'* ]] && pass sbpf_pda_too_many_seeds || fail sbpf_pda_too_many_seeds "$out"
else
	skip sbpf_pda_sdk_vectors "python3 missing"
fi

# Each program as a Solana instruction (no accounts, so its input starts with a zero account
# count), linked by `tally sbpf link`, in tally and in LiteSVM: the same result, CU, logs
# and return data. spin runs out of its 200000 CU, which the runtime reports as
# ProgramFailedToComplete.
. tests/solana/litesvm/oracle.sh
if litesvm_ready sbpf_programs_litesvm; then
	for p in calls spin runtime isa sysvar pda; do
		if ! "$TALLY" sbpf link "$OUT/$p.o" -o "$TMP/$p.so"; then
			fail "sbpf_programs_litesvm_$p" "tally sbpf link failed"
			continue
		fi
		printf '{"programs": [{"id": "%s", "elf": "%s"}], "instruction": {"program_id": "%s", "data": "0102"}}\n' \
			42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 "$TMP/$p.so" 42TEXg1vFAbcJ65y7qdYG9iCPvYfy3NDdVLd75akX2P5 >"$TMP/$p.fx.json"
		same_as_litesvm "sbpf_programs_litesvm_$p" "$TMP/$p.fx.json"
	done
fi

# `tally sbpf link`: the written v3 ELF is what readelf reads (EM_BPF, e_flags 3, a rodata
# segment at 0 and the bytecode at 0x100000000, the functions in .symtab), and it
# disassembles to the same program as the object linked in memory.
"$TALLY" sbpf link "$OUT/calls.o" -o "$TMP/calls.so"
hdr=$(readelf -hlsW "$TMP/calls.so" 2>&1)
grep -q 'Machine: *Linux BPF' <<<"$hdr" && grep -q 'Flags: *0x3' <<<"$hdr" &&
	grep -Eq 'LOAD +0x[0-9a-f]+ 0x0000000000000000 ' <<<"$hdr" &&
	grep -Eq 'LOAD +0x[0-9a-f]+ 0x0000000100000000 ' <<<"$hdr" &&
	grep -Eq 'FUNC +GLOBAL +DEFAULT +1 entrypoint$' <<<"$hdr" &&
	pass sbpf_link_elf_layout || fail sbpf_link_elf_layout "$hdr"
"$TALLY" sbpf disasm "$OUT/calls.o" >"$TMP/calls.o.dis" && "$TALLY" sbpf disasm "$TMP/calls.so" >"$TMP/calls.so.dis" &&
	cmp -s "$TMP/calls.o.dis" "$TMP/calls.so.dis" && pass sbpf_link_same_program ||
	fail sbpf_link_same_program "$(diff "$TMP/calls.o.dis" "$TMP/calls.so.dis" | head -5)"
expect_err sbpf_link_refuses_a_program 1 'calls.so: not a relocatable ELF object' \
	"$TALLY" sbpf link "$TMP/calls.so" -o "$TMP/again.so"
expect_err sbpf_link_v0_v3_only 2 'link writes sBPF v0 or v3' \
	"$TALLY" sbpf link "$OUT/calls.o" -o "$TMP/v1.so" --version v1
