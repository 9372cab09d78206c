#!/bin/bash
# Side by side: the time tally takes to read CPython 3.11's layout (every field of struct
# cpy_layout, through tests/cpython/src/cpy_check.c) and the time gdb takes to print the
# same structures (ptype /o of each) from the same debug information, for Debian's
# /usr/bin/python3.11 (python3.11-dbg's separate, zlib-compressed DWARF 5 file) and, when
# present, a libpython3.11.so with its own DWARF. Wall time, CPU time (task-clock, best of
# 5) and peak memory, and the ratio of CPU times. No debug cache: tally inflates the debug
# file each time. Usage: bench/cpython_layout.sh [BUILD]   (not a test)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
W=$(mktemp -d /tmp/tally-bench-cpython.XXXXXX)
trap 'rm -rf "$W"' EXIT
export TALLY_CACHE=off
. bench/timed.sh

libs=$(sed -n 's/^LIBS := //p' Makefile)
# shellcheck disable=SC2086
cc -O2 -std=gnu11 -Isrc -Iinclude -o "$W/cpy_check" tests/cpython/src/cpy_check.c \
	"$BUILD/modules.a" $libs

gdb_args=()
for t in _PyRuntimeState PyInterpreterState PyThreadState _PyCFrame _PyInterpreterFrame \
	PyCodeObject PyObject PyVarObject PyBytesObject PyASCIIObject PyCompactUnicodeObject; do
	gdb_args+=(-ex "ptype /o $t")
done

echo "| module | tally (cpy_layout_load) | gdb (ptype /o) | gdb / tally (CPU) |"
echo "|---|---|---|---|"
for elf in /usr/bin/python3.11 /root/.pyenv/versions/3.11.*/lib/libpython3.11.so.1.0; do
	[ -f "$elf" ] || continue
	t=$(timed "$W/cpy_check" layout "$elf")
	tcpu=$(cat "$W/cpu")
	g=$(timed gdb -batch -nx "${gdb_args[@]}" "$elf")
	gcpu=$(cat "$W/cpu")
	echo "| $elf | $t | $g | $(awk -v a="$gcpu" -v b="$tcpu" 'BEGIN { printf "%.0fx", a / b }') |"
done
