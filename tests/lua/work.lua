-- A Lua program for tests/lua/lua.test.sh: loops, a tail call, C functions called from
-- Lua (string.rep, table.sort with a Lua comparator), recursion, a coroutine, and an error caught by
-- pcall (frames unwound without return hooks). Deterministic: no pairs, no time, no
-- random pivot.
local function body(n)
	local acc = 0
	for i = 1, n do acc = (acc * 3 ~ i) & 0xffffff end
	return acc
end
function hot(n) return body(n) end
function warm(n) local a = 0; for i = 1, n do a = (a * 3 ~ i) & 0xffffff end return a end
function reps(n) local s = 0; for i = 1, n do s = s + #string.rep("ab", 1000) end return s end
local function cmp(a, b) return a > b end
-- Arrays of 100: table.sort picks a random pivot in larger ones, which would make the
-- comparator's count vary from run to run.
function sorts(n)
	local t, r = {}, 0
	for j = 1, n do
		for i = 1, 100 do t[i] = (i * 7919 + j) % 1000 end
		table.sort(t, cmp)
		r = r ~ t[1]
	end
	return r
end
function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function deep() error("caught") end
-- A generator: its frames live in another lua_State, resumed and left at each value.
local function gen(n) for i = 1, n do coroutine.yield(i * i) end end
local function drain(n)
	local co, s = coroutine.wrap(gen), 0
	for _ = 1, n do s = s + co(n) end
	return s
end
local scale = tonumber(os.getenv("SCALE") or "10")
local r = 0
for _ = 1, scale do
	r = r ~ hot(30000) ~ warm(20000) ~ reps(200) ~ sorts(20) ~ fib(15) ~ drain(50)
	local ok = pcall(function() deep() end)
	r = r ~ (ok and 1 or 0)
end
print(r)
