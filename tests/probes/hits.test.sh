# A usdt recording's samples are hits because the file says its event is the uprobe PMU's:
# tally writes perf's PMU_MAPPINGS feature (every PMU in /sys with its type, as perf record
# does), and a report reads the type from there, never from the /sys of the machine it runs
# on. Oracles: perf report --header-only (perf's reading of the feature) against /sys; and
# the report itself, byte for byte, under a /sys whose uprobe PMU has another type or is
# missing (a private mount namespace over a directory in $TMP).
. tests/lib.sh

PMUS=/sys/bus/event_source/devices
gcc -O2 -g -fomit-frame-pointer -pthread -I"$ROOT/include" "$ROOT/tests/probes/paths.c" -o "$TMP/paths" ||
	fail hits_build "compiling paths.c"
"$TALLY" record -q -e usdt:tally_test:hit -o "$TMP/u.data" -- "$TMP/paths" 30 20 >/dev/null 2>"$TMP/rec.err" ||
	fail hits_record "$(cat "$TMP/rec.err")"

# ---- the feature as perf reads it: every PMU of /sys with its type ----
if command -v perf >/dev/null; then
	theirs=$(perf report --header-only -i "$TMP/u.data" 2>/dev/null |
		sed -n 's/^# pmu mappings: //p' | tr ',' '\n' | sed -E 's/^ *([^ ]+) = ([0-9]+)$/\1 \2/' | sort)
	sys=$(for d in "$PMUS"/*; do echo "$(basename "$d") $(cat "$d/type")"; done | sort)
	[ -n "$sys" ] && [ "$theirs" = "$sys" ] && pass record_writes_pmu_mappings_perf_reads \
		|| fail record_writes_pmu_mappings_perf_reads "perf: '$theirs', /sys: '$sys'"
else
	skip record_writes_pmu_mappings_perf_reads "needs perf"
fi

# ---- the report depends on the file alone ----
"$TALLY" report "$TMP/u.data" >"$TMP/here.txt" 2>&1
grep -qE '^total: +50 hits/count' "$TMP/here.txt" && pass report_usdt_recording_is_hits \
	|| fail report_usdt_recording_is_hits "$(head -5 "$TMP/here.txt")"

# report_under NAME DIR: the report made where DIR stands for /sys's PMUs, against here.txt.
report_under() {
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
		sh "$2" "$PMUS" "$TALLY" report "$TMP/u.data" >"$TMP/$1.txt" 2>&1
	cmp -s "$TMP/here.txt" "$TMP/$1.txt" && pass "$1" \
		|| fail "$1" "$(diff "$TMP/here.txt" "$TMP/$1.txt" | head -4)"
}
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	# uprobe under another number, and that number another PMU's
	uprobe=$(cat "$PMUS/uprobe/type")
	mkdir -p "$TMP/other/uprobe" "$TMP/other/kprobe" "$TMP/none"
	echo $((uprobe + 1000)) >"$TMP/other/uprobe/type"
	echo "$uprobe" >"$TMP/other/kprobe/type"
	report_under report_same_where_uprobe_has_another_type "$TMP/other"
	report_under report_same_where_no_uprobe_pmu "$TMP/none"
else
	skip report_same_where_uprobe_has_another_type "needs root (unshare -m)"
	skip report_same_where_no_uprobe_pmu "needs root (unshare -m)"
fi

# The name is the file's: renamed in the file, the same samples are no longer hits.
n=$(perl -0777 -ne 'print scalar(() = /uprobe\x00/g)' "$TMP/u.data")
perl -0777 -pe 's/uprobe\x00/uprobX\x00/' "$TMP/u.data" >"$TMP/renamed.data"
out=$("$TALLY" report "$TMP/renamed.data" 2>&1)
[ "$n" = 1 ] && grep -qE '^total: +50 samples/count' <<<"$out" && pass report_hits_named_by_the_file \
	|| fail report_hits_named_by_the_file "'uprobe' found $n times: $(head -5 <<<"$out")"
