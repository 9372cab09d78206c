# The debug cache's background store (src/elf/debug_cache_background.c): by default (no
# TALLY_CACHE_STORE, which tests/run.sh sets to "wait" for every other test) a command that
# read a compressed separate debug file returns without waiting for its copy, and a reader
# of its output pipe sees the end at once; a detached process (its own session, stdin,
# stdout and stderr on /dev/null and nothing else open, nice 19, SCHED_IDLE) then stores
# the copy, which is what `objcopy --decompress-debug-sections` makes of the file, and
# exits, leaving nothing else in the cache. With TALLY_CACHE_STORE=wait the copy is there
# when the command ends, and no process is left.
. tests/lib.sh

. tests/symbolize/compressed_debug.sh

# stores_of CACHE: the processes (ours) whose environment has TALLY_CACHE=CACHE.
stores_of() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "TALLY_CACHE=$1" && echo "${p#/proc/}"
	done
}
# Whatever a failed check left running goes with the scratch directory.
trap 'for c in "$TMP"/bg*; do kill -9 $(stores_of "$c") 2>/dev/null; done; rm -rf "$TMP"' EXIT

# The store runs at SCHED_IDLE, on what other processes leave of the CPUs: on a loaded
# machine its few milliseconds of work can take seconds, hence the bound of 120 s.
# gone NAME CACHE: PASS when no process of CACHE is left within 120 s; those left are killed.
gone() {
	local i left
	for ((i = 0; i < 1200; i++)); do
		left=$(stores_of "$2")
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -z "$left" ]; then
		pass "$1"
	else
		kill -9 $left 2>/dev/null
		fail "$1" "still running after 120 s: $left"
	fi
}

# piped NAME CACHE WANT INPUT CMD...: CMD, with TALLY_CACHE=CACHE and without
# TALLY_CACHE_STORE, reading INPUT and writing into a pipe, ends within 30 s with the
# pipe's reader and prints WANT (llvm-symbolizer's answer), nothing on stderr.
piped() {
	local name=$1 cache=$2 want=$3 input=$4
	shift 4
	if timeout 30 bash -c '"$@" <"$0" 2>"$TMP/err" | cat >"$TMP/got"' "$input" \
		env -u TALLY_CACHE_STORE TALLY_CACHE="$cache" "$@" &&
		cmp -s "$want" "$TMP/got" && [ ! -s "$TMP/err" ]; then
		pass "$name"
	else
		fail "$name" "$(cat "$TMP/err"; diff "$want" "$TMP/got" | head -4)"
	fi
}
export TMP

# appears NAME CACHE COPY REF: within 120 s COPY is in place and the store has exited; it is
# REF, with nothing else beside it (no temporary).
appears() {
	local i
	for ((i = 0; i < 1200; i++)); do
		[ -f "$3" ] && [ -z "$(stores_of "$2")" ] && break
		sleep 0.1
	done
	is_objcopys "$1" "$4" "$3"
	check "${1}_alone" test "$(ls -A "${3%/*}")" = "${3##*/}"
	gone "${1}_store_exits" "$2"
}

# stat_field PID N: field N of /proc/PID/stat (proc(5)), after the name in parentheses.
stat_field() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f$(($2 - 2))
}

# 1. The store caught running after the command and its pipe ended: the copy's path is a
# FIFO that this script holds open at both ends (so that opening it blocks no one; the
# command's lookup passes it over, not being a regular file) with a 4 KB buffer, and a
# copy cannot be linked over it, so the store writes the copy into it (atomic_file.h: a
# FIFO is written as it is) and waits until this script reads.
cache="$TMP/bg1"
fifo="$cache/debug/$rel"
mkdir -p "${fifo%/*}"
mkfifo "$fifo"
exec {hold}<>"$fifo"
python3 -c 'import fcntl; fcntl.fcntl(0, 1031, 4096)' <&$hold # F_SETPIPE_SZ
piped background_store_command_and_pipe_end "$cache" "$TMP/want" "$TMP/addrs" \
	"$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg"
pid=
for ((i = 0; i < 1200; i++)); do
	pid=$(stores_of "$cache")
	[ -n "$pid" ] && [ "$(readlink "/proc/$pid/fd/3")" = "$fifo" ] && break
	sleep 0.1
done
if [ -z "$pid" ] || [ "$(wc -w <<<"$pid")" != 1 ]; then
	fail background_store_outlives_command "processes: '$pid'"
else
	pass background_store_outlives_command
	fds=$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')
	to=$(for f in 0 1 2; do readlink "/proc/$pid/fd/$f"; done | sort -u)
	# 0-2 on /dev/null, 3 the FIFO it writes: nothing of the command's
	check background_store_holds_only_its_own test "$fds|$to" = "0 1 2 3 |/dev/null"
	check background_store_own_session \
		test "$(stat_field "$pid" 6)" != "$(ps -o sid= -p $$ | tr -d ' ')"
	check background_store_nice_19 test "$(stat_field "$pid" 19)" = 19
	check background_store_sched_idle test "$(stat_field "$pid" 41)" = 5 # SCHED_IDLE
fi
timeout 120 head -c "$(stat -c %s "$TMP/ref")" <&$hold >"$TMP/from_fifo"
exec {hold}<&-
is_objcopys background_store_writes_objcopys "$TMP/ref" "$TMP/from_fifo"
gone background_store_exits "$cache"

# 2. The small file, plainly.
cache="$TMP/bg2"
copy="$cache/debug/$rel"
piped background_default_command_and_pipe_end "$cache" "$TMP/want" "$TMP/addrs" \
	"$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg"
appears background_copy "$cache" "$copy" "$TMP/ref"
# The next run reads the copy and has nothing to store.
before=$(stat -c %.9Y "$copy")
piped background_copy_read_next "$cache" "$TMP/want" "$TMP/addrs" \
	"$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg"
gone background_copy_read_next_exits "$cache"
check background_copy_left_alone test "$before" = "$(stat -c %.9Y "$copy")"

# 3. TALLY_CACHE_STORE=wait: the copy is there as the command ends, no process behind.
cache="$TMP/bg3"
piped wait_store_agrees "$cache" "$TMP/want" "$TMP/addrs" \
	env TALLY_CACHE_STORE=wait "$TALLY" symbolize -e "$TMP/bin" --debug-dir "$TMP/dbg"
is_objcopys wait_store_copy_at_exit "$TMP/ref" "$cache/debug/$rel"
check wait_store_leaves_no_process test -z "$(stores_of "$cache")"

# 4. A program using libtally is not forked behind its back: without TALLY_CACHE_STORE its
# copy is in place as soon as it closes the symbolizer (the program checks, before it
# exits), and no process is left. It finds a line for the addresses llvm-symbolizer does.
cat >"$TMP/lib_user.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <tally/tally.h>
int main(int argc, char **argv)
{
	struct tally_symbolizer_opts o = { .sz = sizeof(o), .debug_dir = argv[2], .debug_cache = true };
	struct tally_symbolizer *s;
	if (tally_symbolizer_open(argv[1], &o, &s))
		return 2;
	unsigned long long a;
	int lines = 0;
	while (scanf("%llx", &a) == 1) {
		struct tally_frame f[8];
		lines += tally_symbolize(s, a, f, 8) > 0 && f[0].line;
	}
	tally_symbolizer_close(s);
	printf("%d %s\n", lines, access(argv[3], F_OK) ? "absent" : "present");
	return 0;
}
C
libs=$(sed -n "s/^LIBS := //p" "$ROOT/Makefile")
san=$([ "$BUILD" = build-asan ] && echo -fsanitize=address,undefined)
cache="$TMP/bg4"
if cc -std=gnu11 -O2 -I"$ROOT/include" $san -o "$TMP/lib_user" "$TMP/lib_user.c" \
	"$ROOT/$BUILD/libtally.a" $libs 2>"$TMP/cc.err"; then
	out=$(env -u TALLY_CACHE_STORE TALLY_CACHE="$cache" "$TMP/lib_user" "$TMP/bin" "$TMP/dbg" \
		"$cache/debug/$rel" <"$TMP/addrs")
	# addresses whose innermost frame has a line, as llvm-symbolizer answered them
	want=$(awk 'BEGIN { RS = "" } { split($0, l, "\n"); n += l[2] ~ /:[1-9][0-9]*:/ } END { print n }' "$TMP/want")
	check library_user_symbolizes test "${out% *}" = "$want"
	check library_user_copy_at_close test "${out#* }" = present
	is_objcopys library_user_copy_is_objcopys "$TMP/ref" "$cache/debug/$rel"
	check library_user_leaves_no_process test -z "$(stores_of "$cache")"
else
	fail library_user_builds "$(head -5 "$TMP/cc.err")"
fi
