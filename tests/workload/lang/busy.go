// The language matrix's Go program: goroutines busy in their own call
// chains until the process has used SECONDS of CPU time (however busy the
// machine). Go keeps frame pointers. Build: go build -o busy busy.go
package main

import (
	"crypto/sha256"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:noinline
func hashWork(n int) [32]byte {
	var sum [32]byte
	for i := 0; i < n; i++ {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

//go:noinline
func sortWork(n int) int {
	v := make([]int, n)
	for i := range v {
		v[i] = (i * 7919) % n
	}
	sort.Ints(v)
	return v[n/2]
}

func worker(seconds time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	for cpuTime() < seconds {
		hashWork(2000)
		sortWork(20000)
	}
}

func main() {
	s, _ := strconv.ParseFloat(os.Args[1], 64)
	limit := time.Duration(s * float64(time.Second))
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go worker(limit, &wg)
	}
	wg.Wait()
}
