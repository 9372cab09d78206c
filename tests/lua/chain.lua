-- The chain workload: main chunk -> chain_a -> chain_b -> chain_c, which loops over a
-- bytecode leaf (leaf) and a C leaf (string.rep). Before it loops it writes Lua's own
-- view of the frames (debug.getinfo, as debug.traceback reads them) to arg[1]: one line
-- per level "what source linedefined currentline name" (name "?" when Lua gives none),
-- then the lines its calls sit on.
local out = assert(io.open(arg[1], "w"))

function leaf(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end

local function describe(from)
  for level = from, 20 do
    local info = debug.getinfo(level, "Sln")
    if not info then break end
    out:write(string.format("%s %s %d %d %s\n", info.what, info.source, info.linedefined,
                            info.currentline, info.name or "?"))
  end
end

function chain_c()
  describe(3)
  local leaf_line = debug.getinfo(1, "l").currentline + 6
  local rep_line = leaf_line + 1
  out:write(string.format("calls %d %d %d\n", debug.getinfo(1, "S").linedefined, leaf_line, rep_line))
  out:write("ready\n")
  out:close()
  while true do
    leaf(20000)
    local s = string.rep("ab", 200000)
  end
end

function chain_b() chain_c() end
function chain_a() chain_b() end
chain_a()
