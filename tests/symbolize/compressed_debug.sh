# Sourced by the debug cache tests: a corpus binary stripped into $TMP/bin, its separate
# debug file zlib-compressed under $TMP/dbg/$rel (found by build-id), $TMP/addrs (every
# instruction of its .text), $TMP/want (llvm-symbolizer's answer for them with that debug
# directory) and $TMP/ref (what `objcopy --decompress-debug-sections` makes of the debug
# file); is_objcopys compares a copy with it. Exits when the corpus does not build.
OUT="$CORPUS/symbolize"
if ! notes=$(tests/symbolize/build-corpus.sh "$OUT" 2>&1); then
	fail corpus_builds "$(tail -3 <<<"$notes")"
	exit 0
fi
orig="$OUT/gcc-O2-dw5-bfd-pie"
id=$(readelf -n "$orig" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
rel=".build-id/${id:0:2}/${id:2}.debug"
mkdir -p "$TMP/dbg/${rel%/*}"
objcopy --only-keep-debug --compress-debug-sections=zlib "$orig" "$TMP/dbg/$rel"
objcopy --strip-debug "$orig" "$TMP/bin"
objcopy --decompress-debug-sections "$TMP/dbg/$rel" "$TMP/ref"
readelf -SW "$TMP/dbg/$rel" | grep -q ' \.debug_info .* C ' ||
	fail setup_compressed "objcopy did not compress .debug_info"
text_addrs "$orig" >"$TMP/addrs"
llvm-symbolizer --inlining --obj="$TMP/bin" --debug-file-directory="$TMP/dbg" <"$TMP/addrs" \
	>"$TMP/want"
grep -q ':[1-9][0-9]*:' "$TMP/want" || fail setup_oracle "llvm-symbolizer found no lines"

# is_objcopys NAME REF FILE: FILE is REF (objcopy's decompressed file) byte for byte, but
# for the SHF_INFO_LINK flag objcopy adds to .rela.plt.
is_objcopys() {
	check "$1" python3 - "$2" "$3" <<'PY'
import struct, sys
ref, got = (open(p, 'rb').read() for p in sys.argv[1:])
assert len(ref) == len(got), f"sizes {len(ref)} and {len(got)}"
shoff, = struct.unpack_from('<Q', got, 0x28)
shentsize, shnum = struct.unpack_from('<HH', got, 0x3a)
for b in (b for b in range(0, len(ref), 65536) if ref[b:b + 65536] != got[b:b + 65536]):
    for i in (i for i in range(b, min(b + 65536, len(ref))) if ref[i] != got[i]):
        # Only a section's sh_flags may differ, and only by SHF_INFO_LINK (0x40).
        k, at = divmod(i - shoff, shentsize)
        assert 0 <= k < shnum and at == 8 and ref[i] ^ got[i] == 0x40, f"byte {i:#x} differs"
PY
}
