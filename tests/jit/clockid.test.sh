# tally record times samples on CLOCK_MONOTONIC (jitdump's clock) and says so in the file as
# perf record -k 1 does, with the CLOCKID and CLOCK_DATA features. The oracle is perf: its
# header dump names the clock, and perf script converts the samples' times to the wall clock
# with the reference moment, which must lie within the recording (date before and after).
. tests/lib.sh

command -v perf >/dev/null || { skip clockid "no perf"; exit 0; }
cd "$TMP" || exit 1
before=$(date +%s.%N)
"$TALLY" record -q -o rec.data -- awk 'BEGIN {for (i = 0; i < 3e6; i++) s += i}' 2>err \
	|| { fail clockid_record "$(tail -3 err)"; exit 0; }
after=$(date +%s.%N)

perf report -i rec.data --header-only >header.txt 2>&1
grep -q '^# clockid: monotonic (1)$' header.txt && grep -q '^# clockid frequency: [0-9]* MHz$' header.txt \
	&& pass clockid_perf_header_names_monotonic_clock \
	|| fail clockid_perf_header_names_monotonic_clock "$(grep -i -e clock -e error header.txt | head -3)"

# perf script -F tod: "YYYY-MM-DD HH:MM:SS.UUUUUU" per sample, from the CLOCK_DATA reference.
perf script -i rec.data -F tod >tod.txt 2>tod.err
first=$(awk 'NF >= 2 {print $1 " " $2; exit}' tod.txt)
last=$(awk 'NF >= 2 {t = $1 " " $2} END {print t}' tod.txt)
in_run() { [ -n "$1" ] && awk -v t="$(date -d "$1" +%s.%N 2>/dev/null)" -v a="$before" -v b="$after" \
	'BEGIN {exit !(t != "" && t + 0 >= a - 0.001 && t + 0 <= b + 0.001)}'; }
in_run "$first" && in_run "$last" \
	&& pass clockid_perf_script_wall_clock_times_lie_within_the_recording \
	|| fail clockid_perf_script_wall_clock_times_lie_within_the_recording \
		"samples at '$first' .. '$last', recording from $before to $after: $(head -2 tod.err)"
