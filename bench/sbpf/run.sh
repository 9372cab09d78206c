#!/bin/sh
# Builds bench_sbpf against a tally build (default build/, i.e. gcc -O2 as `make` builds
# it) and runs it. Usage: bench/sbpf/run.sh [BUILD_DIR [ROUNDS [PROGRAM [MODE]]]]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
rounds=${2:-5}
[ $# -gt 2 ] && shift 2 || set --
cc=${CC:-cc}
[ "$build" = build-clang ] && cc=clang
$cc -std=gnu11 -O2 -Iinclude -Isrc -D_GNU_SOURCE -o "$build/bench_sbpf" bench/sbpf/bench_sbpf.c \
	"$build/modules.a" $(sed -n "s/^LIBS := //p" Makefile)
nice "$build/bench_sbpf" "$rounds" "$@"
