-- bench/agent.sh's Lua program: a loop-heavy part (no call inside the loop) and a
-- call-heavy part (fib), ROUNDS times; the hooks cost per call, the loop almost nothing.
local function loop(n) local a = 0; for i = 1, n do a = (a * 3 ~ i) & 0xffffff end return a end
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local part = os.getenv("PART") or "both"
local r = 0
for _ = 1, tonumber(os.getenv("ROUNDS") or "10") do
	if part ~= "calls" then r = r ~ loop(3000000) end
	if part ~= "loop" then r = r ~ fib(27) end
end
print(r)
