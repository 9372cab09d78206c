# ptoken_v3.so (Firedancer's fixture) is an sBPF v3 build for the first SIMD-0189 draft:
# e_machine EM_SBPF, bytecode at 0, rodata at 0x1_0000_0000, stack and heap program headers.
# The reference (anza-xyz/sbpf since "Adjustments of SIMD-0189", Dec 2025) wants EM_BPF,
# rodata at 0 and bytecode at 0x1_0000_0000, and refuses it in the file header check:
# ElfParserError::InvalidFileHeader, i.e. FailedToParse(InvalidFileHeader). With only the
# machine patched to EM_BPF, its program headers fail next (InvalidProgramHeader).
. tests/lib.sh

F="${SBPF_CORPUS:-$SHARED/corpus/sbpf}/programs/ptoken_v3.so"
if [ ! -f "$F" ]; then
	skip sbpf_ptoken_v3 "no corpus file $F"
	exit 0
fi

# The oracle for what the file is: readelf's view of its header and first program header.
hdr=$(readelf -hlW "$F")
[[ "$hdr" == *'Machine:'*'0x107'* && "$hdr" == *'Flags:'*'0x3'* ]] &&
	[ "$(readelf -lW "$F" | awk '$1 == "LOAD" { print $3, $7; exit }')" = "0x0000000000000000 E" ] &&
	pass sbpf_ptoken_v3_is_old_layout || fail sbpf_ptoken_v3_is_old_layout "$hdr"

for cmd in "run" "disasm" "size"; do
	err=$("$TALLY" sbpf $cmd "$F" 2>&1 >/dev/null); rc=$?
	[ $rc -eq 1 ] && [ "$err" = "tally: $F: FailedToParse(InvalidFileHeader)" ] &&
		pass "sbpf_ptoken_v3_${cmd}_refused" || fail "sbpf_ptoken_v3_${cmd}_refused" "rc $rc: $err"
done
out=$("$TALLY" sbpf run "$F" --json 2>&1)
[[ "$out" == *'FailedToParse(InvalidFileHeader)'* ]] && pass sbpf_ptoken_v3_json_refused ||
	fail sbpf_ptoken_v3_json_refused "$out"

python3 - "$F" "$TMP/em_bpf.so" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[18:20] = (247).to_bytes(2, 'little')
open(sys.argv[2], 'wb').write(b)
EOF
err=$("$TALLY" sbpf disasm "$TMP/em_bpf.so" 2>&1 >/dev/null)
[ "$err" = "tally: $TMP/em_bpf.so: InvalidProgramHeader" ] &&
	pass sbpf_old_v3_layout_invalid_program_header ||
	fail sbpf_old_v3_layout_invalid_program_header "$err"

# The reference's LocalVerifier (what `solana program deploy` checks on v3 programs), under
# --reject-broken-elfs, on the programs of its own tests (tests/verifier.rs:
# local_verifier_invalid_syscall, local_verifier_call_negative; their `add64 r10, 0` is a
# `mov64 r0, 0` here, since v3 does not let a program write r10).
bytecode() { python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$1" >"$2"; }
bytecode 'b7000000 00000000 18070000 00800000 00000000 00000000 85000000 93d11b00 95000000 00000000' "$TMP/sys.bin"
bytecode 'b7000000 00000000 18070000 00800000 00000000 00000000 85100000 ffffffff 95000000 00000000' "$TMP/neg.bin"
err=$("$TALLY" sbpf run "$TMP/sys.bin" --raw --version v3 --reject-broken-elfs 2>&1)
[ "$err" = "tally: $TMP/sys.bin: VerifierError(InvalidSyscall(1823123))" ] &&
	pass sbpf_local_verifier_invalid_syscall || fail sbpf_local_verifier_invalid_syscall "$err"
err=$("$TALLY" sbpf run "$TMP/neg.bin" --raw --version v3 --reject-broken-elfs 2>&1)
[ "$err" = "tally: $TMP/neg.bin: VerifierError(InvalidFunction(3))" ] &&
	pass sbpf_local_verifier_call_negative || fail sbpf_local_verifier_call_negative "$err"
# Without the deployment checks both load, as in the runtime, and fail only when run.
out=$("$TALLY" sbpf run "$TMP/sys.bin" --raw --version v3 --json 2>&1)
[[ "$out" == '{"result": "'* && "$out" != *VerifierError* ]] && pass sbpf_local_verifier_only_on_deploy ||
	fail sbpf_local_verifier_only_on_deploy "$out"

# A file without the ELF magic is judged by its e_flags word first, as the reference's
# get_sbpf_version does before parsing: version 7 is UnsupportedSBPFVersion whatever the
# rest, a valid version gives the parser's errors.
head -c 40 /dev/zero >"$TMP/short"
{ head -c 48 /dev/zero; printf '\007\000\000\000'; head -c 30 /dev/zero; } >"$TMP/v7"
{ head -c 48 /dev/zero; printf '\003\000\000\000'; head -c 30 /dev/zero; } >"$TMP/v3"
{ head -c 48 /dev/zero; printf '\000\000\000\000'; head -c 4 /dev/zero; } >"$TMP/v0short"
got=""
for f in short v7 v3 v0short; do got="$got $("$TALLY" sbpf run "$TMP/$f" 2>&1 | sed 's/.*: //')"; done
[ "$got" = " ValueOutOfBounds UnsupportedSBPFVersion FailedToParse(InvalidFileHeader) ValueOutOfBounds" ] &&
	pass sbpf_version_read_before_magic || fail sbpf_version_read_before_magic "$got"
