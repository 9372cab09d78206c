// A Go program for tally's Go tests (tests/unwind/go_stacks.test.sh,
// tests/symbolize/go_pclntab.test.sh): goroutines started from three places (main, a
// function that spawns, and a goroutine that starts another) each run the same round of
// work, split 1:2:3 between hotA, hotB and hotC (leaves: their shares do not depend on
// how their callers are found), for SECONDS of wall time. With
// -cpuprofile FILE it also writes Go's own CPU profile (runtime/pprof), the oracle for
// the shares. With -addrs it prints the entry of each hot function and exits.
package main

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime/pprof"
	"sync"
	"time"
)

var sink [4]float64

//go:noinline
func hotA(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 0.25
	}
	return x
}

//go:noinline
func hotB(n int) float64 {
	x := 2.0
	for i := 0; i < 2*n; i++ {
		x = x*1.0000001 + 0.25
	}
	return x
}

//go:noinline
func hotC(n int) float64 {
	x := 3.0
	for i := 0; i < 3*n; i++ {
		x = x*1.0000001 + 0.25
	}
	return x
}

func round(slot int) {
	sink[slot] += hotA(20000)
	sink[slot] += hotB(20000)
	sink[slot] += hotC(20000)
}

func work(slot int, until time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	for time.Now().Before(until) {
		round(slot)
	}
}

//go:noinline
func spawn(slot int, until time.Time, wg *sync.WaitGroup) {
	wg.Add(1)
	go work(slot, until, wg)
}

func main() {
	seconds := flag.Float64("seconds", 2, "how long the goroutines run")
	cpuprofile := flag.String("cpuprofile", "", "write Go's own CPU profile here")
	addrs := flag.Bool("addrs", false, "print the hot functions' entries and exit")
	flag.Parse()
	if *addrs {
		for _, f := range []interface{}{hotA, hotB, hotC, round} {
			fmt.Printf("0x%x\n", reflect.ValueOf(f).Pointer())
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	until := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	var wg sync.WaitGroup
	wg.Add(1)
	go work(0, until, &wg)
	spawn(1, until, &wg)
	wg.Add(1)
	go func() {
		spawn(2, until, &wg)
		work(3, until, &wg)
	}()
	wg.Wait()
	fmt.Println(sink[0] > 0)
}
