package train

import (
	"fmt"
	"math"
	"math/cmplx"
	"runtime"
	"sync"
)

// gpuSums is sampleSums on a device, shared by the channels of one variable-projection job
// (fitProjection), which run concurrently on forEach's goroutines. The driver (varpro, the
// ladder) stays on the CPU; only its sums over the samples go to the device, batched: a
// request waits until every live goroutine has one waiting (or gpuSumsBatch are), and the
// last to arrive serves them all with one launch of each kernel (vp_project, vp_residual),
// float64 throughout. A device error is kept (err) and every later request gets NaNs, which end the
// fits quickly; the job then reports the error, so no fit is ever made of wrong sums.
type gpuSums struct {
	dev device

	mu      sync.Mutex
	live    int // forEach's goroutines that have not left
	workers int // forEach's goroutines (0: the default; tests set fewer)
	queue   []*sumsRequest
	err     error

	devMu   sync.Mutex // one batch on the device at a time
	arena   devPtr
	size    int64
	batches int // served, and the requests in them (devMu held)
	served  int
}

// gpuSumsBatch bounds a batch (the grid's second dimension takes up to 65535).
const gpuSumsBatch = 4096

// sumsRequest is one call of project (y nil) or residual (x nil).
type sumsRequest struct {
	b      poleBasis
	x, y   []float64
	v0, v1 []complex128
	c, e   []float64
	done   chan struct{}
}

func newGPUSums(dev device) *gpuSums { return &gpuSums{dev: dev} }

func (g *gpuSums) project(b poleBasis, x []float64, v0, v1 []complex128) {
	g.submit(&sumsRequest{b: b, x: x, v0: v0, v1: v1})
}

func (g *gpuSums) residual(b poleBasis, c, y, e []float64) {
	g.submit(&sumsRequest{b: b, c: c, y: y, e: e})
}

// gpuSumsWorkers is how many channels a device job fits at once (GOMAXPROCS where that is
// more): they wait on the device most of the time, so more than the CPU's threads, and a
// batch holds a request of each; not all of a bank, as a channel's ladder holds a few MB
// at n = 64, L = 1024.
const gpuSumsWorkers = 64

// forEach runs fn for channels 0…n−1 on max(gpuSumsWorkers, GOMAXPROCS) goroutines at most
// (it serves one job at a time), each leaving once no channel is left for it.
func (g *gpuSums) forEach(n int, fn func(int)) {
	workers := min(n, max(gpuSumsWorkers, runtime.GOMAXPROCS(0)))
	if g.workers > 0 {
		workers = min(n, g.workers)
	}
	g.mu.Lock()
	g.live = workers
	g.mu.Unlock()
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.leave()
			for ch := range next {
				fn(ch)
			}
		}()
	}
	for ch := range n {
		next <- ch
	}
	close(next)
	wg.Wait()
}

// submit queues r and returns once it is served.
func (g *gpuSums) submit(r *sumsRequest) {
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		r.fail()
		return
	}
	r.done = make(chan struct{})
	g.queue = append(g.queue, r)
	batch := g.takeBatch()
	g.mu.Unlock()
	if batch != nil {
		g.serve(batch)
	}
	<-r.done
}

// leave is a channel's goroutine's last call: a batch no longer waits for it.
func (g *gpuSums) leave() {
	g.mu.Lock()
	g.live--
	batch := g.takeBatch()
	g.mu.Unlock()
	if batch != nil {
		g.serve(batch)
	}
}

// takeBatch returns the queue once every live channel waits in it or it is full (g.mu held).
func (g *gpuSums) takeBatch() []*sumsRequest {
	if len(g.queue) == 0 || len(g.queue) < g.live && len(g.queue) < gpuSumsBatch {
		return nil
	}
	b := g.queue
	g.queue = nil
	return b
}

// serve runs a batch on the device and wakes its requests.
func (g *gpuSums) serve(batch []*sumsRequest) {
	g.devMu.Lock()
	err := g.run(batch)
	g.batches++
	g.served += len(batch)
	g.devMu.Unlock()
	if err != nil {
		g.mu.Lock()
		if g.err == nil {
			g.err = fmt.Errorf("train: gpu: variable projection: %w", err)
		}
		g.mu.Unlock()
	}
	for _, r := range batch {
		if err != nil {
			r.fail()
		}
		close(r.done)
	}
}

// fail fills r's outputs with NaN.
func (r *sumsRequest) fail() {
	nan := math.NaN()
	for i := range r.v0 {
		r.v0[i] = complex(nan, nan)
	}
	for i := range r.v1 {
		r.v1[i] = complex(nan, nan)
	}
	for i := range r.e {
		r.e[i] = nan
	}
}

// error returns the first device error, if any.
func (g *gpuSums) error() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// close frees the device's memory, bound to the calling goroutine's thread.
func (g *gpuSums) close() error {
	release, err := g.dev.bind()
	if err != nil {
		return err
	}
	defer release()
	return g.dev.close()
}

// sumsLayout is a batch's arrays on the device, offsets into the arena (see gpu_kernels.go).
type sumsLayout struct {
	meta, w, x, c, out int64
	end                int64
}

// run serves the project requests and the residual requests of a batch, each kind with one
// launch, padded to the largest problem (P poles, M samples).
func (g *gpuSums) run(batch []*sumsRequest) error {
	release, err := g.dev.bind()
	if err != nil {
		return err
	}
	defer release()
	var proj, res []*sumsRequest
	for _, r := range batch {
		if r.y == nil {
			proj = append(proj, r)
		} else {
			res = append(res, r)
		}
	}
	for _, part := range [][]*sumsRequest{proj, res} {
		if len(part) == 0 {
			continue
		}
		if err := g.launch(part, part[0].y != nil); err != nil {
			return err
		}
	}
	return nil
}

// launch uploads one kind's requests, runs its kernel and downloads the results.
func (g *gpuSums) launch(rs []*sumsRequest, residual bool) error {
	P, M := 1, 1
	for _, r := range rs {
		P, M = max(P, len(r.b.w)), max(M, len(r.x)+len(r.y))
	}
	R := len(rs)
	meta := make([]int32, 4*R)
	w := make([]float64, 2*R*P)
	x := make([]float64, R*M)
	var c []float64
	if residual {
		c = make([]float64, 2*R*P)
	}
	for i, r := range rs {
		samples := r.x
		if residual {
			samples = r.y
			copy(c[2*i*P:], r.c)
		}
		meta[4*i], meta[4*i+1], meta[4*i+2] = int32(len(r.b.w)), int32(r.b.pairs), int32(len(samples))
		if r.v1 != nil {
			meta[4*i+3] = 1
		}
		for p, lw := range r.b.w {
			// A pair's angle parameter is not wrapped (it reached 1055.65 on a trained
			// channel), and τ·θ would round to 3e-11 there: the kernels get the pole's
			// own angle, in (−π, π].
			th := imag(lw)
			if p < r.b.pairs {
				th = cmplx.Phase(r.b.mu[p])
			}
			w[2*(i*P+p)], w[2*(i*P+p)+1] = real(lw), th
		}
		copy(x[i*M:], samples)
	}
	outLen := 4 * R * P
	if residual {
		outLen = R * M
	}
	var l sumsLayout
	l.meta = 0
	l.w = align8(l.meta + 4*int64(len(meta)))
	l.x = l.w + 8*int64(len(w))
	l.c = l.x + 8*int64(len(x))
	l.out = l.c + 8*int64(len(c))
	l.end = l.out + 8*int64(outLen)
	if err := g.reserve(l.end); err != nil {
		return err
	}
	a := g.arena
	for _, up := range []struct {
		off int64
		b   []byte
	}{{l.meta, i32Bytes(meta)}, {l.w, f64Bytes(w)}, {l.x, f64Bytes(x)}, {l.c, f64Bytes(c)}} {
		if len(up.b) > 0 {
			if err := g.dev.upload(a+devPtr(up.off), up.b); err != nil {
				return err
			}
		}
	}
	out := make([]float64, outLen)
	if residual {
		err := g.dev.launch(kVPResidual, ceilDiv(M, g.dev.blockSize()), R,
			packArgs(kVPResidual, a+devPtr(l.meta), a+devPtr(l.w), a+devPtr(l.c), a+devPtr(l.x), P, M, a+devPtr(l.out)))
		if err != nil {
			return err
		}
		if err := g.dev.download(f64Bytes(out), a+devPtr(l.out)); err != nil {
			return err
		}
		for i, r := range rs {
			copy(r.e, out[i*M:i*M+len(r.e)])
		}
		return nil
	}
	err := g.dev.launch(kVPProject, P, R, packArgs(kVPProject, a+devPtr(l.meta), a+devPtr(l.w), a+devPtr(l.x), P, M, a+devPtr(l.out)))
	if err != nil {
		return err
	}
	if err := g.dev.download(f64Bytes(out), a+devPtr(l.out)); err != nil {
		return err
	}
	for i, r := range rs {
		for p := range r.b.w {
			o := out[4*(i*P+p):]
			r.v0[p] = complex(o[0], o[1])
			if r.v1 != nil {
				r.v1[p] = complex(o[2], o[3])
			}
		}
	}
	return nil
}

func align8(n int64) int64 { return (n + 7) &^ 7 }

// reserve makes the arena at least bytes long (growing it by half again, so a job's batches
// allocate a few times at most; the device frees its allocations when closed).
func (g *gpuSums) reserve(bytes int64) error {
	if bytes <= g.size {
		return nil
	}
	size := max(bytes, g.size+g.size/2, 1<<16)
	p, err := g.dev.alloc(size)
	if err != nil {
		return err
	}
	g.arena, g.size = p, size
	return nil
}
