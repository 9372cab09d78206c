# timed CMD...: the bench scripts' measure of a command (sourced; they set W, their scratch
# directory).
# CPU time (task-clock, to the millisecond) besides wall time: the machine is shared, wall
# time is noisy. The best of 5 runs, by CPU time, each measured on the command alone
# (/usr/bin/time around it would add its own 1 ms); peak RSS from one more run under
# /usr/bin/time. Prints "WALL s wall, CPU ms cpu, RSS MiB"; the CPU figure is also left in
# $W/cpu for the ratio. PREP, when set, is run (eval) before each run.
timed() {
	for _ in 1 2 3 4 5; do
		eval "${PREP:-:}"
		perf stat -e task-clock -o "$W/stat" -- "$@" >/dev/null 2>&1
		awk '/msec task-clock/ {cpu = $1} /seconds time elapsed/ {wall = $1}
			END {printf "%.1f %.3f\n", cpu, wall}' "$W/stat"
	done | sort -g | head -1 > "$W/best"
	/usr/bin/time -f "%M" -o "$W/time" "$@" >/dev/null 2>&1
	read -r cpu wall < "$W/best"
	echo "$cpu" > "$W/cpu"
	echo "$wall s wall, $cpu ms cpu, $(awk '{printf "%.1f", $1 / 1024}' "$W/time") MiB"
}
