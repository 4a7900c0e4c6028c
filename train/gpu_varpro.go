package train

import (
	"fmt"
	"math"
	"math/cmplx"
	"runtime"
	"sync"
	"unsafe"
)

// gpuSums is sampleSums on a device, shared by the channels of one variable-projection job
// (fitProjection), which run concurrently on forEach's goroutines. The driver (varpro, the
// ladder) stays on the CPU; only its sums over the samples go to the device, float64
// throughout. One goroutine owns the device (bound to its thread for the job): it takes
// every request waiting when the device is free and serves them with one launch of each
// kernel (vp_project, vp_residual), so requests that arrive while a batch runs form the
// next. No channel waits for another's CPU work: a batch that waited for every channel ran
// at the pace of the slowest (4001 batches of 9 took 2.7 s on an H200 where the CPU's 16
// threads took 0.5 s). A device error is kept (err) and every later request gets NaNs,
// which end the fits quickly; the job then reports the error, so no fit is ever made of
// wrong sums.
type gpuSums struct {
	dev      device
	requests chan *sumsRequest
	stopped  chan struct{}
	workers  int // forEach's goroutines (0: the default; tests set fewer)

	mu      sync.Mutex
	err     error
	batches int // served, and the requests in them
	served  int
	closed  error // the device's close, once the server has stopped

	// The server's buffers, reused from batch to batch.
	arena devPtr
	size  int64
	stage []byte
	out   []float64
}

// gpuSumsBatch bounds a batch (the grid's second dimension takes up to 65535).
const gpuSumsBatch = 4096

// sumsRequest is one call of project (y nil) or residual (x nil; with v0 or v1, a
// residualProject).
type sumsRequest struct {
	b      poleBasis
	x, y   []float64
	v0, v1 []complex128
	c, e   []float64
	done   chan struct{}
}

// newGPUSums starts the server of dev's sums; close stops it and frees the device.
func newGPUSums(dev device) *gpuSums {
	g := &gpuSums{dev: dev, requests: make(chan *sumsRequest, gpuSumsBatch), stopped: make(chan struct{})}
	go g.serve()
	return g
}

func (g *gpuSums) project(b poleBasis, x []float64, v0, v1 []complex128) {
	g.submit(&sumsRequest{b: b, x: x, v0: v0, v1: v1})
}

func (g *gpuSums) residual(b poleBasis, c, y, e []float64) {
	g.submit(&sumsRequest{b: b, c: c, y: y, e: e})
}

// residualProject is residual and then project(b, e, v0, v1) on the device's e, in one
// round trip (residualProjector).
func (g *gpuSums) residualProject(b poleBasis, c, y, e []float64, v0, v1 []complex128) {
	g.submit(&sumsRequest{b: b, c: c, y: y, e: e, v0: v0, v1: v1})
}

// gpuSumsWorkers is how many channels a device job fits at once (GOMAXPROCS where that is
// more): they wait on the device part of the time, so more than the CPU's threads; not all
// of a bank, as a channel's ladder holds a few MB at n = 64, L = 1024.
const gpuSumsWorkers = 64

// forEach runs fn for channels 0…n−1 on max(gpuSumsWorkers, GOMAXPROCS) goroutines at most.
func (g *gpuSums) forEach(n int, fn func(int)) {
	workers := min(n, max(gpuSumsWorkers, runtime.GOMAXPROCS(0)))
	if g.workers > 0 {
		workers = min(n, g.workers)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
	if g.error() != nil {
		r.fail()
		return
	}
	r.done = make(chan struct{})
	g.requests <- r
	<-r.done
}

// serve is the device's goroutine: it serves batches until close, then frees the device.
func (g *gpuSums) serve() {
	defer close(g.stopped)
	release, err := g.dev.bind()
	if err != nil {
		g.fail(err)
		for r := range g.requests {
			r.fail()
			close(r.done)
		}
		return
	}
	defer release()
	batch := make([]*sumsRequest, 0, gpuSumsBatch)
	for r := range g.requests {
		batch = append(batch[:0], r)
	gather:
		for len(batch) < gpuSumsBatch {
			select {
			case r, ok := <-g.requests:
				if !ok {
					break gather
				}
				batch = append(batch, r)
			default:
				break gather
			}
		}
		err := g.error()
		if err == nil {
			if err = g.run(batch); err != nil {
				g.fail(err)
			}
		}
		g.mu.Lock()
		g.batches++
		g.served += len(batch)
		g.mu.Unlock()
		for _, r := range batch {
			if err != nil {
				r.fail()
			}
			close(r.done)
		}
	}
	err = g.dev.close()
	g.mu.Lock()
	g.closed = err
	g.mu.Unlock()
}

// fail keeps the first device error.
func (g *gpuSums) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = fmt.Errorf("train: gpu: variable projection: %w", err)
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

// counts returns the batches served and the requests in them.
func (g *gpuSums) counts() (batches, served int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.batches, g.served
}

// close stops the server once every submitted request is served (no channel may submit
// after it) and frees the device's memory on the server's thread.
func (g *gpuSums) close() error {
	close(g.requests)
	<-g.stopped
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// sumsLayout is a batch's arrays on the device, offsets into the arena in 8-byte words
// (meta at 0; see gpu_kernels.go).
type sumsLayout struct {
	w, x, c, out, end int64
}

// run serves the project requests and the residual requests of a batch, each kind with one
// launch, padded to the largest problem (P poles, M samples).
func (g *gpuSums) run(batch []*sumsRequest) error {
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

// launch uploads one kind's requests (one copy: the arrays are staged together), runs its
// kernel and downloads the results. Residual requests that want their residual projected
// (residualProject) get vp_project run on the residuals where vp_residual left them, and
// both results in the one download.
func (g *gpuSums) launch(rs []*sumsRequest, residual bool) error {
	P, M := 1, 1
	fused := false
	for _, r := range rs {
		P, M = max(P, len(r.b.w)), max(M, len(r.x)+len(r.y))
		fused = fused || residual && r.v0 != nil
	}
	R := len(rs)
	// The staged arrays in 8-byte words: meta int32 [R][4], w [R][P][2], x [R][M], c [R][P][2].
	var l sumsLayout
	l.w = 2 * int64(R)
	l.x = l.w + 2*int64(R*P)
	l.c = l.x + int64(R*M)
	l.out = l.c
	if residual {
		l.out += 2 * int64(R*P)
	}
	outLen := 4 * R * P
	if residual {
		outLen = R * M
		if fused {
			outLen += 4 * R * P
		}
	}
	l.end = l.out + int64(outLen)
	if err := g.reserve(8 * l.end); err != nil {
		return err
	}
	if int64(cap(g.stage)) < 8*l.out {
		g.stage = make([]byte, 8*l.out)
	}
	stage := g.stage[:8*l.out]
	clear(stage)
	words := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(stage))), l.out)
	meta := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(stage))), 4*R)
	w, x, c := words[l.w:l.x], words[l.x:l.c], words[l.c:l.out]
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
	a := g.arena
	at := func(word int64) devPtr { return a + devPtr(8*word) }
	if err := g.dev.upload(a, stage); err != nil {
		return err
	}
	if cap(g.out) < outLen {
		g.out = make([]float64, outLen)
	}
	out := g.out[:outLen]
	if residual {
		err := g.dev.launch(kVPResidual, ceilDiv(M, g.dev.blockSize()), R,
			packArgs(kVPResidual, at(0), at(l.w), at(l.c), at(l.x), P, M, at(l.out)))
		if err != nil {
			return err
		}
		em := int64(R * M)
		if fused {
			// Every request's residual is projected (the others' are dropped); meta says
			// which want the derivative sums.
			err := g.dev.launch(kVPProject, P, R, packArgs(kVPProject, at(0), at(l.w), at(l.out), P, M, at(l.out+em)))
			if err != nil {
				return err
			}
		}
		if err := g.dev.download(f64Bytes(out), at(l.out)); err != nil {
			return err
		}
		for i, r := range rs {
			copy(r.e, out[i*M:i*M+len(r.e)])
		}
		if fused {
			copyProjections(rs, out[em:], P)
		}
		return nil
	}
	err := g.dev.launch(kVPProject, P, R, packArgs(kVPProject, at(0), at(l.w), at(l.x), P, M, at(l.out)))
	if err != nil {
		return err
	}
	if err := g.dev.download(f64Bytes(out), at(l.out)); err != nil {
		return err
	}
	copyProjections(rs, out, P)
	return nil
}

// copyProjections gives each request that wants them its sums from vp_project's out
// ([R][P][4]: Re, Im of v0, then of v1).
func copyProjections(rs []*sumsRequest, out []float64, P int) {
	for i, r := range rs {
		if r.v0 == nil {
			continue
		}
		for p := range r.b.w {
			o := out[4*(i*P+p):]
			r.v0[p] = complex(o[0], o[1])
			if r.v1 != nil {
				r.v1[p] = complex(o[2], o[3])
			}
		}
	}
}

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
