package analysis

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelWorkers runs fn's items 0 … n-1 on up to GOMAXPROCS goroutines. newWorker is called
// once per goroutine and returns the function that processes one item, so that each goroutine
// can own its workspace. Items are handed out one at a time from an atomic counter.
func parallelWorkers(n int, newWorker func() func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		if n > 0 {
			do := newWorker()
			for i := 0; i < n; i++ {
				do(i)
			}
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do := newWorker()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(i)
			}
		}()
	}
	wg.Wait()
}
