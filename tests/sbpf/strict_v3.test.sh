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
