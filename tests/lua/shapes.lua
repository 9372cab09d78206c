-- Stack shapes for the Lua walk's live test: arg[2] names one (co: a coroutine resumed by
-- outer; rec: 150 recursive calls; tail: a tail call; pcall: a function run by pcall,
-- after an error caught by another). Each ends calling hot, which loops for ever over
-- bytecode and string.rep; on that call's line it first writes Lua's view of the stack to
-- arg[1] (debug.getinfo, across threads for the coroutine: the resumed one's levels,
-- then its resumer's from the resume down): one line per level, innermost first, "what
-- source linedefined currentline name istailcall", then "hot LINEDEFINED", then "ready".
local out = assert(io.open(arg[1], "w"))
local main = coroutine.running()

local function describe(thread, from)
  for level = from, 400 do
    local info
    if thread then info = debug.getinfo(thread, level, "Slnt")
    else info = debug.getinfo(level, "Slnt") end
    if not info then break end
    out:write(string.format("%s %s %d %d %s %s\n", info.what, info.source,
                            info.linedefined, info.currentline, info.name or "?",
                            tostring(info.istailcall)))
  end
end

function oracle()
  describe(nil, 3)
  if coroutine.running() ~= main then describe(main, 0) end
  out:write(string.format("hot %d\nready\n", debug.getinfo(hot, "S").linedefined))
  out:close()
end

function hot()
  while true do
    local x = 0
    for i = 1, 20000 do x = x + i % 7 end
    local s = string.rep("ab", 100000)
  end
end

function body() oracle(); hot() end
function outer()
  local co = coroutine.create(body)
  coroutine.resume(co)
end

function rec(n)
  if n == 0 then oracle(); hot() else rec(n - 1) end
end

function tail_b() oracle(); hot() end
function tail_a() return tail_b() end

function pcall_b() oracle(); hot() end
function pcall_a()
  assert(not pcall(error, "caught"))
  pcall(pcall_b)
end

local shapes = { co = outer, rec = function() rec(150) end, tail = tail_a, pcall = pcall_a }
shapes[arg[2]]()
