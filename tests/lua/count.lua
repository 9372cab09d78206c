-- The oracle of exact mode, in Lua alone: a count hook at every instruction (debug.sethook
-- with count 1) charges it to the running function, "FILE:LINEDEFINED COUNT" at the end.
local counts, getinfo = {}, debug.getinfo
debug.sethook(function()
	local i = getinfo(2, "S")
	local k = i.short_src .. ":" .. i.linedefined
	counts[k] = (counts[k] or 0) + 1
end, "", 1)
dofile(arg[1])
debug.sethook()
for k, v in pairs(counts) do print(k .. " " .. v) end
