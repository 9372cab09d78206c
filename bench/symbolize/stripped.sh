#!/bin/bash
# Symbolizing stripped code against symbolized code (issue 33 §5): the cost per address of
# `tally symbolize` on three builds of one binary (by default tally itself):
#   symtab    strip --strip-debug: names from .symtab, no DWARF
#   mini      strip --strip-all plus .gnu_debugdata (GDB's MiniDebugInfo recipe)
#   stripped  strip --strip-all: functions from the unwind tables (MODULE!fn_START)
# at every 16th byte of every function nm lists, the same addresses for each, with
# llvm-symbolizer beside it on the same files (it names the first, and prints ?? for the
# others). Prints CPU seconds (user + system, the best of REPS runs), addresses per second,
# each build's ratio to symtab, and how many addresses each named as nm does (for the
# stripped build: the start address in the name equals nm's). tally symbolize's time follows
# the length of what it prints, and a stripped function's JSON carries its range too, so a
# second table gives the cost of the lookup alone: tally_symbolize through libtally
# (lookup_cost.c, built here against the libtally.a beside TALLY), nanoseconds per address.
# Usage: bench/symbolize/stripped.sh [TALLY [BINARY]]    REPS=5 (environment)
set -eu
cd "$(dirname "$0")/../.."
tally=$(realpath "${1:-build/tally}")
bin=$(realpath "${2:-$tally}")
REPS=${REPS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for t in nm strip objcopy xz llvm-symbolizer python3; do
	command -v "$t" >/dev/null || { echo "bench: $t is missing" >&2; exit 1; }
done
echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

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

# The addresses and the timing, in Python: getrusage gives the children's CPU time to the
# microsecond, where /usr/bin/time gives 10 ms.
python3 - "$tally" "$bin" "$work" "$REPS" <<'PY'
import json, resource, subprocess, sys
tally, binary, work, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
funcs = {}
for line in subprocess.run(['nm', '-S', '--defined-only', binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in 'Tt' and int(f[1], 16) > 1:
        funcs.setdefault(int(f[0], 16), (int(f[1], 16), f[3]))
truth = {}
for start, (size, name) in funcs.items():
    for a in range(start + 1, start + size, 16):
        truth[a] = (start, name)
addrs = ''.join('0x%x\n' % a for a in sorted(truth)).encode()
open(work + '/addrs', 'wb').write(addrs)
print('bench: %d addresses in %d functions of %s' % (len(truth), len(funcs), binary),
      file=sys.stderr)


def run(tool, path):
    cmd = ([tally, 'symbolize', '--json', '-e', path] if tool == 'tally' else
           ['llvm-symbolizer', '--inlining', '--output-style=JSON', '--obj=' + path])
    best = None
    for _ in range(reps):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, input=addrs, capture_output=True, check=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
    return best, out


def named(tool, out):
    ok = 0
    for line in out.decode().splitlines():
        if not line.strip():
            continue
        o = json.loads(line)
        if tool == 'tally':
            frames, key, addr = o.get('frames') or [], 'function', o['address']
        else:
            frames, key, addr = o.get('Symbol') or [], 'FunctionName', o['Address']
        fn = frames[-1].get(key) if frames else None
        start, name = truth[int(addr, 16)]
        ok += bool(fn) and (fn == name or fn.endswith('!fn_%x' % start))
    return ok


print('| build | tool | CPU s | addresses/s | vs symtab | named as nm |')
print('|---|---|---:|---:|---:|---:|')
for tool in ('tally', 'llvm-symbolizer'):
    base = None
    for b in ('symtab', 'mini', 'stripped'):
        cpu, out = run(tool, '%s/%s' % (work, b))
        base = base or cpu
        print('| %s | %s | %.3f | %.0f | %.2fx | %d of %d |' %
              (b, tool, cpu, len(truth) / cpu, cpu / base, named(tool, out), len(truth)))
PY

libs=$(sed -n "s/^LIBTALLY_LIBS := //p" Makefile)
cc -std=gnu11 -O2 -I include -o "$work/lookup_cost" bench/symbolize/lookup_cost.c \
	"$(dirname "$tally")/libtally.a" $libs -lpthread
echo
echo '| build | ns per address (tally_symbolize) | vs symtab | named |'
echo '|---|---:|---:|---:|'
base=''
for b in symtab mini stripped; do
	read -r ns named n < <("$work/lookup_cost" "$work/$b" "$work/addrs" "$REPS")
	[ -n "$base" ] || base=$ns
	awk -v b="$b" -v ns="$ns" -v base="$base" -v named="$named" -v n="$n" \
		'BEGIN { printf "| %s | %.1f | %.2fx | %d of %d |\n", b, ns, ns / base, named, n }'
done
echo "bench: load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
