# Linked layouts: lld's default --rosegment, bfd's -z separate-code, PIE and not, shared
# objects. Symbolization takes virtual addresses; they must map to the right code whatever
# the distance between file offsets and addresses.
. tests/lib.sh
src=tests/elf/src/inline.c

clang -O2 -g -fuse-ld=lld "$src" -o "$TMP/lld-pie"
agrees_with_llvm lld_default_layout_pie "$TMP/lld-pie"
clang -O2 -g -fuse-ld=lld -no-pie -fno-pie "$src" -o "$TMP/lld-nopie"
agrees_with_llvm lld_non_pie "$TMP/lld-nopie"
gcc -O2 -g -Wl,-z,separate-code "$src" -o "$TMP/bfd-separate"
agrees_with_llvm bfd_separate_code "$TMP/bfd-separate"
gcc -O2 -g -no-pie "$src" -o "$TMP/bfd-nopie"
agrees_with_llvm bfd_non_pie "$TMP/bfd-nopie"
gcc -O2 -g -shared -fPIC "$src" -o "$TMP/libinline.so"
agrees_with_llvm shared_object "$TMP/libinline.so"
