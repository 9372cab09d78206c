# Outputs never destroy what was at their path (docs/outputs.md): every command's -o (and
# the sBPF outputs, and record's perf.data), given an input that fails, leaves an existing
# file's bytes as they were and a device node or FIFO in place; a command that succeeds
# replaces the file, through a symlink too, and leaves no temporary behind. The device and
# the FIFO are made here, inside $TMP (the suite runs as root).
. tests/lib.sh

D=$TMP/out
mkdir -p "$D"
mknod "$D/null" c 1 3 || { fail outputs_mknod "mknod: needs root"; exit 0; }
mkfifo "$D/fifo"
# A reader and a writer held open for the whole test: opening the FIFO never waits, and
# what a command writes into it is simply dropped when the test ends.
exec 3<>"$D/fifo"
printf 'main;foo 10\nmain;bar 5\n' >"$TMP/p.folded"
printf 'main;foo 4\n' >"$TMP/q.folded"
BAD=$ROOT/README.md # not a profile, not a program
SO=$SHARED/corpus/sbpf/programs/hello_world.so

# kept NAME: the existing file, the device and the FIFO are as they were, nothing else
# appeared in $D.
kept() {
	local why=
	[ "$(cat "$D/file")" = old ] || why="file now holds: $(head -c 80 "$D/file")"
	[ -c "$D/null" ] || why="$why; the device node is gone"
	[ -p "$D/fifo" ] || why="$why; the FIFO is gone"
	[ "$(ls -A "$D" | wc -l)" = 3 ] || why="$why; left in the directory: $(ls -A "$D" | tr '\n' ' ')"
	[ -z "$why" ] && pass "$1" || fail "$1" "$why"
}

# fails_keeps NAME CMD... (with OUT standing for the output path): CMD fails for each of
# the file, the device and the FIFO, and all three are kept.
fails_keeps() {
	local name=$1 rc=0 target
	shift
	echo old >"$D/file"
	for target in file null fifo; do
		"${@//OUT/$D/$target}" >/dev/null 2>&1 && rc=1
	done
	[ $rc = 0 ] || { fail "$name" "a command given a bad input succeeded"; return; }
	kept "$name"
}

fails_keeps report_failed_keeps_outputs "$TALLY" report "$BAD" -o OUT
fails_keeps flamegraph_failed_keeps_outputs "$TALLY" flamegraph "$BAD" -o OUT
fails_keeps export_failed_keeps_outputs "$TALLY" export -f pprof "$BAD" -o OUT
fails_keeps annotate_failed_keeps_outputs "$TALLY" annotate "$BAD" -o OUT
# The output is open when this one fails: folded stacks have no addresses to annotate.
fails_keeps annotate_failing_writer_keeps_outputs "$TALLY" annotate "$TMP/p.folded" -o OUT
fails_keeps diff_failed_keeps_outputs "$TALLY" diff "$TMP/p.folded" "$BAD" -o OUT
fails_keeps diff_flamegraph_failed_keeps_outputs \
	"$TALLY" diff "$TMP/p.folded" "$BAD" --flamegraph OUT
for opt in -o --flamegraph --folded --annotate; do
	fails_keeps "sbpf_size_${opt#--}_failed_keeps_outputs" "$TALLY" sbpf size "$BAD" $opt OUT
done
fails_keeps record_failed_keeps_outputs "$TALLY" record -o OUT -p 999999999

# succeeds NAME WANT CMD...: CMD succeeds into the existing file, which then holds a line
# matching WANT, and no temporary is left beside it.
succeeds() {
	local name=$1 want=$2 out
	shift 2
	echo old >"$D/file"
	out=$("${@//OUT/$D/file}" 2>&1) || { fail "$name" "$out"; return; }
	grep -q -- "$want" "$D/file" && [ "$(ls -A "$D" | wc -l)" = 3 ] && pass "$name" ||
		fail "$name" "$(head -c 80 "$D/file"); in the directory: $(ls -A "$D" | tr '\n' ' ')"
}

succeeds report_replaces_file '^total:' "$TALLY" report "$TMP/p.folded" -o OUT
succeeds flamegraph_replaces_file '<svg' "$TALLY" flamegraph "$TMP/p.folded" -o OUT
succeeds export_replaces_file '^main;foo 10$' "$TALLY" export -f folded "$TMP/p.folded" -o OUT
succeeds diff_replaces_file 'foo' "$TALLY" diff "$TMP/p.folded" "$TMP/q.folded" -o OUT
succeeds diff_flamegraph_replaces_file '<svg' \
	"$TALLY" diff "$TMP/p.folded" "$TMP/q.folded" --flamegraph OUT
succeeds sbpf_size_folded_replaces_file '^entrypoint' "$TALLY" sbpf size "$SO" --folded OUT

# A device and a FIFO are written through, not replaced.
out=$("$TALLY" flamegraph "$TMP/p.folded" -o "$D/null" 2>&1) && [ -c "$D/null" ] &&
	pass flamegraph_writes_through_device || fail flamegraph_writes_through_device "$out"
"$TALLY" export -f folded "$TMP/p.folded" -o "$D/fifo" 2>&1 && [ -p "$D/fifo" ] &&
	read -r -t 5 a <&3 && read -r -t 5 b <&3 && [ "$a $b" = "main;bar 5 main;foo 10" ] &&
	pass export_writes_through_fifo || fail export_writes_through_fifo "read: ${a:-} ${b:-}"

# /dev/stdout (a pipe here) is written through; so is a symlink to the device node, and a
# failure leaves both the link and the device.
out=$("$TALLY" export -f folded "$TMP/p.folded" -o /dev/stdout | cat)
[ "$out" = "main;bar 5
main;foo 10" ] && pass export_writes_through_dev_stdout || fail export_writes_through_dev_stdout "$out"
ln -s null "$D/devlink"
"$TALLY" report "$BAD" -o "$D/devlink" >/dev/null 2>&1
"$TALLY" annotate "$TMP/p.folded" -o "$D/devlink" >/dev/null 2>&1
"$TALLY" report "$TMP/p.folded" -o "$D/devlink" 2>&1 && [ -L "$D/devlink" ] && [ -c "$D/null" ] &&
	pass symlink_to_device_written_through || fail symlink_to_device_written_through
rm -f "$D/devlink"

# A symlink to a regular file: the file it names is replaced (as editors do), the link stays.
mkdir -p "$TMP/elsewhere"
echo old >"$TMP/elsewhere/target"
ln -s ../elsewhere/target "$D/link"
"$TALLY" report "$BAD" -o "$D/link" >/dev/null 2>&1
[ "$(cat "$TMP/elsewhere/target")" = old ] && [ -L "$D/link" ] &&
	pass symlink_target_kept_on_failure || fail symlink_target_kept_on_failure
"$TALLY" export -f folded "$TMP/p.folded" -o "$D/link" 2>&1 &&
	[ -L "$D/link" ] && grep -q '^main;foo 10$' "$TMP/elsewhere/target" &&
	[ "$(ls -A "$TMP/elsewhere")" = target ] &&
	pass symlink_target_replaced_through_link || fail symlink_target_replaced_through_link
rm -f "$D/link"

# The replacement keeps the permissions the user gave the old file.
echo old >"$D/file"
chmod 0640 "$D/file"
"$TALLY" export -f folded "$TMP/p.folded" -o "$D/file" 2>&1 &&
	[ "$(stat -c %a "$D/file")" = 640 ] && pass replacement_keeps_mode ||
	fail replacement_keeps_mode "mode $(stat -c %a "$D/file")"

# record's perf.data replaces an old one only when the recording is finished.
echo old >"$D/file"
out=$("$TALLY" record -q -o "$D/file" -- true 2>&1) && perf script -i "$D/file" >/dev/null 2>&1 &&
	[ "$(ls -A "$D" | wc -l)" = 3 ] && pass record_replaces_file ||
	fail record_replaces_file "$out"
exec 3<&-
