# Hostile and broken files: a clear "tally: FILE: what" error and exit 1, never a crash
# (the sanitizer run of this suite turns any memory error into a failure).
. tests/lib.sh
src=tests/elf/src/inline.c
gcc -O2 -g "$src" -o "$TMP/good"

# expect_error NAME FILE PATTERN: symbolizing in FILE fails with exit 1 and a message
# matching PATTERN, or succeeds with output (a damaged file may still be usable).
expect_clean() {
	local name=$1 file=$2 pattern=$3 out rc
	out=$("$TALLY" symbolize -e "$file" 0x1000 0x1130 2>&1)
	rc=$?
	if [ $rc -gt 1 ]; then
		fail "$name" "exit $rc: $out"
	elif [ $rc -eq 1 ] && [[ "$out" != tally:\ $file:* ]]; then
		fail "$name" "message does not name the file: $out"
	elif [ -n "$pattern" ] && ! grep -q -- "$pattern" <<<"$out"; then
		fail "$name" "expected '$pattern' in: $out"
	else
		pass "$name"
	fi
}

: >"$TMP/empty"
expect_clean empty_file_is_not_elf "$TMP/empty" "not an ELF file"
printf 'hello, world\n' >"$TMP/text"
expect_clean text_file_is_not_elf "$TMP/text" "not an ELF file"
expect_clean missing_file_is_named "$TMP/missing" "No such file"
expect_clean directory_is_not_a_file "$TMP" "not a regular file"

size=$(stat -c %s "$TMP/good")
for cut in 16 63 64 200 1000 $((size / 2)) $((size - 100)); do
	head -c "$cut" "$TMP/good" >"$TMP/cut$cut"
	expect_clean "truncated_at_$cut" "$TMP/cut$cut" ""
done

# Section headers pointing past the end, garbage in every debug section.
python3 - "$TMP/good" "$TMP" <<'PY'
import random, struct, sys
path, tmp = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shnum, = struct.unpack_from("<H", data, 0x3c)
bad = bytearray(data)
struct.pack_into("<Q", bad, 0x28, len(data) + 4096)
open(tmp + "/shoff", "wb").write(bad)
for i in range(1, shnum):  # every section's offset far away
    bad = bytearray(data)
    struct.pack_into("<Q", bad, shoff + i * 64 + 0x18, 1 << 40)
    open(tmp + "/secoff%d" % i, "wb").write(bad)
rng = random.Random(1)
for n in range(20):  # random bytes over the debug sections' contents
    bad = bytearray(data)
    for _ in range(200):
        i = rng.randrange(len(data) // 2, len(data))
        bad[i] = rng.randrange(256)
    open(tmp + "/noise%d" % n, "wb").write(bad)
PY
expect_clean section_table_past_the_end "$TMP/shoff" "past the end"
for f in "$TMP"/secoff* "$TMP"/noise*; do
	expect_clean "damaged_$(basename "$f")" "$f" ""
done

# An abbreviation table that refers to itself forever must not hang: cap the run.
if timeout 20 "$TALLY" symbolize -e "$TMP/noise0" </dev/null >/dev/null 2>&1 || [ $? -ne 124 ]; then
	pass damaged_file_does_not_hang
else
	fail damaged_file_does_not_hang "timed out"
fi

# Not an address.
out=$("$TALLY" symbolize -e "$TMP/good" zzz 2>&1); rc=$?
[ $rc -eq 1 ] && [[ "$out" == "tally: not an address: zzz" ]] &&
	pass malformed_address_is_an_error || fail malformed_address_is_an_error "exit $rc: $out"
out=$("$TALLY" symbolize 0x1 2>&1); rc=$?
[ $rc -eq 2 ] && pass missing_binary_is_usage_error || fail missing_binary_is_usage_error "exit $rc: $out"
