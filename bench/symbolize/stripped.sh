#!/bin/bash
# Symbolizing stripped code against symbolized code (issue 33 §5): the cost per address of
# `tally symbolize` on three builds of one binary (by default tally itself):
#   symtab    strip --strip-debug: names from .symtab, no DWARF
#   mini      strip --strip-all plus .gnu_debugdata (GDB's MiniDebugInfo recipe)
#   stripped  strip --strip-all: functions from the unwind tables (MODULE!fn_START)
# at the middle of every function nm lists, the same addresses for each, with
# llvm-symbolizer beside it on the same files (it names the first, and prints ?? for the
# third). Prints CPU seconds (user + system, the best of REPS runs), addresses per second,
# each build's ratio to symtab, and how many addresses each named as nm does (for the
# stripped build: the start address in the name equals nm's).
# Usage: bench/symbolize/stripped.sh [TALLY [BINARY]]    REPS=5 (environment)
set -eu
cd "$(dirname "$0")/../.."
tally=$(realpath "${1:-build/tally}")
bin=$(realpath "${2:-$tally}")
REPS=${REPS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for t in nm strip objcopy xz llvm-symbolizer /usr/bin/time python3; do
	command -v "$t" >/dev/null || { echo "bench: $t is missing" >&2; exit 1; }
done
[ "$(nproc)" -ge 1 ] && echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# The three builds.
strip --strip-debug -o "$work/symtab" "$bin"
strip --strip-all -o "$work/stripped" "$bin"
# MiniDebugInfo: the function symbols .dynsym lacks, in an xz-compressed ELF file.
nm -D "$bin" --format=posix --defined-only | awk '{ print $1 }' | sort >"$work/dynsym"
nm "$bin" --format=posix --defined-only | awk '$2 ~ /[TtWw]/ { print $1 }' | sort >"$work/funcs"
comm -13 "$work/dynsym" "$work/funcs" >"$work/keep"
objcopy --only-keep-debug "$bin" "$work/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$work/keep" \
	"$work/debug" "$work/mini.elf"
xz -k "$work/mini.elf"
objcopy --add-section .gnu_debugdata="$work/mini.elf.xz" "$work/stripped" "$work/mini"

# The addresses: the middle of every sized function, and nm's start and name for each.
nm -S --defined-only "$bin" | awk 'NF == 4 && $3 ~ /[Tt]/ && strtonum("0x" $2) > 1 {
	s = strtonum("0x" $1); printf "0x%x %x %s\n", s + int(strtonum("0x" $2) / 2), s, $4 }' |
	sort -u -k1,1 >"$work/truth"
cut -d' ' -f1 "$work/truth" >"$work/addrs"
n=$(wc -l <"$work/addrs")
echo "bench: $n addresses in $(basename "$bin")" >&2

# best TOOL FILE OUT: the best CPU seconds of REPS runs; the output of the last in OUT.
best() {
	local tool=$1 file=$2 out=$3 b='' s
	for ((i = 0; i < REPS; i++)); do
		if [ "$tool" = tally ]; then
			/usr/bin/time -f '%U %S' -o "$work/time" "$tally" symbolize --json -e "$file" \
				<"$work/addrs" >"$out"
		else
			/usr/bin/time -f '%U %S' -o "$work/time" llvm-symbolizer --inlining \
				--output-style=JSON --obj="$file" <"$work/addrs" >"$out"
		fi
		s=$(awk '{ print $1 + $2 }' "$work/time")
		[ -z "$b" ] || awk -v a="$s" -v b="$b" 'BEGIN { exit !(a < b) }' && b=$s
	done
	echo "$b"
}

# named TOOL OUT: addresses named as nm names them (a fn_START name: START is nm's start).
named() {
	python3 - "$1" "$2" "$work/truth" <<'EOF'
import json, sys
tool, out, truth = sys.argv[1:]
want = {}
for line in open(truth):
    addr, start, name = line.split()
    want[int(addr, 16)] = (int(start, 16), name)
ok = 0
for line in open(out):
    if not line.strip():
        continue
    o = json.loads(line)
    if tool == 'tally':
        frames = o.get('frames') or []
        fn = frames[-1].get('function') if frames else None
    else:
        frames = o.get('Symbol') or []
        fn = frames[-1].get('FunctionName') if frames else None
    start, name = want[int(o.get('address') or o.get('Address'), 16)]
    if fn and (fn == name or fn.endswith('!fn_%x' % start)):
        ok += 1
print(ok)
EOF
}

printf '| build | tool | CPU s | addresses/s | vs symtab | named as nm |\n|---|---|---:|---:|---:|---:|\n'
for tool in tally llvm-symbolizer; do
	base=''
	for b in symtab mini stripped; do
		s=$(best "$tool" "$work/$b" "$work/$b.$tool.out")
		[ -n "$base" ] || base=$s
		awk -v b="$b" -v t="$tool" -v s="$s" -v base="$base" -v n="$n" -v ok="$(named "$tool" "$work/$b.$tool.out")" \
			'BEGIN { printf "| %s | %s | %.3f | %s | %s | %d of %d |\n", b, t, s,
				s > 0 ? sprintf("%.0f", n / s) : "too fast to measure",
				base > 0 && s > 0 ? sprintf("%.2fx", s / base) : "-", ok, n }'
	done
done
echo "bench: load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
