# Instruction addresses of a file's .text, one "0x..." per line (sourced by the symbolize
# tests and the benchmark).
#
# text_addrs FILE [DISASSEMBLER] [EVERY]: every instruction (or every EVERY-th one, starting
# with the first) that objdump -d lists in .text. -w keeps a long x86 instruction on one line
# (otherwise its trailing bytes get a line and an address of their own). llvm-objdump serves
# for eBPF, which GNU objdump cannot disassemble; it numbers eBPF instructions in 8-byte
# slots, so the byte address is the slot times 8.
text_addrs() {
	local file=$1 dis=${2:-objdump} every=${3:-1}
	case "$dis" in
	objdump)
		objdump -d -w -j .text "$file" |
			awk -F'\t' -v n="$every" '/^ *[0-9a-f]+:\t/ && NF >= 3 { if (i++ % n == 0) { sub(/^ */, "", $1); sub(/:$/, "", $1); print "0x" $1 } }'
		;;
	llvm-objdump)
		llvm-objdump -d --section=.text "$file" |
			awk -v n="$every" '/^ *[0-9]+:\t/ { if (i++ % n == 0) { sub(/:$/, "", $1); printf "0x%x\n", $1 * 8 } }'
		;;
	*)
		echo "text_addrs: unknown disassembler $dis" >&2
		return 2
		;;
	esac
}
