# The debug cache (src/elf/debug_cache.c): a separate debug file with zlib-compressed
# sections, found by build-id, is stored decompressed under $TALLY_CACHE/debug/.build-id/;
# the copy is what `objcopy --decompress-debug-sections` makes of the same file (byte for
# byte, but for the SHF_INFO_LINK flag objcopy adds to .rela.plt); later runs read the copy
# (before --debug-dir, without writing it again) and still print what llvm-symbolizer prints; a copy whose build-id is not the file's is
# not used (and is replaced); a file whose copy would read differently (a compressed
# section named like GNU's .zdebug_* kind, or entry 0 of the section table pointing at
# bytes the copy moves) is not stored; TALLY_CACHE=off writes nothing; without TALLY_CACHE the
# cache is under $XDG_CACHE_HOME/tally; an unwritable cache changes nothing in the output.
. tests/lib.sh

. tests/symbolize/compressed_debug.sh
mkdir -p "$TMP/moved"

# agrees NAME [ENV=VALUE...]: tally symbolize, under that environment, prints what
# llvm-symbolizer printed.
agrees() {
	local name=$1
	shift
	env "$@" "$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg" <"$TMP/addrs" \
		>"$TMP/got" 2>"$TMP/err"
	if cmp -s "$TMP/want" "$TMP/got" && [ ! -s "$TMP/err" ]; then
		pass "$name"
	else
		fail "$name" "$(cat "$TMP/err"; diff "$TMP/want" "$TMP/got" | head -4)"
	fi
}

agrees cache_cold_run_agrees TALLY_CACHE="$TMP/cache"
copy="$TMP/cache/debug/$rel"
if [ -f "$copy" ] && ! readelf -SW "$copy" | grep -q ' \.debug_[a-z_]* .* C '; then
	pass cache_stores_decompressed_copy
else
	fail cache_stores_decompressed_copy "$(ls -R "$TMP/cache" 2>&1 | head -5)"
fi

is_objcopys cache_copy_is_objcopys "$TMP/ref" "$copy"

# Found first (before --debug-dir's compressed file): read, not written again.
before=$(stat -c %.9Y "$copy")
agrees cache_warm_run_agrees TALLY_CACHE="$TMP/cache"
check cache_warm_run_leaves_copy test "$before" = "$(stat -c %.9Y "$copy")"

# The compressed file gone, the copy answers alone.
mv "$TMP/dbg/$rel" "$TMP/moved/"
agrees cache_warm_run_reads_copy TALLY_CACHE="$TMP/cache"
mv "$TMP/moved/${rel##*/}" "$TMP/dbg/$rel"

# A copy that is another file (other build-id) is passed over and replaced.
cp "$TMP/ref" "$TMP/good"
objcopy --only-keep-debug "$OUT/clang-O2-dw5-lld-pie" "$copy"
agrees cache_foreign_copy_ignored TALLY_CACHE="$TMP/cache"
check cache_foreign_copy_replaced cmp -s <(readelf -n "$copy") <(readelf -n "$TMP/good")

mkdir -p "$TMP/xdg"
agrees cache_off_agrees TALLY_CACHE=off XDG_CACHE_HOME="$TMP/xdg"
check cache_off_writes_nothing test -z "$(ls -A "$TMP/xdg")"
agrees cache_xdg_default_agrees -u TALLY_CACHE XDG_CACHE_HOME="$TMP/xdg"
check cache_xdg_default_location test -f "$TMP/xdg/tally/debug/$rel"
: >"$TMP/file"
agrees cache_unwritable_agrees TALLY_CACHE="$TMP/file/sub"

# SHF_COMPRESSED on a section named .zdebug_*: decompressed, it would be read as GNU's
# kind, so no copy is made (a fuzzer's find); the file is still read as it is.
objcopy --rename-section .debug_rnglists=.zdebug_rnglists "$TMP/dbg/$rel" "$TMP/z.debug"
mv "$TMP/z.debug" "$TMP/dbg/$rel"
rm -f "$copy"
env TALLY_CACHE="$TMP/cache" "$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg" <"$TMP/addrs" \
	>"$TMP/got" 2>"$TMP/err"
if [ -s "$TMP/got" ] && [ ! -e "$copy" ]; then
	pass cache_zdebug_named_compressed_not_stored
else
	fail cache_zdebug_named_compressed_not_stored "$(ls -R "$TMP/cache" | tail -3; head -2 "$TMP/err")"
fi

# Entry 0 of the section table claiming bytes past the headers and allocated sections,
# which the copy does not keep where they are, or pointing past the copy's end with no
# bytes: readers check its bounds as a section's, so no copy is made (fuzzers' finds: the
# copy did not open).
for claim in 64 0; do
	objcopy --only-keep-debug --compress-debug-sections=zlib "$orig" "$TMP/dbg/$rel"
	python3 - "$TMP/dbg/$rel" "$claim" <<'PY'
import os, struct, sys
f = open(sys.argv[1], 'r+b')
size, claim = os.fstat(f.fileno()).st_size, int(sys.argv[2])
f.seek(0x28)
shoff, = struct.unpack('<Q', f.read(8))
f.seek(shoff + 4)
f.write(struct.pack('<I', 1))                        # sh_type: PROGBITS
f.seek(shoff + 24)
f.write(struct.pack('<QQ', size - claim, claim))     # sh_offset, sh_size: the file's end
PY
	rm -f "$copy"
	env TALLY_CACHE="$TMP/cache" "$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg" \
		<"$TMP/addrs" >"$TMP/got" 2>"$TMP/err"
	if cmp -s "$TMP/want" "$TMP/got" && [ ! -e "$copy" ]; then
		pass cache_section_zero_past_head_not_stored_$claim
	else
		fail cache_section_zero_past_head_not_stored_$claim \
			"$(ls -R "$TMP/cache" | tail -3; head -2 "$TMP/err")"
	fi
done
