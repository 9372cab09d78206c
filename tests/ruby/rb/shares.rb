# The shares workload of tests/ruby/shares.test.sh: two methods with the same loop, run one
# after the other, the second three times as long. "count": Ruby's TracePoint counts the
# :line events each executes over one round (the deterministic account of their work) and
# writes "METHOD COUNT" lines to OUT; "run": rounds for SECONDS, STARTED written first.
# Usage: ruby shares.rb OUT STARTED SECONDS count|run
def work_a(n)
  i = 0
  while i < n
    i += 1
  end
end

def work_b(n)
  i = 0
  while i < n
    i += 1
  end
end

def round
  work_a(100_000)
  work_b(300_000)
end

if ARGV[3] == "count"
  counts = Hash.new(0)
  TracePoint.new(:line) { |tp| counts[tp.method_id] += 1 }.enable { round }
  File.write(ARGV[0], counts.map { |m, n| "#{m} #{n}\n" }.join)
else
  File.write(ARGV[1], "started\n")
  stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[2])
  round while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
end
