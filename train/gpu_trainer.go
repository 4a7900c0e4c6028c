package train

import (
	"context"
	"errors"
	"fmt"
)

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
		radius, t.maxRadius(), gpuCheckEvery)
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

// maxRadius is the bound the kernels keep an rtf's poles within where radius is 1: the job's,
// resolved where automatic (Spec.poleBound); unread otherwise.
func (t *gpuTrainer) maxRadius() float64 {
	if t.radius() == 1 {
		return t.spec.poleBound(t.length)
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
	return t.launch(kTrackBest, t.d, 1, t.p, t.rel, t.best, t.bestRel, t.np, t.n, t.montel, t.radius(), t.maxRadius())
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
