# The churn workload of tests/ruby/churn.test.sh: stacks that change fast, in three threads
# besides the main one. "recurse": a recursion of random depth into a block; "fiber": a
# Fiber that recurses and yields from inside, resumed in a loop; "raise": a recursion whose
# block raises, rescued at the top. Writes STARTED when the threads run; each runs SECONDS.
# Usage: ruby churn.rb UNUSED STARTED SECONDS
SECONDS = Float(ARGV[2])

def spin
  i = 0; i += 1 while i < 3000
end

def rec(n, &blk)
  n.zero? ? blk.call : rec(n - 1, &blk)
end

def until_stop
  stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + SECONDS
  yield while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
end

def t_recurse
  until_stop { rec(rand(30)) { spin } }
end

def t_fiber
  fiber = Fiber.new { loop { rec(rand(10)) { spin; Fiber.yield } } }
  until_stop { fiber.resume; spin }
end

def t_raise
  until_stop do
    begin
      rec(rand(5)) { spin; raise ArgumentError }
    rescue ArgumentError
      spin
    end
  end
end

threads = [Thread.new { t_recurse }, Thread.new { t_fiber }, Thread.new { t_raise }]
File.write(ARGV[1], "started\n")
threads.each(&:join)
