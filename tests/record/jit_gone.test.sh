# A process that ends early keeps its perf map in the recording: tally record forgets the
# processes that end without a map in /tmp (so that a long recording holds the live ones
# only: docs/native-sampling.md, "Long recordings"), never one that has a map. Here a JIT
# process ends after 0.6 s while its parent forks on for 2.5 s more (tally looks at the
# processes gone once a second); its copy is in DATA.jit and the report names its code.
# The same in every file of a --rotate series that holds its samples.
. tests/lib.sh

gcc -O2 -g -o "$TMP/jit_gone" "$ROOT/tests/record/jit_gone.c" || { fail build_jit_gone; exit 0; }
cat > "$TMP/forker.sh" <<'SH'
"$1" 0.6 >"$2"
end=$(($(date +%s%N) + 2500000000))
while [ "$(date +%s%N)" -lt $end ]; do /bin/true; done
SH
remove_maps_on_exit

"$TALLY" record -o "$TMP/j.data" -- sh "$TMP/forker.sh" "$TMP/jit_gone" "$TMP/pid" 2>"$TMP/err"
pid=$(cat "$TMP/pid" 2>/dev/null)
[ -n "$pid" ] && MAPS+=("$pid")
"$TALLY" report "$TMP/j.data" >"$TMP/report" 2>&1
if [ -n "$pid" ] && cmp -s "/tmp/perf-$pid.map" "$TMP/j.data.jit/perf-$pid.map" &&
	grep -q ' jit_gone_loop ' "$TMP/report"; then
	pass record_keeps_the_map_of_a_process_gone
else
	fail record_keeps_the_map_of_a_process_gone "pid ${pid:-?}: $(ls "$TMP/j.data.jit" 2>&1 | head -3) $(grep -m3 'jit\|^tally' "$TMP/report") $(cat "$TMP/err")"
fi

mkdir "$TMP/r"
"$TALLY" record -o "$TMP/r/perf.data" --rotate 1 -- sh "$TMP/forker.sh" "$TMP/jit_gone" "$TMP/pid" 2>"$TMP/err"
pid=$(cat "$TMP/pid" 2>/dev/null)
[ -n "$pid" ] && MAPS+=("$pid")
first=$(ls "$TMP"/r/perf.data.*Z | head -1)
"$TALLY" report "$first" >"$TMP/report" 2>&1
if [ -n "$pid" ] && cmp -s "/tmp/perf-$pid.map" "$first.jit/perf-$pid.map" &&
	grep -q ' jit_gone_loop ' "$TMP/report"; then
	pass record_rotate_keeps_the_map_with_its_file
else
	fail record_rotate_keeps_the_map_with_its_file "pid ${pid:-?} $first: $(ls "$first.jit" 2>&1 | head -3) $(grep -m3 'jit\|^tally' "$TMP/report") $(cat "$TMP/err")"
fi
