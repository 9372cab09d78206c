#!/bin/bash
# Builds the symbolizer corpus (tests/symbolize/corpus/*.c) into OUTDIR (default
# build/test-corpus/symbolize): a matrix that covers every axis of issue 2 section 6 without
# the full cross product: gcc and clang; -O0/-O2/-O3; DWARF 4 and 5; ld.bfd and lld; zlib,
# zstd and legacy .zdebug compression; PIE and non-PIE; shared libraries; relocatable
# objects (x86-64 and eBPF); and what real binaries add: DWARF 2, 3 and the 64-bit format,
# type units, line-tables-only, sections garbage-collected by the linker, other segment
# layouts, a static executable, C++.
#
# Idempotent: a target is rebuilt only when its command line changed or a source is newer;
# concurrent runs wait for each other.
# Writes OUTDIR/manifest.tsv, one line per target:
#   FILE <TAB> ORACLE_FILE <TAB> DISASSEMBLER <TAB> EVERY <TAB> DESCRIPTION
# ORACLE_FILE is what llvm-symbolizer is run on: the file itself, or for zstd-compressed
# files a copy with decompressed debug sections (llvm-symbolizer 14 cannot read zstd; the
# addresses are the same since objcopy only rewrites non-allocated sections). EVERY says
# which instructions the tests take (1: all; 4: every fourth, for the static executable).
# Lines starting "NOTE: " on stdout say which combinations the toolchain does not support.
set -eu
SRC=$(cd "$(dirname "$0")/corpus" && pwd)
OUT=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/test-corpus/symbolize}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# Several tests build the corpus and tests/run.sh runs them side by side: one builder at a
# time (the others wait, then find every target up to date).
exec 9>"$OUT/.lock"
flock 9
SELF="$SRC/../build-corpus.sh"
SOURCES=("$SRC"/*.c "$SRC"/*.cc "$SRC"/*.h "$SELF")
MANIFEST_NEW="$OUT/manifest.tsv.$$"
: >"$MANIFEST_NEW"
trap 'rm -f "$MANIFEST_NEW"' EXIT

# supports CMD...: true when CMD compiles and links a trivial program.
PROBE="$OUT/.probe"
mkdir -p "$PROBE"
printf 'int main(void) { return 0; }\n' >"$PROBE/p.c"
supports() { "$@" "$PROBE/p.c" -o "$PROBE/p" >/dev/null 2>&1; }

have_lld=0
supports gcc -fuse-ld=lld && have_lld=1
[ $have_lld = 1 ] || echo "NOTE: lld missing: lld builds are linked by ld.bfd instead"
LLD=lld
[ $have_lld = 1 ] || LLD=bfd

# zstd: the compiler flag (-gz=zstd) if it works, else the linker's
# --compress-debug-sections=zstd (ld.bfd 2.40 has it, lld 14 does not), else objcopy.
zstd_flag() { # CC LD -> flags on stdout, or nothing when only objcopy can do it
	if supports "$1" -g -gz=zstd -fuse-ld="$2"; then
		echo "-gz=zstd"
	elif supports "$1" -g -fuse-ld="$2" -Wl,--compress-debug-sections=zstd; then
		echo "-Wl,--compress-debug-sections=zstd"
	fi
}
for cc in gcc clang; do
	for ld in bfd lld; do
		supports $cc -g -gz=zstd -fuse-ld=$ld ||
			echo "NOTE: $cc -gz=zstd with $ld: unsupported by this toolchain"
		supports $cc -g -gz=zlib -fuse-ld=$ld ||
			echo "NOTE: $cc -gz=zlib with $ld: unsupported by this toolchain"
	done
done

stale() { # TARGET CMDLINE: true when TARGET must be rebuilt
	local t=$1 stamp="$OUT/.$1.cmd"
	[ -f "$OUT/$t" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$2" ] || return 0
	local s
	for s in "${SOURCES[@]}"; do
		[ "$s" -nt "$OUT/$t" ] && return 0
	done
	return 1
}

# target NAME DISASM DESCRIPTION -- CMD... : runs CMD (with $OBJ as the output path, built
# in a scratch name and renamed, so an interrupted build leaves nothing half-written) from
# the source directory, and records NAME in the manifest.
built=0 kept=0
target() {
	local name=$1 disasm=$2 desc=$3
	shift 4
	local cmdline="$*"
	if stale "$name" "$cmdline"; then
		local tmp="$OUT/.$name.tmp"
		(cd "$SRC" && OBJ="$tmp" eval "$cmdline") || { echo "build-corpus: $name failed: $cmdline" >&2; exit 1; }
		mv -f "$tmp" "$OUT/$name"
		printf '%s\n' "$cmdline" >"$OUT/.$name.cmd"
		built=$((built + 1))
	else
		kept=$((kept + 1))
	fi
	local oracle=$name
	if readelf -S "$OUT/$name" 2>/dev/null | grep -q 'debug' &&
		readelf -t "$OUT/$name" | grep -qi 'ZSTD'; then
		oracle=$name.plain
		if [ ! -f "$OUT/$oracle" ] || [ "$OUT/$name" -nt "$OUT/$oracle" ]; then
			objcopy --decompress-debug-sections "$OUT/$name" "$OUT/.$oracle.tmp"
			mv -f "$OUT/.$oracle.tmp" "$OUT/$oracle"
		fi
	fi
	printf '%s\t%s\t%s\t%s\t%s\n' "$OUT/$name" "$OUT/$oracle" "$disasm" "${EVERY:-1}" "$desc" >>"$MANIFEST_NEW"
}

# exe NAME CC OPT DWARF LD PIE EXTRA...: the main program (main.c + util.c).
# Sources are named relative to the source directory with -I. (so headers come out as
# "DIR/./helpers.h") unless EXTRA asks otherwise.
exe() {
	local name=$1 cc=$2 opt=$3 dw=$4 ld=$5 pie=$6
	shift 6
	local piefl="-fPIE -pie"
	[ "$pie" = nopie ] && piefl="-fno-PIE -no-pie"
	target "$name" objdump "$cc $opt -gdwarf-$dw $ld $pie $*" -- \
		"$cc $opt -g -gdwarf-$dw $piefl -fuse-ld=$ld $* -I. main.c util.c -o \"\$OBJ\""
}

# solib NAME CC OPT DWARF LD EXTRA...: the shared library (lib.c).
solib() {
	local name=$1 cc=$2 opt=$3 dw=$4 ld=$5
	shift 5
	target "$name" objdump "shared library, $cc $opt -gdwarf-$dw $ld $*" -- \
		"$cc $opt -g -gdwarf-$dw -fPIC -shared -fuse-ld=$ld $* -I. lib.c -o \"\$OBJ\""
}

supports clang -g -fuse-ld=$LLD -Wl,--compress-debug-sections=zstd ||
	echo "NOTE: $LLD --compress-debug-sections=zstd: unsupported by this linker (zstd builds link with ld.bfd)"
zg=$(zstd_flag gcc bfd)
zc=$(zstd_flag clang bfd)
[ -n "$zg" ] && echo "NOTE: gcc zstd builds use $zg"
[ -n "$zc" ] && echo "NOTE: clang zstd builds use $zc"

# gcc: every level, both DWARF versions, both linkers, PIE and not, each compression.
exe gcc-O0-dw4-bfd-pie        gcc -O0 4 bfd pie
exe gcc-O0-dw5-lld-nopie      gcc -O0 5 $LLD nopie
exe gcc-O2-dw5-bfd-pie        gcc -O2 5 bfd pie
exe gcc-O2-dw4-bfd-nopie      gcc -O2 4 bfd nopie
exe gcc-O2-dw5-lld-pie        gcc -O2 5 $LLD pie
exe gcc-O3-dw5-bfd-nopie      gcc -O3 5 bfd nopie
exe gcc-O3-dw4-lld-pie        gcc -O3 4 $LLD pie
exe gcc-O2-dw5-bfd-pie-zlib   gcc -O2 5 bfd pie -gz=zlib
exe gcc-O3-dw4-lld-nopie-zlib gcc -O3 4 $LLD nopie -gz=zlib
exe gcc-O2-dw4-bfd-pie-zgnu   gcc -O2 4 bfd pie -gz=zlib-gnu
exe gcc-O2-dw5-bfd-pie-abs    gcc -O2 5 bfd pie "-I\"$SRC\"" -fdebug-prefix-map="$SRC"=/src
if [ -n "$zg" ]; then
	exe gcc-O2-dw5-bfd-pie-zstd gcc -O2 5 bfd pie "$zg"
else
	echo "NOTE: gcc zstd: neither gcc nor ld.bfd can compress with zstd here"
fi

# clang: the same axes; clang's DWARF 5 uses rnglistx/addrx/strx forms and no aranges.
exe clang-O0-dw5-lld-pie        clang -O0 5 $LLD pie
exe clang-O0-dw4-bfd-nopie      clang -O0 4 bfd nopie
exe clang-O2-dw5-lld-pie        clang -O2 5 $LLD pie
exe clang-O2-dw4-bfd-pie        clang -O2 4 bfd pie
exe clang-O2-dw5-bfd-nopie      clang -O2 5 bfd nopie
exe clang-O3-dw5-lld-nopie      clang -O3 5 $LLD nopie
exe clang-O3-dw4-lld-pie        clang -O3 4 $LLD pie
exe clang-O2-dw5-lld-pie-zlib   clang -O2 5 $LLD pie -gz=zlib
exe clang-O3-dw4-bfd-nopie-zlib clang -O3 4 bfd nopie -gz=zlib
if [ -n "$zc" ]; then
	exe clang-O2-dw5-bfd-pie-zstd clang -O2 5 bfd pie "$zc"
else
	echo "NOTE: clang zstd: neither clang nor ld.bfd can compress with zstd here"
fi

# Shared libraries.
solib libcorpus-gcc-O2-dw5-bfd.so   gcc -O2 5 bfd
solib libcorpus-gcc-O3-dw4-lld.so   gcc -O3 4 $LLD
solib libcorpus-clang-O2-dw5-lld.so clang -O2 5 $LLD
solib libcorpus-clang-O0-dw4-bfd.so clang -O0 4 bfd -gz=zlib

# Relocatable objects: DWARF only means something once .rela.debug_* is applied.
target util-gcc-O2-dw5.o objdump "relocatable object, gcc -O2 -gdwarf-5" -- \
	"gcc -O2 -g -gdwarf-5 -I. -c util.c -o \"\$OBJ\""
target util-clang-O2-dw5.o objdump "relocatable object, clang -O2 -gdwarf-5" -- \
	"clang -O2 -g -gdwarf-5 -I. -c util.c -o \"\$OBJ\""
target bpf_prog-O2.o llvm-objdump "eBPF relocatable object, clang -target bpf -O2 -g" -- \
	"clang -target bpf -O2 -g -c bpf_prog.c -o \"\$OBJ\""

# What real binaries add.
exe gcc-O2-dw2-bfd-pie        gcc -O2 2 bfd pie
exe clang-O2-dw3-lld-pie      clang -O2 3 $LLD pie
exe gcc-O2-dw5-bfd-pie-dwarf64   gcc -O2 5 bfd pie -gdwarf64
exe clang-O2-dw5-lld-pie-dwarf64 clang -O2 5 $LLD pie -gdwarf64
exe gcc-O2-dw4-bfd-pie-types  gcc -O2 4 bfd pie -fdebug-types-section
exe gcc-O2-g1-bfd-pie         gcc -O2 5 bfd pie -g1
exe clang-O2-gmlt-lld-pie     clang -O2 5 $LLD pie -gline-tables-only
exe gcc-O2-dw5-bfd-pie-nocol  gcc -O2 5 bfd pie -gno-column-info
exe gcc-O2-dw5-bfd-pie-gc     gcc -O2 5 bfd pie -ffunction-sections -Wl,--gc-sections
exe clang-O2-dw5-lld-pie-gc   clang -O2 5 $LLD pie -ffunction-sections -Wl,--gc-sections
exe gcc-O2-dw4-lld-pie-gc     gcc -O2 4 $LLD pie -ffunction-sections -Wl,--gc-sections
exe clang-O2-dw5-lld-pie-norosegment clang -O2 5 $LLD pie -Wl,--no-rosegment
exe gcc-O2-dw5-bfd-nopie-noseparate  gcc -O2 5 bfd nopie -Wl,-z,noseparate-code
solib libcorpus-gcc-O2-dw5-bfd-based.so gcc -O2 5 bfd -Wl,-Ttext-segment=0x10000000
EVERY=4 exe gcc-O2-dw5-bfd-static gcc -O2 5 bfd nopie -static
target cxx-g++-O2-dw5-bfd-pie objdump "C++, g++ -O2 -gdwarf-5 bfd pie" -- \
	"g++ -O2 -g -gdwarf-5 -fPIE -pie cxx.cc -o \"\$OBJ\""
target cxx-clang++-O2-dw4-lld-pie objdump "C++, clang++ -O2 -gdwarf-4 lld pie" -- \
	"clang++ -O2 -g -gdwarf-4 -fPIE -pie -fuse-ld=$LLD cxx.cc -o \"\$OBJ\""
# Type units come from C++ only with clang (C has no one-definition rule to key them by).
target cxx-clang++-O2-dw5-lld-pie-types objdump "C++, clang++ -O2 -gdwarf-5 -fdebug-types-section" -- \
	"clang++ -O2 -g -gdwarf-5 -fdebug-types-section -fPIE -pie -fuse-ld=$LLD cxx.cc -o \"\$OBJ\""
target cxx-g++-O2-dw5-bfd-pie-types objdump "C++, g++ -O2 -gdwarf-5 -fdebug-types-section" -- \
	"g++ -O2 -g -gdwarf-5 -fdebug-types-section -fPIE -pie cxx.cc -o \"\$OBJ\""

mv -f "$MANIFEST_NEW" "$OUT/manifest.tsv"
trap - EXIT
echo "build-corpus: $OUT: $built built, $kept up to date"
