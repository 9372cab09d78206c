# The chain workload of tests/ruby/: Chain#outer -> Chain#middle -> a block in middle (run
# by Array#each, a C method) -> Chain#leaf, whose loop is bytecode alone (phase one) or
# calls Array#sort, a C method (phase two). Each kind of leaf writes its caller_locations(0)
# once, from the loop's own line, to ORACLE: what every sample in that loop must show,
# innermost first, as "label<TAB>path<TAB>line" under a line "kind KIND". STARTED is
# written when the phases begin, after file GO exists when it is given (tally record -p
# has taken the process over). Usage: ruby chain.rb ORACLE STARTED SECONDS [GO]
ORACLE = File.open(ARGV[0], "w")
SECONDS = Float(ARGV[2])
ARRAY = Array.new(2000) { |i| (i * 7919) % 2003 }
$noted = {}

def note(kind, locations)
  return if $noted[kind]
  $noted[kind] = true
  ORACLE.puts "kind #{kind}"
  locations.each { |l| ORACLE.puts "#{l.label}\t#{l.path}\t#{l.lineno}" }
  ORACLE.flush
end

class Chain
  def outer(kind, n)
    middle(kind, n)
  end

  def middle(kind, n)
    [n].each { |k| leaf(kind, k) }
  end

  def leaf(kind, n)
    if kind == :bytecode
      note(kind, caller_locations(0)); i = 0; while i < n; i += 1; end
    else
      note(kind, caller_locations(0)); i = 0; a = ARRAY; while i < n; a.sort; i += 1; end
    end
  end
end

def phase(kind, n)
  chain = Chain.new
  stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + SECONDS
  chain.outer(kind, n) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
end

sleep 0.01 while ARGV[3] && !File.exist?(ARGV[3])
File.write(ARGV[1], "started\n")
phase(:bytecode, 2_000_000)
phase(:sort, 400)
