# perf.data files perf record never finished: killed (SIGKILL) while recording, and with a
# command that failed to start. Their header's data size is still 0 and no feature table
# was written; perf itself reads no sample of the killed one ("failed to process sample").
# tally reads the records up to the last whole one and says the recording was not finished;
# the oracle is perf script on a repaired copy (data size set to those whole records, the
# feature bits cleared), which must give the same number of samples.
. tests/lib.sh

cp /bin/dash "$TMP/spin"
perf record -q -F 999 --call-graph dwarf -o "$TMP/killed.data" -- \
	"$TMP/spin" -c 'while :; do :; done' >/dev/null 2>"$TMP/perf.err" &
pid=$!
# Killed once perf has written some of its rings (about 8 MB a second here).
for _ in $(seq 200); do
	[ "$(stat -c %s "$TMP/killed.data" 2>/dev/null || echo 0)" -gt 2000000 ] && break
	sleep 0.05
done
kill -KILL $pid
wait $pid 2>/dev/null
pkill -KILL -f "^$TMP/spin" 2>/dev/null

python3 - "$TMP/killed.data" "$TMP/repaired.data" >"$TMP/repair.out" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
data_off, data_size = struct.unpack_from('<QQ', d, 40)
off = data_off
while off + 8 <= len(d):
    size = struct.unpack_from('<H', d, off + 6)[0]
    if size < 8 or off + size > len(d):
        break
    off += size
struct.pack_into('<Q', d, 48, off - data_off)
struct.pack_into('<4Q', d, 72, 0, 0, 0, 0)
open(sys.argv[2], 'wb').write(d[:off])
print(data_size, len(d) - off)
PY
read -r header_size cut <"$TMP/repair.out"
want=$(perf script -i "$TMP/repaired.data" -F tid 2>/dev/null | wc -l)
"$TALLY" report "$TMP/killed.data" >"$TMP/killed.report" 2>"$TMP/killed.err"
rc=$?
got=$(awk '/^figures:  samples/ {print $3}' "$TMP/killed.report")
[ "$header_size" = 0 ] && [ $rc = 0 ] && [ "${want:-0}" -gt 100 ] && [ "$got" = "$want" ] &&
	grep -q 'recording ended early: the recorder never finished the file' "$TMP/killed.report" &&
	pass "unfinished_killed_perf_recording_read_to_its_last_whole_record ($got samples, $cut bytes cut)" ||
	fail unfinished_killed_perf_recording_read_to_its_last_whole_record "header data size $header_size, exit $rc, tally $got, perf on the repaired copy $want: $(head -3 "$TMP/killed.err")"
# perf itself refuses it; tally's other outputs read it as the report does.
"$TALLY" export -f folded -o "$TMP/killed.folded" "$TMP/killed.data" 2>>"$TMP/killed.err" &&
	[ "$(awk '{s += $NF} END {print s}' "$TMP/killed.folded")" = "$want" ] &&
	pass unfinished_killed_perf_recording_exports ||
	fail unfinished_killed_perf_recording_exports "$(head -3 "$TMP/killed.err")"

# A command that does not start: perf leaves a file with no sample.
perf record -q -o "$TMP/failed.data" -- "$TMP/no-such-command" >/dev/null 2>&1
expect_err unfinished_failed_command_has_no_samples 1 \
	"failed.data: no samples (the recorder never finished the file)" \
	"$TALLY" report "$TMP/failed.data"
