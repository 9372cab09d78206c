# perf.data files perf record never finished: killed (SIGKILL) while recording, and with a
# command that failed to start. Their header's data size is still 0 and no feature table
# was written; perf itself reads no sample of the killed one ("failed to process sample").
# tally reads the records up to the last whole one and says the recording was not finished;
# the oracle is perf script on a repaired copy (data size set to those whole records, the
# feature bits cleared), which must give the same number of samples. Then the same for
# tally record killed: its hidden temporary holds the header perf would have left, and the
# reports of the path it never renamed it to name that file.
. tests/lib.sh

# repair IN OUT: OUT is IN with the data size of its whole records; prints IN's data size
# and the bytes cut after the last whole record.
repair() {
	python3 - "$1" "$2" <<'PY'
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
}

# read_killed NAME FILE MIN [WHY]: tally report of FILE counts the samples perf script counts
# in its repaired copy (FILE.repaired), at least MIN, and says the recorder never finished
# it; $want is perf's count after. WHY is added to a failure's message.
read_killed() {
	local name=$1 file=$2 min=$3 header_size cut rc got
	repair "$file" "$file.repaired" >"$TMP/repair.out"
	read -r header_size cut <"$TMP/repair.out"
	want=$(perf script -i "$file.repaired" -F tid 2>/dev/null | wc -l)
	"$TALLY" report "$file" >"$file.report" 2>"$file.err"
	rc=$?
	got=$(awk '/^figures:  samples/ {print $3}' "$file.report")
	[ "$header_size" = 0 ] && [ $rc = 0 ] && [ "${want:-0}" -gt "$min" ] && [ "$got" = "$want" ] &&
		grep -q 'recording ended early: the recorder never finished the file' "$file.report" &&
		pass "$name ($got samples, $cut bytes cut)" ||
		fail "$name" "header data size $header_size, exit $rc, tally $got, perf on the repaired copy $want: $(head -3 "$file.err") ${4:-}"
}

# wait_size FILE BYTES: until FILE holds that many (10 s at most).
wait_size() {
	for _ in $(seq 200); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ] && return
		sleep 0.05
	done
}

cp /bin/dash "$TMP/spin"
# kill_perf_recording: perf record of the spinning shell, killed (SIGKILL) once it has
# written some of its rings (about 8 MB a second here); its data size field is then still
# 0. (In CI run 16 perf ended on its own with 88 samples, its shell gone after 0.1 s; the
# likely cause, exit traps killing pids that other tests' processes had by then, is fixed
# in tests/lib.sh: kill_children, kill_ids.)
kill_perf_recording() {
	perf record -q -F 999 --call-graph dwarf -o "$TMP/killed.data" -- \
		"$TMP/spin" -c 'while :; do :; done' >/dev/null 2>"$TMP/perf.err" &
	local pid=$!
	wait_size "$TMP/killed.data" 2000000
	kill_children KILL
	wait $pid 2>/dev/null
	pkill -KILL -f "^$TMP/spin" 2>/dev/null
	[ "$(od -An -tu8 -j48 -N8 "$TMP/killed.data" | tr -d ' ')" = 0 ]
}
kill_perf_recording || echo "perf ended on its own: $(head -c 300 "$TMP/perf.err")" >"$TMP/perf.ended"

read_killed unfinished_killed_perf_recording_read_to_its_last_whole_record "$TMP/killed.data" 100 \
	"$(cat "$TMP/perf.ended" 2>/dev/null)"
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

# tally record killed once its temporary holds some records (its default events: the
# sampling one and, with Python frames possible, the BPF program's output, so the header
# lists two attributes told apart by their ids), with its stack copies (--keep-stacks: 2 MB
# in 60 samples).
"$TALLY" record --keep-stacks -F 999 -o "$TMP/tally.data" -- "$TMP/spin" -c 'while :; do :; done' \
	>/dev/null 2>"$TMP/tally.err" &
pid=$!
for _ in $(seq 200); do
	left=$(ls -d "$TMP"/.tally.data.tally-* 2>/dev/null | head -1)
	[ -n "$left" ] && break
	sleep 0.05
done
wait_size "$left" 2000000
kill_children KILL
wait $pid 2>/dev/null
pkill -KILL -f "^$TMP/spin" 2>/dev/null

if [ -f "$left" ]; then
	read_killed unfinished_killed_tally_recording_read_to_its_last_whole_record "$left" 50
	# Its attributes, as perf evlist reads them from the repaired copy's header: the
	# sampling event first, then the outputs of interpreter records (software event 10:
	# the BPF program's, when it loaded, and ptrace mode's), each sample told by its id
	# (perf script read them all above).
	perf evlist -v -i "$left.repaired" >"$TMP/evlist" 2>&1
	events=$(wc -l <"$TMP/evlist")
	outputs=$(sed -n '2,$p' "$TMP/evlist" | grep -c 'config: 0xa,')
	head -1 "$TMP/evlist" | grep -q '^\(cpu-clock\|cycles\)' && [ "$events" -le 3 ] &&
		{ [ "$events" = 1 ] || { head -1 "$TMP/evlist" | grep -q IDENTIFIER &&
			[ "$outputs" = $((events - 1)) ]; }; } &&
		pass "unfinished_killed_tally_recording_lists_its_events ($events)" ||
		fail unfinished_killed_tally_recording_lists_its_events "$(cut -c1-200 "$TMP/evlist" | head -3)"
	# No Python process ran, so its report has no Python line, though the header lists the
	# program's output (a finished recording lists it only when a Python process came).
	! grep -q '^python:' "$left.report" &&
		pass unfinished_killed_tally_recording_without_python_has_no_python_line ||
		fail unfinished_killed_tally_recording_without_python_has_no_python_line "$(grep '^python:' "$left.report")"
	# The path it never renamed to: its reports name the temporary; an older file there is
	# read, with a note.
	expect_err unfinished_killed_tally_recording_named_in_the_error 1 \
		"tally.data: no such file, but tally was killed while recording to it: what it wrote is in $left" \
		"$TALLY" report "$TMP/tally.data"
	cp "$TMP/killed.data.repaired" "$TMP/tally.data"
	touch -d '1 hour ago' "$TMP/tally.data"
	"$TALLY" report "$TMP/tally.data" >"$TMP/older.report" 2>"$TMP/older.err" &&
		grep -q "^tally: note: $left is a later recording to $TMP/tally.data, which tally was killed before finishing" "$TMP/older.err" &&
		pass unfinished_killed_tally_recording_noted_beside_an_older_file ||
		fail unfinished_killed_tally_recording_noted_beside_an_older_file "$(head -3 "$TMP/older.err")"
	# A dead writer's temporary that holds no recording (an export's) is not offered.
	echo 'not a recording' >"$TMP/.export.data.tally-$pid-0"
	expect_err unfinished_leftover_of_another_output_not_named 1 \
		"export.data: No such file or directory$" "$TALLY" report "$TMP/export.data"
else
	fail unfinished_killed_tally_recording_read_to_its_last_whole_record "no temporary beside $TMP/tally.data: $(head -3 "$TMP/tally.err")"
fi
