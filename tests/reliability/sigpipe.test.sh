# A reader that goes away (issue 18 §5: `tally report ... | head`): every command that
# writes to stdout ends quietly, killed by SIGPIPE (status 141) as a write to a closed pipe
# kills by default, and the same when it inherited SIGPIPE ignored, where the write fails
# with EPIPE instead (git's answer; coreutils print "write error" and exit 1). The bytes
# head took are the first of the full output. A full disk (/dev/full) is still an error.
# env --default-signal / --ignore-signal set the disposition whatever this shell inherited.
. tests/lib.sh

# Sanity of the two dispositions, with coreutils' seq as the witness.
env --default-signal=PIPE seq 1000000 2>"$TMP/err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
env --ignore-signal=PIPE seq 1000000 2>"$TMP/ierr" | head -1 >/dev/null
irc=${PIPESTATUS[0]}
if [ $rc != 141 ] || [ $irc != 1 ] || ! grep -q 'Broken pipe' "$TMP/ierr"; then
	fail sigpipe_dispositions_take "seq: default $rc, ignored $irc $(cat "$TMP/ierr")"
	exit 0
fi

# A profile whose every output is far larger than a pipe holds (64 KiB): 30,000 functions.
python3 - "$TMP/wide.folded" <<'P'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(30000):
        f.write("main;caller_%d;function_number_%05d_%x %d\n" % (i % 97, i, i * 2654435761 % 2**32, 1 + i % 13))
P
sed -E 's/ ([0-9]+)$/ 7/' "$TMP/wide.folded" >"$TMP/other.folded"
# Addresses for symbolize: every instruction of a test program, many times.
gcc -O1 -g -o "$TMP/prog" tests/reliability/target.c -I"$ROOT/include" ||
	{ fail sigpipe_build_target; exit 0; }
text_addrs "$TMP/prog" >"$TMP/a1"
for _ in $(seq 200); do cat "$TMP/a1"; done >"$TMP/addrs"

# quiet NAME CMD...: CMD's first 4 KiB through head, under each disposition. The full
# output is larger than a pipe holds (64 KiB) with what head reads, so that CMD writes
# after head has gone.
quiet() {
	local name=$1 disp rc
	shift
	"$@" >"$TMP/full" 2>"$TMP/err" <"$TMP/addrs" ||
		{ fail "${name}_full_output" "exit $?: $(head -c 300 "$TMP/err")"; return; }
	[ "$(stat -c %s "$TMP/full")" -gt 81920 ] ||
		{ fail "$name" "only $(stat -c %s "$TMP/full") bytes: too few to fill a pipe"; return; }
	head -c 4096 "$TMP/full" >"$TMP/want"
	for disp in default ignore; do
		env --$disp-signal=PIPE "$@" 2>"$TMP/err" <"$TMP/addrs" | head -c 4096 >"$TMP/first"
		rc=${PIPESTATUS[0]}
		if [ $rc = 141 ] && [ ! -s "$TMP/err" ] && cmp -s "$TMP/want" "$TMP/first"; then
			pass "${name}_${disp}_sigpipe"
		else
			fail "${name}_${disp}_sigpipe" "exit $rc: $(head -c 300 "$TMP/err") first: $(head -c 100 "$TMP/first" | tr -c '[:print:]' .)"
		fi
	done
}

W=$TMP/wide.folded
quiet report_into_head "$TALLY" report --top 100000 "$W"
quiet report_tree_into_head "$TALLY" report --tree --threshold 0 "$W"
quiet export_folded_into_head "$TALLY" export -f folded "$W"
quiet export_folded_to_dev_stdout_into_head "$TALLY" export -f folded -o /dev/stdout "$W"
quiet export_pprof_into_head "$TALLY" export -f pprof "$W"
quiet export_speedscope_into_head "$TALLY" export -f speedscope "$W"
quiet export_firefox_into_head "$TALLY" export -f firefox "$W"
quiet diff_into_head "$TALLY" diff --top 100000 "$W" "$TMP/other.folded"
python3 tests/reliability/hostile.py folded-deep "$TMP/deep.folded" 20000
quiet flamegraph_into_head "$TALLY" flamegraph "$TMP/deep.folded"
quiet symbolize_into_head "$TALLY" symbolize -e "$TMP/prog"

# A perf.data's per-thread folded stacks (what perf script | stackcollapse gives) and
# tables.
gcc -O1 -g -pthread -I"$ROOT/include" -o "$TMP/threads" tests/reliability/threads.c ||
	{ fail sigpipe_build_threads; exit 0; }
"$TALLY" record -q -F 4000 --call-graph fp -o "$TMP/t.data" -- "$TMP/threads" 600 20 >/dev/null 2>"$TMP/rerr" ||
	fail sigpipe_record "$(cat "$TMP/rerr")"
quiet export_threads_folded_into_head "$TALLY" export -f folded --threads "$TMP/t.data"
quiet report_threads_into_head "$TALLY" report --threads "$TMP/t.data"

# Not a closed pipe: a full device is an error with a message, whatever the disposition.
for disp in default ignore; do
	env --$disp-signal=PIPE "$TALLY" report --top 100000 "$W" >/dev/full 2>"$TMP/err"
	rc=$?
	[ $rc = 1 ] && grep -qx 'tally: stdout: write error: No space left on device' "$TMP/err" &&
		pass "report_onto_full_device_${disp}_fails" ||
		fail "report_onto_full_device_${disp}_fails" "exit $rc: $(cat "$TMP/err")"
done
# The output is named, with the system's reason, whatever the writer was (the input named
# it once, with "Input/output error").
for f in folded pprof speedscope firefox; do
	"$TALLY" export -f $f "$W" -o /dev/full 2>"$TMP/err"
	rc=$?
	[ $rc = 1 ] && grep -qx 'tally: /dev/full: write error: No space left on device' "$TMP/err" &&
		pass "export_${f}_onto_full_device_says_why" ||
		fail "export_${f}_onto_full_device_says_why" "exit $rc: $(cat "$TMP/err")"
done
