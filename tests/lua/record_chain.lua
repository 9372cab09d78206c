-- The chain workload for tally record (tests/lua/frames.test.sh): main chunk -> chain_a ->
-- chain_b -> chain_c, which alternates a bytecode leaf (leaf) and a C leaf (string.rep)
-- for arg[1] seconds of CPU time, then prints the chain as debug.traceback names it.
local seconds = tonumber(arg[1]) or 1

function leaf(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end

function chain_c()
  local stop = os.clock() + seconds
  while os.clock() < stop do
    leaf(20000)
    local s = string.rep("ab", 100000)
  end
  print(debug.traceback("chain", 1))
end

function chain_b() chain_c() end
function chain_a() chain_b() end
chain_a()
