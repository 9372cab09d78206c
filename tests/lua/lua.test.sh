# The Lua 5.4 module (build/lua/tally.so) against Lua itself: exact mode's per-function
# instruction counts equal those of a counter written in Lua alone (count.lua:
# debug.sethook with count 1), read back by go tool pprof; the sampled shares of three
# functions with one loop body agree with their exact shares within binomial bounds; C
# functions called from Lua sit under their Lua caller; a known call chain is sampled in
# its order; tally.start{}/tally.stop() from the script; os.exit() still writes; timer
# mode's shares and stacks by the same rules, in the same stream, which a SIGKILL leaves
# readable; outputs nobody named stay out of the working directory.
. tests/lib.sh

NAME=lua_module
. tests/lua/module.sh
D=$ROOT/tests/lua
cp "$D/work.lua" "$D/shares.lua" "$TMP/"
cd "$TMP" || exit 1

# Exact mode against the Lua counter. Functions defined in work.lua only (its main chunk,
# line 0, runs partly before the counter's hook is set and after the module's).
if ! lua_tally SCALE=2 TALLY_LUA_MODE=exact TALLY_LUA_EXACT_OUTPUT=e.pb.gz \
	lua5.4 -ltally work.lua >e.out 2>&1; then
	fail lua_exact_counts_equal_lua_counter "$(cat e.out)"
elif ! command -v go >/dev/null; then
	skip lua_exact_counts_equal_lua_counter "no go (go tool pprof)"
else
	SCALE=2 lua5.4 "$D/count.lua" work.lua | awk '$1 ~ /^work.lua:[1-9]/' | sort >want
	go tool pprof -top -nodecount=1000 -nodefraction=0 e.pb.gz 2>/dev/null |
		awk 'match($0, /\(work\.lua:[1-9][0-9]*\)$/) && $1 ~ /^[0-9]+$/ {
			k = substr($0, RSTART + 1, RLENGTH - 2); s[k] += $1 }
			END { for (k in s) if (s[k]) print k, s[k] }' | sort >got
	if [ "$(wc -l <want)" -ge 6 ] && cmp -s want got; then
		pass lua_exact_counts_equal_lua_counter
	else
		fail lua_exact_counts_equal_lua_counter "$(diff want got | head -8)"
	fi
fi

# Per line too: go tool pprof -lines puts each function's instructions on lines of its
# own span in work.lua.
if command -v go >/dev/null && [ -s e.pb.gz ]; then
	go tool pprof -lines -top -nodecount=1000 -nodefraction=0 e.pb.gz 2>/dev/null |
		awk '$NF ~ /^work.lua:[0-9]+$/ && $1 ~ /^[0-9]+$/ { split($NF, a, ":"); print a[2] }' |
		sort -un >lines
	if [ -s lines ] && grep -qx 7 lines && grep -qx 11 lines && ! grep -qvxE '[0-9]|[1-4][0-9]' lines; then
		pass lua_exact_counts_per_line
	else
		fail lua_exact_counts_per_line "lines: $(tr '\n' ' ' <lines)"
	fi
fi

# Sampling mode: hot, warm and cold run one loop body, so their sampled shares agree with
# their shares of the counter's instructions: |p_sampled - p_exact| <= 4.5 sigma + 2 points.
ROUNDS=2 lua5.4 "$D/count.lua" shares.lua | awk '$1 ~ /^shares.lua:(8|9|10)$/' >counts.raw
awk '{ sub(/^shares.lua:8$/, "hot", $1); sub(/^shares.lua:9$/, "warm", $1);
	sub(/^shares.lua:10$/, "cold", $1); print }' counts.raw >counts
if ! lua_tally ROUNDS=40 TALLY_LUA_HZ=4999 TALLY_LUA_OUTPUT=s.folded lua5.4 -ltally shares.lua \
	>s.out 2>&1; then
	fail lua_sampled_shares_agree "$(cat s.out)"
else
	verdict=$(awk -v counts=counts -v strip=' [(].*$' -f "$ROOT/tests/agent/shares.awk" s.folded)
	case $verdict in
	ok*) pass lua_sampled_shares_agree ;;
	*) fail lua_sampled_shares_agree "$verdict" ;;
	esac
fi

# The known chain: every sample in cold is main chunk, chain_a, chain_b, cold, in order.
S='shares\.lua'
if grep -q 'cold (shares.lua' s.folded 2>/dev/null; then
	bad=$(grep 'cold (shares.lua' s.folded |
		grep -vE "^\? \[C\];main chunk \($S:0\);chain_a \($S:12\);chain_b \($S:11\);cold \($S:10\) [0-9]+$")
	[ -z "$bad" ] && pass lua_call_chain_in_order || fail lua_call_chain_in_order "$(head -3 <<<"$bad")"
else
	fail lua_call_chain_in_order "no sample in cold: $(head -3 s.folded 2>/dev/null)"
fi

# C functions under their Lua caller: string.rep under reps, table.sort under sorts, the
# comparator table.sort calls above it; every stack of work.lua is one its code makes.
W='work\.lua'
main="^\? \[C\];main chunk \($W:0\)"
calls="(;(\? \($W:5\)|hot \($W:10\)|warm \($W:11\)|reps \($W:12\)(;string\.rep \[C\])?|sorts \($W:16\)(;table\.sort \[C\](;\? \($W:13\))?)?|fib \($W:25\)(;fib \($W:25\))*|drain \($W:29\)(;(co \[C\](;\? \($W:28\)(;coroutine\.yield \[C\])?)?|coroutine\.wrap \[C\]))?|pcall \[C\](;\? \($W:38\)(;deep \($W:26\)(;error \[C\])?)?)?|[a-z.]+ \[C\]))?"
# a C function Lua calls from anywhere, unnamed: a to-be-closed or finalizer method
# (string.rep closes its buffer's box)
closer="(;\? \[C\])?"
# work_stacks NAME FOLDED: every stack of work.lua matches, with string.rep (its box's close
# call above it or not: a timer's hook armed inside string.rep fires at that call) and
# table.sort stacks among them.
work_stacks() {
	local bad rep srt
	bad=$(grep "work.lua" "$2" | grep -vE "$main$calls$closer [0-9]+$")
	rep=$(grep -cE "reps \($W:12\);string\.rep \[C\]$closer [0-9]+$" "$2")
	srt=$(grep -cE "sorts \($W:16\);table\.sort \[C\](;\? \($W:13\))? [0-9]+$" "$2")
	if [ -z "$bad" ] && [ "$rep" -ge 1 ] && [ "$srt" -ge 1 ]; then
		pass "$1"
	else
		fail "$1" "$rep string.rep, $srt table.sort stacks; stray: $(head -3 <<<"$bad")"
	fi
}
if ! lua_tally SCALE=20 TALLY_LUA_HZ=4999 TALLY_LUA_OUTPUT=w.folded lua5.4 -ltally work.lua \
	>w.out 2>&1; then
	fail lua_c_functions_under_lua_caller "$(cat w.out)"
else
	work_stacks lua_c_functions_under_lua_caller w.folded
fi

# The Lua API: TALLY_LUA_MODE=off loads without profiling; tally.start{} and tally.stop()
# profile what runs between them (fib, not the loop after), and bad options are errors.
cat >api.lua <<'L'
local tally = require("tally")
function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function spin(n) local a = 0; for i = 1, n do a = a + i end return a end
tally.start{ mode = "exact", exact_output = "api.pb.gz" }
fib(12)
tally.stop()
spin(100000)
print(select(2, pcall(tally.start, { mode = "fast" })), select(2, pcall(tally.stop)))
L
if out=$(lua_tally TALLY_LUA_MODE=off lua5.4 api.lua 2>&1) && "$TALLY" report api.pb.gz >api.rep 2>&1 &&
	grep -q 'fib (api.lua:2)' api.rep && ! grep -q spin api.rep &&
	grep -q 'mode is sample, exact, both, mixed or timer, not fast' <<<"$out" && grep -q 'not profiling' <<<"$out"; then
	pass lua_start_stop_api
else
	fail lua_start_stop_api "$out $(head -12 api.rep 2>/dev/null)"
fi
# os.exit() without closing the state runs no finalizer: the profile is written at exit.
if lua_tally TALLY_LUA_MODE=exact TALLY_LUA_EXACT_OUTPUT=exit.pb.gz lua5.4 -ltally \
	-e 'function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end fib(10) os.exit(3)' \
	>exit.out 2>&1; [ $? = 3 ] && "$TALLY" report exit.pb.gz 2>&1 | grep -qF 'fib ((command line):1)'; then
	pass lua_os_exit_writes_profile
else
	fail lua_os_exit_writes_profile "$(cat exit.out) $("$TALLY" report exit.pb.gz 2>&1 | head -8)"
fi
expect_err lua_bad_env_mode 1 'TALLY_LUA_MODE is sample, exact, both, mixed, timer or off' \
	lua_tally TALLY_LUA_MODE=fast lua5.4 -ltally -e 'print(1)'

# Timer mode (a timer's signal arms a one-shot hook; nothing per call), into the same
# stream as sample mode's: the sampled shares of hot, warm and cold agree with the
# counter's, and every stack of work.lua is one its code makes, string.rep under reps and
# table.sort under sorts among them (time inside the coroutine is charged to the call
# that resumed it: drain's co).
if ! lua_tally ROUNDS=40 TALLY_LUA_MODE=timer TALLY_LUA_HZ=4999 TALLY_LUA_OUTPUT=t.folded \
	lua5.4 -ltally shares.lua >t.out 2>&1; then
	fail lua_timer_shares_agree "$(cat t.out)"
else
	verdict=$(awk -v counts=counts -v strip=' [(].*$' -f "$ROOT/tests/agent/shares.awk" t.folded)
	case $verdict in
	ok*) pass lua_timer_shares_agree ;;
	*) fail lua_timer_shares_agree "$verdict" ;;
	esac
fi
if ! lua_tally SCALE=20 TALLY_LUA_MODE=timer TALLY_LUA_HZ=4999 TALLY_LUA_OUTPUT=tw.folded \
	lua5.4 -ltally work.lua >tw.out 2>&1; then
	fail lua_timer_c_functions_under_lua_caller "$(cat tw.out)"
else
	work_stacks lua_timer_c_functions_under_lua_caller tw.folded
fi

# Without TALLY_LUA_OUTPUT and TALLY_LUA_EXACT_OUTPUT the profiles go to $TMPDIR and the
# working directory keeps nothing (`lua5.4 -ltally script.lua` leaves no file where it
# ran); a file named goes where it is named, relative to the working directory.
loop='local s = 0 for i = 1, 3e5 do s = s + i end'
mkdir quiet asked tmpdir
if (cd quiet && lua_tally TMPDIR="$TMP/tmpdir" TALLY_LUA_MODE=both lua5.4 -ltally -e "$loop") \
	>q.out 2>&1 && [ -z "$(ls -A quiet)" ] && [ -s "$(echo tmpdir/tally-agent-*.pb.gz)" ] &&
	[ -f "$(echo tmpdir/tally-agent-*.folded)" ] && [ "$(ls tmpdir | wc -l)" = 2 ] &&
	(cd asked && lua_tally TMPDIR="$TMP/tmpdir" TALLY_LUA_MODE=both TALLY_LUA_OUTPUT=s.folded \
		TALLY_LUA_EXACT_OUTPUT=e.pb.gz lua5.4 -ltally -e "$loop") >>q.out 2>&1 &&
	[ -f asked/s.folded ] && [ -s asked/e.pb.gz ] && [ "$(ls tmpdir | wc -l)" = 2 ]; then
	pass lua_default_outputs_leave_the_working_directory_alone
else
	fail lua_default_outputs_leave_the_working_directory_alone \
		"$(cat q.out) quiet: $(ls -A quiet) tmpdir: $(ls tmpdir) asked: $(ls asked)"
fi

# Timer mode killed with SIGKILL: the stream holds whole lines up to its last flush (every
# 100 ms; after 1.5 s at least one, whatever the load), each a stack shares.lua makes
# (the outermost frames and cold's known chain as in sample mode), and tally reads it.
# (env, not the function lua_tally: $! must be lua5.4's pid, which env execs)
env LUA_CPATH="$(dirname "$mod")/?.so;;" LD_PRELOAD="$preload" ROUNDS=100000 TALLY_LUA_MODE=timer \
	TALLY_LUA_HZ=999 TALLY_LUA_OUTPUT=k.folded lua5.4 -ltally shares.lua >/dev/null 2>&1 &
pid=$!
trap 'kill_children 9; rm -rf "$TMP"' EXIT
sleep 1.5
kill -9 $pid
wait $pid 2>/dev/null
F='(hot|warm|cold|chain_a|chain_b|loop) \(shares\.lua:[0-9]+\)'
n=$(grep -cE "^\? \[C\];main chunk \($S:0\)(;$F)* 1$" k.folded)
total=$(wc -l <k.folded)
last=$(tail -c 1 k.folded | od -An -c | tr -d ' ')
chain=$(grep 'cold (shares.lua' k.folded |
	grep -cvE "^\? \[C\];main chunk \($S:0\);chain_a \($S:12\);chain_b \($S:11\);cold \($S:10\) 1$")
if [ "$n" -ge 10 ] && [ "$n" = "$total" ] && [ "$last" = '\n' ] && [ "$chain" = 0 ] &&
	"$TALLY" report k.folded >k.report 2>&1 && grep -q "total: *$n samples" k.report &&
	"$TALLY" export -f folded -o k.out.folded k.folded && [ "$(awk '{ s += $NF } END { print s }' k.out.folded)" = "$n" ]; then
	pass lua_timer_stream_survives_sigkill
else
	fail lua_timer_stream_survives_sigkill "$n whole lines of $total, last byte '$last', $chain off the chain: $(grep -vE "^\? \[C\];main chunk \($S:0\)(;$F)* 1$" k.folded | head -3)"
fi
