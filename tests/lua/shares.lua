-- Sampled shares for tests/lua/lua.test.sh: hot, warm and cold run one loop body 3:2:1
-- times as long; cold is reached through chain_a and chain_b (a known call chain).
local function loop(n)
	local acc = 0
	for i = 1, n do acc = (acc * 3 ~ i) & 0xffffff end
	return acc
end
function hot(n) local a = 0; for i = 1, n do a = (a * 3 ~ i) & 0xffffff end return a end
function warm(n) local a = 0; for i = 1, n do a = (a * 3 ~ i) & 0xffffff end return a end
function cold(n) local a = 0; for i = 1, n do a = (a * 3 ~ i) & 0xffffff end return a end
function chain_b(n) local r = cold(n) return r end
function chain_a(n) local r = chain_b(n) return r end
local rounds = tonumber(os.getenv("ROUNDS") or "10")
local r = loop(1)
for _ = 1, rounds do r = r ~ hot(300000) ~ warm(200000) ~ chain_a(100000) end
print(r)
