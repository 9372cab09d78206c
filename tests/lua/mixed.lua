-- A Lua program for tests/lua/mixed.test.sh, run by tally.run under `tally record`: a
-- known call chain that spins in Lua, one in string.rep, one in table.sort's comparator.
-- At each, it prints the chain of the function calling show as Lua itself sees it (lua_getinfo
-- through debug.getinfo, C functions named as debug.traceback names them), outermost
-- first, in the module's names: "NAME (FILE:LINE)" for a Lua function, "NAME [C]" for a
-- C one.
local function chain()
	local names = {}
	for level = 3, 100 do -- 1 is chain, 2 show, 3 the function that calls show
		local info = debug.getinfo(level, "Sn")
		if not info then break end
		local name
		if info.what == "C" then
			local tb = debug.traceback("", level):match("\n%s*%[C%]: in ([^\n]*)") or ""
			name = (tb:match("function '([^']+)'") or "?") .. " [C]"
		else
			local called = info.name or (info.what == "main" and "main chunk") or "?"
			name = called .. " (" .. info.short_src .. ":" .. info.linedefined .. ")"
		end
		table.insert(names, 1, name)
	end
	return table.concat(names, ";")
end
local printed = {}
local function show(extra)
	local c = chain() .. (extra or "")
	if not printed[c] then print("chain " .. c); printed[c] = true end
end
local scale = tonumber(os.getenv("SCALE") or "10")
function spin(n) show(); local a = 0; for i = 1, n do a = (a * 3 ~ i) & 0xffffff end return a end
function reps(n) show(";string.rep [C]"); local s = 0; for _ = 1, n do s = s + #string.rep("ab", 200000) end return s end
local function cmp(a, b) if a == -1 then show() end return a > b end
function sorts(n)
	local t, r = {}, 0
	for j = 1, n do
		for i = 1, 100 do t[i] = (i * 7919 + j) % 1000 end
		t[1] = -1
		table.sort(t, cmp)
		r = r ~ t[1]
	end
	return r
end
function outer() return spin(300000 * scale) ~ reps(40 * scale) ~ sorts(300 * scale) end
local r = outer()
show(";print [C]")
print(r)
