# Mixed mode of the Lua 5.4 module (build/lua/tally.so) under `tally record`, against Lua
# itself: mixed.lua prints, at known points, its call chain as debug.getinfo and
# debug.traceback see it (the oracle); run by tally.run with TALLY_LUA_MODE=mixed, every
# sampled stack of the script has its Lua frames as one block in place of tally.run's
# native frame, in the order of one of those chains (a prefix of it); string.rep and
# table.sort (with the Lua comparator it calls above it) appear under their Lua caller,
# string.rep's native work above them. With --no-lua: the frames tested are the module's,
# not those tally record reads itself (tests/lua/frames.test.sh).
. tests/lib.sh

NAME=lua_mixed
. tests/lua/module.sh
cp "$ROOT/tests/lua/mixed.lua" "$TMP/"
cd "$TMP" || exit 1
mkdir m.data.jit
if ! lua_tally TALLY_LUA_MODE=mixed \
	TALLY_LUA_REGISTRY_DIR=m.data.jit SCALE=3 "$TALLY" record -F 1999 --no-lua -o m.data -- \
	lua5.4 -ltally -e 'tally.run(dofile, "mixed.lua")' >m.out 2>&1; then
	fail lua_mixed_records "$(tail -3 m.out)"
	exit 0
fi
sed -n 's/^chain //p' m.out >chains
if [ "$(wc -l <chains)" != 4 ]; then
	fail lua_mixed_oracle "mixed.lua printed: $(head -5 m.out)"
	exit 0
fi
"$TALLY" export -f folded --kinds -o m.folded m.data 2>export.err

# Per stack of the script: its VM frames (a name ending in "(FILE:LINE)" or "[C]"), one
# block, a prefix of an oracle chain (up to show, which prints them). "ok SAMPLES REP SORT"
# or the first bad stack.
verdict=$(awk -v chains=chains '
	BEGIN { while ((getline l < chains) > 0) { oracle[++no] = l } }
	function is_vm(f) { return f ~ / \(.*:[0-9]+\)$/ || f ~ / \[C\]$/ }
	function bad(why) { print why ": " $0; broken = 1; exit 1 }
	/mixed\.lua/ {
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		for (i = 1; i <= k && !is_vm(f[i]); i++);
		for (j = i; j < k && is_vm(f[j + 1]); j++);
		for (h = j + 1; h <= k; h++) if (is_vm(f[h])) bad("VM frame " f[h] " after native " f[j + 1])
		# the oracle'"'"'s own printing (show and what it calls) is cut off
		vm = f[i]; for (h = i + 1; h <= j && f[h] !~ /^show \(/; h++) vm = vm ";" f[h]
		# a C method Lua calls by itself, unnamed: string.rep closes its buffer'"'"'s box
		sub(/;\? \[C\]$/, "", vm)
		ok = 0
		for (o = 1; o <= no && !ok; o++) ok = oracle[o] == vm || index(oracle[o], vm ";") == 1
		if (!ok) bad("chain " vm " is none of Lua'"'"'s")
		total += n
		if (vm ~ /;string\.rep \[C\]$/ && j < k) rep += n
		if (f[j - 1] == "table.sort [C]" && f[j] ~ /^\? \(mixed\.lua:[0-9]+\)$/) sort += n
	}
	END { if (!broken) print "ok", total + 0, rep + 0, sort + 0 }' m.folded)
read -r ok total rep sort <<<"$verdict"
samples=$(awk '{ s += $NF } END { print s + 0 }' m.folded)
if [ "$ok" != ok ]; then
	fail lua_mixed_frames_in_order "$verdict"
elif [ "$total" -lt $((samples * 9 / 10)) ] || [ "$rep" -lt 5 ] || [ "$sort" -lt 5 ]; then
	fail lua_mixed_frames_in_order "of $samples samples: $total with Lua frames, $rep in string.rep, $sort in the comparator; $(grep '^vm:' <("$TALLY" report m.data 2>&1))"
else
	pass lua_mixed_frames_in_order
fi
