-- The oracle of exact mode, in Lua alone: a count hook at every instruction (debug.sethook
-- with count 1) charges it to the running function, "FILE:LINEDEFINED COUNT" at the end.
-- A coroutine has hooks of its own: each one gets the counter too.
local counts, getinfo = {}, debug.getinfo
local function count()
	local i = getinfo(2, "S")
	local k = i.short_src .. ":" .. i.linedefined
	counts[k] = (counts[k] or 0) + 1
end
local create = coroutine.create
coroutine.create = function(f)
	local co = create(f)
	debug.sethook(co, count, "", 1)
	return co
end
coroutine.wrap = function(f)
	local co = coroutine.create(f)
	return function(...)
		local r = table.pack(coroutine.resume(co, ...))
		if not r[1] then error(r[2], 2) end
		return table.unpack(r, 2, r.n)
	end
end
debug.sethook(count, "", 1)
dofile(arg[1])
debug.sethook()
for k, v in pairs(counts) do print(k .. " " .. v) end
