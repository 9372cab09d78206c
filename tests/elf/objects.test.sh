# Relocatable objects (their .debug_* sections need relocating), other architectures and
# byte orders: 32-bit i386, aarch64, and BPF in both endiannesses.
. tests/lib.sh
src=tests/elf/src/inline.c

clang -O2 -g -c "$src" -o "$TMP/x86.o"
agrees_with_llvm clang_object_x86_64 "$TMP/x86.o"
gcc -O0 -g -c "$src" -o "$TMP/gcc.o"
agrees_with_llvm gcc_object_x86_64 "$TMP/gcc.o"
clang -O2 -g -gdwarf-4 -c "$src" -o "$TMP/x86-dwarf4.o"
agrees_with_llvm clang_object_dwarf4 "$TMP/x86-dwarf4.o"

# Other targets get a freestanding program: this machine has no libc headers for them.
cat >"$TMP/free.c" <<'C'
static inline int square(int x) { return x * x; }
static inline __attribute__((always_inline)) int quad(int x) { return square(square(x)); }
__attribute__((noinline)) int leaf(int x) { return quad(x) + 1; }
int entrypoint(const int *input) { return leaf(input[0]) + quad(input[1]); }
C

clang --target=i386-linux-gnu -O2 -g -c "$TMP/free.c" -o "$TMP/i386.o"
[ "$(od -An -tx1 -j4 -N1 "$TMP/i386.o" | tr -d ' ')" = 01 ] &&
	agrees_with_llvm elf32_i386_object "$TMP/i386.o" || fail elf32_i386_object "not ELFCLASS32"

clang --target=aarch64-linux-gnu -O2 -g -c "$TMP/free.c" -o "$TMP/arm64.o"
agrees_with_llvm aarch64_object "$TMP/arm64.o"

clang -target bpf -O2 -g -c "$TMP/free.c" -o "$TMP/bpfel.o"
agrees_with_llvm bpf_object "$TMP/bpfel.o"
clang -target bpfeb -O2 -g -c "$TMP/free.c" -o "$TMP/bpfeb.o"
[ "$(od -An -tx1 -j5 -N1 "$TMP/bpfeb.o" | tr -d ' ')" = 02 ] &&
	agrees_with_llvm big_endian_bpf_object "$TMP/bpfeb.o" || fail big_endian_bpf_object "not ELFDATA2MSB"
