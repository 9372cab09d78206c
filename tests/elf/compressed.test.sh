# Compressed debug sections: SHF_COMPRESSED with zlib and zstd, and GNU's legacy .zdebug_*.
. tests/lib.sh
src=tests/elf/src/inline.c

gcc -O2 -g -gz=zlib "$src" -o "$TMP/zlib"
agrees_with_llvm zlib_compressed_sections_symbolize "$TMP/zlib"

if gcc -O2 -g -gz=zstd "$src" -o "$TMP/zstd" 2>/dev/null &&
	readelf -t "$TMP/zstd" | grep -q ZSTD; then
	agrees_with_llvm zstd_compressed_sections_symbolize "$TMP/zstd"
else
	# This toolchain cannot write zstd sections: compress with objcopy instead.
	gcc -O2 -g "$src" -o "$TMP/plain"
	if objcopy --compress-debug-sections=zstd "$TMP/plain" "$TMP/zstd" 2>/dev/null; then
		agrees_with_llvm zstd_compressed_sections_symbolize "$TMP/zstd" "$TMP/plain"
	else
		skip zstd_compressed_sections_symbolize "neither gcc nor objcopy writes zstd here"
	fi
fi

gcc -O2 -g "$src" -o "$TMP/plain"
objcopy --compress-debug-sections=zlib-gnu "$TMP/plain" "$TMP/zdebug"
if readelf -S "$TMP/zdebug" | grep -q '\.zdebug_info'; then
	agrees_with_llvm legacy_zdebug_sections_symbolize "$TMP/zdebug" "$TMP/plain"
else
	fail legacy_zdebug_sections_symbolize "objcopy wrote no .zdebug_info"
fi

# A compressed section whose stream is cut short is an error naming the file and section.
cp "$TMP/zlib" "$TMP/broken"
python3 - "$TMP/broken" <<'PY'
import subprocess, sys
path = sys.argv[1]
out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
for line in out.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".debug_info":
        off, size = int(f[4], 16), int(f[5], 16)
        data = bytearray(open(path, "rb").read())
        for i in range(off + 40, off + size):
            data[i] = 0x5a
        open(path, "wb").write(data)
PY
err=$("$TALLY" symbolize -e "$TMP/broken" 0x1000 2>&1 >/dev/null)
[[ "$err" == *"broken: section .debug_info"*"corrupt zlib data"* ]] &&
	pass corrupt_zlib_stream_is_named || fail corrupt_zlib_stream_is_named "$err"
