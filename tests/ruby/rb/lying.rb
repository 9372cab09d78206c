# The lying workload of tests/ruby/lying.test.sh: Ruby structures made to lie in place, with
# Fiddle, while their frames are read. Every lie is told with a live object of another type
# (so that Ruby's GC, which marks these fields, still finds objects) and never read by Ruby
# while it stands (no backtrace is taken, the loops allocate nothing).
#   label: Liar#bad_label's iseq has an Array for its label and a Hash for its path;
#   frame: while Liar#bad_frame loops, its caller's control frame names a String as its iseq
#          (put back before it returns).
# Writes "phase NAME" to PHASES before each phase and "done" at the end; STARTED when they
# begin. Usage: ruby lying.rb PHASES STARTED SECONDS
require "fiddle"

PHASES = File.open(ARGV[0], "w")
SECONDS = Float(ARGV[2])
KEEP = [[1, 2, 3], { a: 1 }, "not an iseq"]

def word(addr) = Fiddle::Pointer.new(addr)[0, 8].unpack1("Q")
def put(addr, v) = Fiddle::Pointer.new(addr)[0, 8] = [v].pack("Q")

# rb_iseq_t of a method: the InstructionSequence is typed data (RBasic, type, typed_flag,
# data: the iseq at 32).
def iseq_of(m) = word(Fiddle.dlwrap(RubyVM::InstructionSequence.of(m)) + 32)

def until_stop(stop)
  i = 0; i += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
end

class Liar
  def bad_label(stop)
    until_stop(stop)
  end

  def bad_frame(stop, caller_iseq)
    ec = word(Fiddle::Handle::DEFAULT["ruby_current_ec"])
    cfp = word(ec + 16)
    cfp += 64 until word(cfp + 16) == caller_iseq # the caller's frame (Fiddle's own are inner)
    put(cfp + 16, Fiddle.dlwrap(KEEP[2]))
    until_stop(stop)
  ensure
    put(cfp + 16, caller_iseq) if cfp
  end

  def frame_caller(stop)
    bad_frame(stop, iseq_of(method(:frame_caller)))
  end
end

def phase(name)
  PHASES.puts "phase #{name}"
  PHASES.flush
  yield Process.clock_gettime(Process::CLOCK_MONOTONIC) + SECONDS
end

liar = Liar.new
body = word(iseq_of(liar.method(:bad_label)) + 16)
File.write(ARGV[1], "started\n")
phase("label") do |stop|
  put(body + 80, Fiddle.dlwrap(KEEP[0]))
  put(body + 64, Fiddle.dlwrap(KEEP[1]))
  liar.bad_label(stop)
end
phase("frame") { |stop| liar.frame_caller(stop) }
PHASES.puts "done"
