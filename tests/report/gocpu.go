// A Go program that writes a CPU profile of itself: the pprof file "from another tool"
// that tally must read. Two hot functions, one small enough for the compiler to inline.
package main

import (
	"os"
	"runtime/pprof"
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
	end := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(end) {
		hashLoop(200000)
		sumLoop(100000)
	}
	pprof.StopCPUProfile()
	f.Close()
}
