// A Go program that writes a CPU profile of itself: the pprof file "from another tool"
// that tally must read. Two hot functions, one small enough for the compiler to inline.
package main

import (
	"os"
	"runtime/pprof"
	"syscall"
	"time"
)

var sink uint64

func mix(x uint64) uint64 { return x*0x9e3779b97f4a7c15 ^ x>>29 }

//go:noinline
func hashLoop(n int) {
	for i := 0; i < n; i++ {
		sink = mix(sink + uint64(i))
	}
}

//go:noinline
func sumLoop(n int) {
	for i := 0; i < n; i++ {
		sink += uint64(i) * 3
	}
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	// 400 ms of the process's CPU time, not of the clock: on a loaded machine a wall-clock
	// bound left hashLoop 2 samples (CI run 11), and the profile counts CPU time.
	for cpuTime() < 400*time.Millisecond {
		hashLoop(200000)
		sumLoop(100000)
	}
	pprof.StopCPUProfile()
	f.Close()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
