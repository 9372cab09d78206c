# Lua frames read at the sample (docs/lua.md), end to end: tally record of Debian's stripped
# lua5.4 running tests/lua/record_chain.lua, as root and as nobody (ptrace mode either
# way), against debug.traceback's account of the chain (the script prints it):
#   - main chunk -> chain_a -> chain_b -> chain_c whole and in order in >= 98% of the
#     samples;
#   - string.rep under chain_c in >= 95% of string.rep's samples (both checked on
#     tally's folded stacks, names as debug.traceback gives them).
. tests/lib.sh

D=$ROOT/tests/lua
command -v lua5.4 >/dev/null || { skip lua_frames "no lua5.4"; exit 0; }
chmod 711 "$TMP"
U=$TMP/u
mkdir "$U"
chown nobody:nogroup "$U"
cp "$D/record_chain.lua" "$U/"

# check NAME: the folded stacks of NAME.data against the traceback in NAME.out
check() {
	local name=$1
	"$TALLY" export -f folded -o "$TMP/$name.folded" "$U/$name.data" 2>"$TMP/$name.err" ||
		{ fail "lua_frames_export_$name" "$(cat "$TMP/$name.err")"; return; }
	grep -q "in function 'chain_c'" "$TMP/$name.out" &&
		grep -q "in function 'chain_a'" "$TMP/$name.out" ||
		{ fail "lua_frames_oracle_$name" "$(head -5 "$TMP/$name.out")"; return; }
	read -r total whole rep rep_under <<<"$(awk '
		{ n = $NF; total += n
		  if (index($0, "main chunk;chain_a;chain_b;chain_c;") || $0 ~ /main chunk;chain_a;chain_b;chain_c [0-9]+$/) whole += n
		  if (index($0, ";string.rep")) { rep += n; if (index($0, "chain_c;string.rep")) under += n } }
		END { print total + 0, whole + 0, rep + 0, under + 0 }' "$TMP/$name.folded")"
	if [ "$total" -gt 200 ] && [ $((whole * 100)) -ge $((total * 98)) ]; then
		pass "lua_frames_chain_whole_$name"
	else
		fail "lua_frames_chain_whole_$name" "$whole of $total samples; $(grep '^lua:' <("$TALLY" report "$U/$name.data" 2>&1) | tr '\n' ' ')"
	fi
	if [ "$rep" -gt 20 ] && [ $((rep_under * 100)) -ge $((rep * 95)) ]; then
		pass "lua_frames_string_rep_under_caller_$name"
	else
		fail "lua_frames_string_rep_under_caller_$name" "$rep_under of $rep string.rep samples"
	fi
}

"$TALLY" record -q -F 1000 -o "$U/root.data" -- lua5.4 "$U/record_chain.lua" 2 \
	>"$TMP/root.out" 2>"$TMP/root.rec" && check root ||
	fail lua_frames_record_root "$(cat "$TMP/root.rec")"
"$ROOT/scripts/as-nobody.sh" "$U" "$TALLY" record -q -F 1000 -o "$U/nobody.data" -- \
	lua5.4 "$U/record_chain.lua" 2 >"$TMP/nobody.out" 2>"$TMP/nobody.rec" && check nobody ||
	fail lua_frames_record_nobody "$(cat "$TMP/nobody.rec")"
