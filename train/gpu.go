package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unsafe"
)

// ErrNoGPU marks DetectGPU's answer on a machine (or a build) without a usable GPU; the
// error's text says why in one line.
var ErrNoGPU = errors.New("no GPU")

// ErrGPUUnsupported marks a job the GPU backend does not run (a modal or rotation model, a
// training task, the freq loss); the CPU backend runs every job.
var ErrGPUUnsupported = errors.New("not supported by the GPU backend")

// Info describes the GPU that DetectGPU found and the libraries it loaded.
type Info struct {
	Device            string   `json:"device"`
	MemoryBytes       uint64   `json:"memory_bytes"`
	ComputeCapability string   `json:"compute_capability"`
	Multiprocessors   int      `json:"multiprocessors"`
	Driver            string   `json:"driver"` // the CUDA version the driver supports
	NVRTC             string   `json:"nvrtc"`
	CUFFT             string   `json:"cufft"`
	Libraries         []string `json:"libraries"` // the files loaded: libcuda, libnvrtc, libcufft
}

// String is the one-line description ssmlab backends prints.
func (i Info) String() string {
	return fmt.Sprintf("%s, %.1f GiB, compute capability %s, %d SMs; driver CUDA %s, NVRTC %s, cuFFT %s",
		i.Device, float64(i.MemoryBytes)/(1<<30), i.ComputeCapability, i.Multiprocessors, i.Driver, i.NVRTC, i.CUFFT)
}

// DetectGPU loads the CUDA driver, NVRTC and cuFFT (once per process) and describes device 0
// (CUDA_VISIBLE_DEVICES picks which device that is). Without one, the error wraps ErrNoGPU
// and says why in one line: a library not found (and where it was looked for), no device.
func DetectGPU() (Info, error) { return detectGPU() }

// GPU is the CUDA backend. It runs the rtf model's distillation (losses mse and relative,
// constraints none, l1_montel and radius) with the whole bank on the device: the state-free
// kernel and its analytic gradient through batched cuFFT transforms, the loss, Adam and the
// stability check in kernels of its own, one launch sequence per step on one stream. Other
// jobs fail with ErrGPUUnsupported.
//
// The arithmetic mirrors the CPU backend's. Parameters, Adam's moments, the pointwise
// spectral products and every sum are float64; the transforms and the L-long arrays are
// float32 unless Float64 is set. A float32 transform's normwise error of about 1e-7 reaches
// the kernel and the gradient multiplied by up to the condition max|A|/min|A| of the
// denominator on the unit circle, so float32 runs agree with the CPU to about 1e-7 times
// that condition.
type GPU struct {
	// Float64 runs the transforms and the L-long arrays in double precision.
	Float64 bool

	open func(f64 bool) (device, error) // nil: the CUDA device; tests put an emulator here
}

// Name returns "gpu".
func (GPU) Name() string { return "gpu" }

// Start uploads the problem, compiles the kernels on first use and plans the transforms.
func (g GPU) Start(p *Problem) (Trainer, error) {
	job, err := gpuJobOf(p)
	if err != nil {
		return nil, err
	}
	open := g.open
	if open == nil {
		open = openCUDA
	}
	dev, err := open(g.Float64)
	if err != nil {
		return nil, err
	}
	t := &gpuTrainer{dev: dev, job: job, spec: p.Spec, total: p.Spec.Steps, f64: g.Float64}
	release, err := dev.bind()
	if err != nil {
		dev.close()
		return nil, err
	}
	defer release()
	if err := t.setup(p); err != nil {
		dev.close()
		return nil, err
	}
	return t, nil
}

// gpuJob is a Problem the GPU backend can run: rtf channels of one shape against distillation
// targets (targets[ch]; a race of two starts per channel serves each target twice).
type gpuJob struct {
	m       *rtfModel
	targets [][]float64
	norms   []float64 // ‖y‖² per channel
	escale  []float64 // ∂loss/∂k = 2(k − y)·escale, loss = Σ(k − y)²·escale
}

func gpuUnsupported(what string) error {
	return fmt.Errorf("%s: %w (use the cpu backend)", what, ErrGPUUnsupported)
}

func gpuJobOf(p *Problem) (*gpuJob, error) {
	if len(p.models) == 0 {
		return nil, invalidf("the problem has no channels")
	}
	m, ok := p.models[0].(*rtfModel)
	if !ok {
		return nil, gpuUnsupported("the " + string(p.Spec.Model) + " model")
	}
	if m.n > gpuMaxOrder {
		return nil, gpuUnsupported(fmt.Sprintf("order %d (its kernels take orders up to %d)", m.n, gpuMaxOrder))
	}
	for i, mi := range p.models {
		r, ok := mi.(*rtfModel)
		if !ok || r.n != m.n || r.length != m.length || r.montel != m.montel {
			return nil, gpuUnsupported(fmt.Sprintf("channel %d's model differs from channel 0's", i))
		}
		if len(p.Params[i]) != m.numParams() {
			return nil, fmt.Errorf("train: channel %d has %d parameters, its model takes %d", i, len(p.Params[i]), m.numParams())
		}
	}
	obj, period := p.obj, len(p.models)
	if o, ok := obj.(*doubled); ok {
		obj, period = o.objective, o.d
	}
	dist, ok := obj.(*distill)
	if !ok {
		return nil, gpuUnsupported("training tasks (sysid, delay)")
	}
	if dist.kind != "mse" && dist.kind != "relative" {
		return nil, gpuUnsupported("the " + string(dist.kind) + " loss")
	}
	job := &gpuJob{m: m}
	for ch := range p.models {
		i := ch % period
		y := dist.targets[i]
		if len(y) != m.length {
			return nil, fmt.Errorf("train: target %d has %d samples, the model %d", i, len(y), m.length)
		}
		es := 1 / float64(m.length)
		if dist.kind == "relative" {
			es = 1 / math.Max(dist.norms[i], 1e-300)
		}
		job.targets = append(job.targets, y)
		job.norms = append(job.norms, dist.norms[i])
		job.escale = append(job.escale, es)
	}
	return job, nil
}

// devPtr is a device address; arithmetic on it addresses into an allocation.
type devPtr uint64

// fftDir is the direction of a batched real transform: forward (real → half spectrum) or
// inverse (half spectrum → real, unnormalised, possibly overwriting its input).
type fftDir int

const (
	fftForward fftDir = iota
	fftInverse
)

// device is what the GPU trainer needs of a device: memory, launches of the kernels in
// gpuSource by name, and batched real FFTs (in the precision the device was opened with).
// Work is queued in order on one stream; download waits for it. The CUDA implementation is
// in gpu_cuda.go, a CPU emulation for tests in gpu_emu_test.go.
type device interface {
	// bind readies the calling goroutine for the device's calls (locks it to its thread and
	// makes the context current) until release is called.
	bind() (release func(), err error)
	alloc(bytes int64) (devPtr, error)
	upload(dst devPtr, src []byte) error
	download(dst []byte, src devPtr) error
	copy(dst, src devPtr, bytes int64) error
	zero(dst devPtr, bytes int64) error
	// launch queues kernel name on a grid of gx × gy blocks of blockSize() threads; args
	// holds one 8-byte slot per parameter (see packArgs).
	launch(name string, gx, gy int, args []uint64) error
	blockSize() int
	// plan makes a batch of transforms of n points, batch elements contiguous.
	plan(dir fftDir, n, batch int) (int, error)
	fft(plan int, in, out devPtr) error
	// close waits for the queued work and frees everything.
	close() error
}

// kernelSig is a kernel's parameter kinds, one letter each: p a pointer, i an int, d a double.
type kernelSig string

var kernelSigs = parseKernelSigs(gpuSource)

var kernelRE = regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)

// parseKernelSigs reads the extern "C" __global__ functions of src and their parameters.
func parseKernelSigs(src string) map[string]kernelSig {
	out := map[string]kernelSig{}
	for _, m := range kernelRE.FindAllStringSubmatch(src, -1) {
		var sig strings.Builder
		for _, param := range strings.Split(m[2], ",") {
			f := strings.Fields(param)
			typ := strings.Join(f[:len(f)-1], " ")
			switch {
			case strings.Contains(typ, "*"):
				sig.WriteByte('p')
			case typ == "int":
				sig.WriteByte('i')
			case typ == "double":
				sig.WriteByte('d')
			default:
				panic("train: gpu kernel " + m[1] + ": parameter type " + typ + " has no launcher kind")
			}
		}
		out[m[1]] = kernelSig(sig.String())
	}
	return out
}

// packArgs checks args against kernel name's parameters and packs them into 8-byte slots:
// a devPtr as its address, an int as int32 in the low four bytes (little-endian), a float64
// as its bits. A mismatch is a bug in the launcher and panics.
func packArgs(name string, args ...any) []uint64 {
	sig, ok := kernelSigs[name]
	if !ok {
		panic("train: gpu: no kernel " + name)
	}
	if len(args) != len(sig) {
		panic(fmt.Sprintf("train: gpu: kernel %s takes %d arguments, got %d", name, len(sig), len(args)))
	}
	slots := make([]uint64, len(args))
	for i, a := range args {
		want := sig[i]
		switch v := a.(type) {
		case devPtr:
			if want == 'p' {
				slots[i] = uint64(v)
				continue
			}
		case int:
			if want == 'i' && v == int(int32(v)) {
				slots[i] = uint64(uint32(int32(v)))
				continue
			}
		case float64:
			if want == 'd' {
				slots[i] = math.Float64bits(v)
				continue
			}
		}
		panic(fmt.Sprintf("train: gpu: kernel %s argument %d is %T(%v), want kind %c", name, i, a, a, want))
	}
	return slots
}

// gpuTrainer runs a gpuJob on a device; see gpu_kernels.go for the buffers' layout.
type gpuTrainer struct {
	dev    device
	job    *gpuJob
	spec   Spec
	total  int
	f64    bool
	closed bool
	err    error // a failure in keep, which cannot return one; Step reports it

	d, n, den, np, length, h int // channels, order, denominator params, params, L, L/2+1
	montel                   int // 0 or 1, as the kernels take it
	rsize                    int64
	tiles                    int // blocks per channel of the loss reduction
	block                    int

	// Per-channel parameters and state, double [D][P] unless noted.
	p, m, v, g, goodP, goodM, goodV, best devPtr
	goodT, step, t                        devPtr // int [D]
	lrScale, scale, loss, rel, bestRel    devPtr // double [D]
	escale, ynorm                         devPtr // double [D]
	aeff                                  devPtr // double [D][n]
	partial                               devPtr // double [D][tiles]
	// The transform pipeline, in the device's precision.
	pad, fab, gspec, x devPtr // real [2][D][L], cpx [2][D][H], cpx [D][H], cpx [2][D][H]
	k, e, y            devPtr // real [D][L]

	fwd2, inv1, fwd1, inv2 int // plans: forward ×2D, inverse ×D, forward ×D, inverse ×2D
}

// gpuCheckEvery is stabilityCheckEvery, the steps between radius checks.
const gpuCheckEvery = stabilityCheckEvery

func (t *gpuTrainer) setup(p *Problem) error {
	m := t.job.m
	t.d, t.n, t.den, t.np, t.length = len(p.models), m.n, m.denLen(), m.numParams(), m.length
	t.h = t.length/2 + 1
	if m.montel {
		t.montel = 1
	}
	t.rsize = 4
	if t.f64 {
		t.rsize = 8
	}
	t.block = t.dev.blockSize()
	t.tiles = min(ceilDiv(t.length, t.block), 64)
	if t.d > 65535 {
		return fmt.Errorf("train: gpu: %d channels exceed the grid limit 65535", t.d)
	}

	d, np, L, H := int64(t.d), int64(t.np), int64(t.length), int64(t.h)
	csize := 2 * t.rsize
	type buffer struct {
		dst   *devPtr
		bytes int64
	}
	var bufs []buffer
	for _, b := range []*devPtr{&t.p, &t.m, &t.v, &t.g, &t.goodP, &t.goodM, &t.goodV, &t.best} {
		bufs = append(bufs, buffer{b, d * np * 8})
	}
	for _, b := range []*devPtr{&t.goodT, &t.step, &t.t} {
		bufs = append(bufs, buffer{b, d * 4})
	}
	for _, b := range []*devPtr{&t.lrScale, &t.scale, &t.loss, &t.rel, &t.bestRel, &t.escale, &t.ynorm} {
		bufs = append(bufs, buffer{b, d * 8})
	}
	bufs = append(bufs, buffer{&t.aeff, d * int64(t.n) * 8}, buffer{&t.partial, d * int64(t.tiles) * 8},
		buffer{&t.pad, 2 * d * L * t.rsize}, buffer{&t.fab, 2 * d * H * csize}, buffer{&t.gspec, d * H * csize},
		buffer{&t.x, 2 * d * H * csize}, buffer{&t.k, d * L * t.rsize}, buffer{&t.e, d * L * t.rsize},
		buffer{&t.y, d * L * t.rsize})
	var total int64
	for _, b := range bufs {
		total += b.bytes
	}
	for _, b := range bufs {
		ptr, err := t.dev.alloc(max(b.bytes, 8))
		if err != nil {
			return fmt.Errorf("train: gpu: %d channels of %d samples need %.2f GiB on the device: %w", t.d, t.length, float64(total)/(1<<30), err)
		}
		*b.dst = ptr
	}

	// Upload the problem and the initial state.
	flat := make([]float64, 0, t.d*t.np)
	for _, q := range p.Params {
		flat = append(flat, q...)
	}
	ys := make([]float64, 0, t.d*t.length)
	for _, y := range t.job.targets {
		ys = append(ys, y...)
	}
	ones := make([]float64, t.d)
	for i := range ones {
		ones[i] = 1
	}
	for _, c := range []struct {
		dst devPtr
		src []byte
	}{
		{t.p, f64Bytes(flat)}, {t.goodP, f64Bytes(flat)}, {t.best, f64Bytes(flat)},
		{t.lrScale, f64Bytes(ones)}, {t.escale, f64Bytes(t.job.escale)}, {t.ynorm, f64Bytes(t.job.norms)},
		{t.y, t.realBytes(ys)},
	} {
		if err := t.dev.upload(c.dst, c.src); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		dst   devPtr
		bytes int64
	}{
		{t.m, d * np * 8}, {t.v, d * np * 8}, {t.goodM, d * np * 8}, {t.goodV, d * np * 8},
		{t.g, d * np * 8}, {t.goodT, d * 4}, {t.t, d * 4},
	} {
		if err := t.dev.zero(c.dst, c.bytes); err != nil {
			return err
		}
	}
	// The schedule continues from the steps already taken (Problem.Offset).
	steps := make([]int32, t.d)
	for i := range steps {
		steps[i] = int32(p.Offset)
	}
	if err := t.dev.upload(t.step, i32Bytes(steps)); err != nil {
		return err
	}
	if err := t.makePlans(); err != nil {
		return err
	}

	// The starting point is the best so far, whatever its error (as on the CPU).
	if err := t.forward(); err != nil {
		return err
	}
	if err := t.measure(); err != nil {
		return err
	}
	return t.dev.copy(t.bestRel, t.rel, d*8)
}

// makePlans plans the four batched transforms of a step for the current channel count.
func (t *gpuTrainer) makePlans() error {
	for _, pl := range []struct {
		dst   *int
		dir   fftDir
		batch int
	}{{&t.fwd2, fftForward, 2 * t.d}, {&t.inv1, fftInverse, t.d}, {&t.fwd1, fftForward, t.d}, {&t.inv2, fftInverse, 2 * t.d}} {
		var err error
		if *pl.dst, err = t.dev.plan(pl.dir, t.length, pl.batch); err != nil {
			return err
		}
	}
	return nil
}

// keep narrows the trainer to the channels idx, in that order, with their optimiser state
// (the init race keeps each channel's winning start; see narrower). The buffers stay as they
// are, their first len(idx) rows in use.
func (t *gpuTrainer) keep(idx []int) {
	if t.err == nil && !t.closed {
		t.err = t.narrow(idx)
	}
}

func (t *gpuTrainer) narrow(idx []int) error {
	release, err := t.dev.bind()
	if err != nil {
		return err
	}
	defer release()
	gather := func(buf devPtr, row int64) error {
		old := make([]byte, int64(t.d)*row)
		if err := t.dev.download(old, buf); err != nil {
			return err
		}
		next := make([]byte, 0, int64(len(idx))*row)
		for _, i := range idx {
			next = append(next, old[int64(i)*row:int64(i+1)*row]...)
		}
		return t.dev.upload(buf, next)
	}
	np := int64(t.np)
	for _, b := range []devPtr{t.p, t.m, t.v, t.goodP, t.goodM, t.goodV, t.best} {
		if err := gather(b, np*8); err != nil {
			return err
		}
	}
	for _, b := range []devPtr{t.goodT, t.step, t.t} {
		if err := gather(b, 4); err != nil {
			return err
		}
	}
	for _, b := range []devPtr{t.lrScale, t.bestRel} {
		if err := gather(b, 8); err != nil {
			return err
		}
	}
	job := &gpuJob{m: t.job.m}
	var ys []float64
	for _, i := range idx {
		job.targets = append(job.targets, t.job.targets[i])
		job.norms = append(job.norms, t.job.norms[i])
		job.escale = append(job.escale, t.job.escale[i])
		ys = append(ys, t.job.targets[i]...)
	}
	t.job, t.d = job, len(idx)
	for _, c := range []struct {
		dst devPtr
		src []byte
	}{{t.y, t.realBytes(ys)}, {t.escale, f64Bytes(job.escale)}, {t.ynorm, f64Bytes(job.norms)}} {
		if err := t.dev.upload(c.dst, c.src); err != nil {
			return err
		}
	}
	return t.makePlans()
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// i32Bytes views v's memory as bytes.
func i32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// realBytes converts host float64 values to the device's real type.
func (t *gpuTrainer) realBytes(v []float64) []byte {
	if t.f64 {
		return f64Bytes(v)
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// fromReal converts device reals back to float64.
func (t *gpuTrainer) fromReal(b []byte) []float64 {
	if t.f64 {
		out := make([]float64, len(b)/8)
		copy(f64Bytes(out), b)
		return out
	}
	f := make([]float32, len(b)/4)
	if len(f) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(b)), b)
	}
	out := make([]float64, len(f))
	for i, x := range f {
		out[i] = float64(x)
	}
	return out
}

// f64Bytes views v's memory as bytes (host byte order, which the device shares).
func f64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

func (t *gpuTrainer) launch(name string, gx, gy int, args ...any) error {
	return t.dev.launch(name, gx, gy, packArgs(name, args...))
}

// forward queues the kernel and the loss of the current parameters: k, e = ∂loss/∂k and the
// partial sums of the squared residual.
func (t *gpuTrainer) forward() error {
	fb := t.fab + devPtr(int64(t.d)*int64(t.h)*2*t.rsize) // FFT(b̃)'s slot, then G's copy
	if err := t.launch(kDenominator, ceilDiv(t.d, t.block), 1, t.p, t.np, t.n, t.montel, t.d, t.aeff, t.scale); err != nil {
		return err
	}
	if err := t.launch(kPad, ceilDiv(t.length, t.block), t.d, t.p, t.aeff, t.np, t.n, t.den, t.length, t.d, t.pad); err != nil {
		return err
	}
	if err := t.dev.fft(t.fwd2, t.pad, t.fab); err != nil {
		return err
	}
	if err := t.launch(kDivide, ceilDiv(t.h, t.block), t.d, t.fab, t.gspec, t.h, t.d); err != nil {
		return err
	}
	if err := t.dev.fft(t.inv1, fb, t.k); err != nil {
		return err
	}
	return t.launch(kResidual, t.tiles, t.d, t.k, t.e, t.y, t.p, t.np, t.length, t.escale, t.partial)
}

// backward queues the gradient of the loss with respect to the parameters into g.
func (t *gpuTrainer) backward() error {
	if err := t.dev.fft(t.fwd1, t.e, t.x); err != nil {
		return err
	}
	if err := t.launch(kAdjoint, ceilDiv(t.h, t.block), t.d, t.x, t.fab, t.gspec, t.h, t.d); err != nil {
		return err
	}
	if err := t.dev.fft(t.inv2, t.x, t.pad); err != nil {
		return err
	}
	return t.launch(kGather, t.d, 1, t.pad, t.e, t.p, t.scale, t.np, t.n, t.den, t.montel, t.length, t.d, t.g)
}

// update queues the optimiser step (with rollbacks and the stability check).
func (t *gpuTrainer) update() error {
	o := t.spec.Optimizer
	adamw, cosine, radius := 0, 0, 0
	if o.Name == "adamw" {
		adamw = 1
	}
	if o.Schedule == "cosine" {
		cosine = 1
	}
	if t.spec.Constraint == "radius" {
		radius = 1
	}
	return t.launch(kAdam, t.d, 1, t.p, t.m, t.v, t.g, t.goodP, t.goodM, t.goodV, t.goodT, t.step, t.t, t.lrScale,
		t.np, t.n, t.montel, o.LR, o.Beta1, o.Beta2, o.Eps, o.WeightDecay, adamw, o.Warmup, cosine, t.total,
		radius, t.spec.MaxRadius, gpuCheckEvery)
}

// measure queues the per-channel loss and relative error of the last forward pass.
func (t *gpuTrainer) measure() error {
	return t.launch(kLossFinish, ceilDiv(t.d, t.block), 1, t.partial, t.tiles, t.d, t.escale, t.ynorm, t.loss, t.rel)
}

func (t *gpuTrainer) radius() int {
	if t.spec.Constraint == "radius" {
		return 1
	}
	return 0
}

// Step runs k optimisation steps on every channel. As on the CPU, the last step's forward
// pass also measures the parameters it sees (before their update) and keeps each channel's
// best admissible ones. It returns those losses and the best relative errors so far.
func (t *gpuTrainer) Step(ctx context.Context, k int) ([]float64, []float64, error) {
	if t.closed {
		return nil, nil, errors.New("train: gpu: Step after Close")
	}
	if t.err != nil {
		return nil, nil, t.err
	}
	release, err := t.dev.bind()
	if err != nil {
		return nil, nil, err
	}
	defer release()
	for s := 0; s < k; s++ {
		if s%8 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err := t.forward(); err != nil {
			return nil, nil, err
		}
		if s == k-1 {
			if err := t.trackBest(); err != nil {
				return nil, nil, err
			}
		}
		if err := t.backward(); err != nil {
			return nil, nil, err
		}
		if err := t.update(); err != nil {
			return nil, nil, err
		}
	}
	loss, rel := make([]float64, t.d), make([]float64, t.d)
	if err := t.dev.download(f64Bytes(loss), t.loss); err != nil {
		return nil, nil, err
	}
	if err := t.dev.download(f64Bytes(rel), t.bestRel); err != nil {
		return nil, nil, err
	}
	return loss, rel, nil
}

// trackBest queues, after a forward pass, the measurement of the parameters it saw and the
// update of each channel's best admissible parameters.
func (t *gpuTrainer) trackBest() error {
	if err := t.measure(); err != nil {
		return err
	}
	return t.launch(kTrackBest, t.d, 1, t.p, t.rel, t.best, t.bestRel, t.np, t.n, t.montel, t.radius(), t.spec.MaxRadius)
}

// Params returns each channel's best parameters, after evaluating the current ones (the
// result of the last step, which no forward pass has seen yet).
func (t *gpuTrainer) Params() ([][]float64, error) {
	if t.closed {
		return nil, errors.New("train: gpu: used after Close")
	}
	release, err := t.dev.bind()
	if err != nil {
		return nil, err
	}
	if err = t.forward(); err == nil {
		err = t.trackBest()
	}
	release()
	if err != nil {
		return nil, fmt.Errorf("train: gpu: evaluating the fitted parameters: %w", err)
	}
	out, err := t.download2(t.best, t.np)
	if err != nil {
		return nil, fmt.Errorf("train: gpu: reading the fitted parameters back: %w", err)
	}
	return out, nil
}

// download2 reads a double [D][w] array.
func (t *gpuTrainer) download2(src devPtr, w int) ([][]float64, error) {
	if t.closed {
		return nil, errors.New("train: gpu: used after Close")
	}
	release, err := t.dev.bind()
	if err != nil {
		return nil, err
	}
	defer release()
	flat := make([]float64, t.d*w)
	if err := t.dev.download(f64Bytes(flat), src); err != nil {
		return nil, err
	}
	out := make([][]float64, t.d)
	for i := range out {
		out[i] = flat[i*w : (i+1)*w : (i+1)*w]
	}
	return out, nil
}

// evaluate runs one forward and backward pass at the current parameters and returns every
// channel's kernel and gradient (for the parity tests).
func (t *gpuTrainer) evaluate() (k, g [][]float64, err error) {
	release, err := t.dev.bind()
	if err != nil {
		return nil, nil, err
	}
	if err = t.forward(); err == nil {
		err = t.backward()
	}
	var raw []byte
	if err == nil {
		raw = make([]byte, int64(t.d)*int64(t.length)*t.rsize)
		err = t.dev.download(raw, t.k)
	}
	release()
	if err != nil {
		return nil, nil, err
	}
	flat := t.fromReal(raw)
	for i := 0; i < t.d; i++ {
		k = append(k, flat[i*t.length:(i+1)*t.length])
	}
	g, err = t.download2(t.g, t.np)
	return k, g, err
}

// Close waits for the device and frees its memory; later calls fail.
func (t *gpuTrainer) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	release, err := t.dev.bind()
	if err != nil {
		return err
	}
	defer release()
	return t.dev.close()
}
