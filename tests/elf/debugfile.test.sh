# Separate debug files: found through .gnu_debuglink (CRC checked) and by build-id under
# --debug-dir, with answers equal to llvm-symbolizer's on the unstripped program.
. tests/lib.sh
src=tests/elf/src/inline.c

gcc -O2 -g -Wl,--build-id "$src" -o "$TMP/full"
objcopy --only-keep-debug "$TMP/full" "$TMP/full.debug"
mkdir -p "$TMP/link"
cp "$TMP/full.debug" "$TMP/link/prog.debug"
objcopy --strip-debug --add-gnu-debuglink="$TMP/link/prog.debug" "$TMP/full" "$TMP/link/prog"
agrees_with_llvm debuglink_next_to_the_file_is_used "$TMP/link/prog"

# The same name with other contents has another CRC: it must not be used.
mkdir -p "$TMP/badcrc"
objcopy --strip-debug --add-gnu-debuglink="$TMP/link/prog.debug" "$TMP/full" "$TMP/badcrc/prog"
cp "$TMP/full.debug" "$TMP/badcrc/prog.debug"
printf 'x' >>"$TMP/badcrc/prog.debug"
out=$("$TALLY" symbolize -e "$TMP/badcrc/prog" "$(nm "$TMP/full" | awk '$3 == "leaf" { print "0x" $1 }')")
[[ "$out" == $'leaf\n??:0:0'* ]] && pass debuglink_with_wrong_crc_is_ignored ||
	fail debuglink_with_wrong_crc_is_ignored "$out"

# By build-id: DIR/.build-id/xx/rest.debug, with no debuglink at all.
id=$(readelf -n "$TMP/full" | awk '/Build ID/ { print $3 }')
mkdir -p "$TMP/dbg/.build-id/${id:0:2}" "$TMP/byid"
cp "$TMP/full.debug" "$TMP/dbg/.build-id/${id:0:2}/${id:2}.debug"
objcopy --strip-debug "$TMP/full" "$TMP/byid/prog"
LLVM_OPTS="--debug-file-directory=$TMP/dbg" agrees_with_llvm build_id_under_debug_dir_is_used \
	"$TMP/byid/prog" "$TMP/byid/prog" -- --debug-dir "$TMP/dbg"

# Without --debug-dir the stripped program has only its symbol table.
out=$("$TALLY" symbolize -e "$TMP/byid/prog" "$(nm "$TMP/full" | awk '$3 == "leaf" { print "0x" $1 }')")
[[ "$out" == $'leaf\n??:0:0'* ]] && pass stripped_program_falls_back_to_symbols ||
	fail stripped_program_falls_back_to_symbols "$out"

# libc: stripped, with its zlib-compressed debug file from libc6-dbg found by build-id.
libc=/lib/x86_64-linux-gnu/libc.so.6
start=$(nm -D "$libc" | awk '$3 ~ /^strxfrm_l@/ { print $1; exit }')
addr=$(printf '0x%x' $((0x$start + 16)))
out=$("$TALLY" symbolize -e "$libc" "$addr")
want=$(llvm-symbolizer --inlining --obj="$libc" "$addr")
[ "$out" = "$want" ] && [[ "$out" == *strxfrm* ]] && pass libc_debug_file_found_by_build_id ||
	fail libc_debug_file_found_by_build_id "$out"
