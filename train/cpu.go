package train

import (
	"context"
	"fmt"
	"math"

	"github.com/ssmlab/ssmlab/filters"
)

// Backend runs the optimisation of a Problem. The CPU backend is the reference; a GPU
// backend implements the same interface.
type Backend interface {
	// Name is "cpu" or "gpu".
	Name() string
	// Start prepares the problem (uploads it, compiles kernels, …).
	Start(p *Problem) (Trainer, error)
}

// Problem is what a backend optimises: one parameter vector per channel, in the layout of
// its model (see the package doc), against an objective.
type Problem struct {
	Spec   Spec
	Params [][]float64 // initial parameters, one slice per channel; the trainer owns them
	// Offset is the number of steps already taken (the learning-rate schedule continues
	// from there, over Spec.Steps in all).
	Offset int
	models []model
	obj    objective
}

// Trainer runs optimisation steps.
type Trainer interface {
	// Step runs k steps on every channel and returns each channel's loss at its last step
	// (measured by that step's forward pass, before the update) and the relative L2 error of
	// its best parameters so far. It returns early with ctx.Err() when cancelled.
	Step(ctx context.Context, k int) (loss, relErr []float64, err error)
	// Params evaluates the parameters the last Step left (no forward pass has seen them) and
	// returns a copy of each channel's best parameters; a device that cannot give them back
	// (lost after the last Step) is an error, never a silently wrong result.
	Params() ([][]float64, error)
	Close() error
}

// CPU is the pure-Go backend: analytic gradients through the FFTs, channels in parallel.
type CPU struct{}

// Name returns "cpu".
func (CPU) Name() string { return "cpu" }

// stabilityCheckEvery is how often (in steps) an RTF channel under a radius constraint has its
// poles checked; a violation rolls the channel back to its last good state and halves its
// learning rate. Each check is a Schur–Cohn recursion, O(n²).
const stabilityCheckEvery = 25

type cpuChannel struct {
	obj     int // the objective's channel
	m       model
	p, g    []float64
	k, e    []float64
	ws      workspace
	opt     *adam
	lrScale float64
	good    []float64 // last parameters that passed the stability check
	goodOpt *adam
	step    int
	loss    float64
	rel     float64
	// best holds the parameters with the lowest relative error seen at the last step of a
	// chunk or by Params (and, under a radius constraint, inside it): a job never returns
	// worse than its start.
	best    []float64
	bestRel float64
}

type cpuTrainer struct {
	spec  Spec
	obj   objective
	chans []*cpuChannel
	total int
}

// Start prepares the channels.
func (CPU) Start(p *Problem) (Trainer, error) {
	t := &cpuTrainer{spec: p.Spec, obj: p.obj, total: p.Spec.Steps}
	for i, m := range p.models {
		if len(p.Params[i]) != m.numParams() {
			return nil, fmt.Errorf("train: channel %d has %d parameters, its model takes %d", i, len(p.Params[i]), m.numParams())
		}
		length := kernelLength(m)
		c := &cpuChannel{
			obj: i, m: m, p: p.Params[i], g: make([]float64, m.numParams()),
			k: make([]float64, length), e: make([]float64, length), ws: m.newWorkspace(),
			opt: newAdam(m.numParams()), lrScale: 1, step: p.Offset,
		}
		c.good, c.goodOpt = append([]float64(nil), c.p...), c.opt.clone()
		c.m.kernel(c.ws, c.p, c.k)
		c.loss = t.obj.loss(c.obj, c.k, c.e)
		c.rel = t.obj.relError(c.obj, c.k)
		c.best, c.bestRel = append([]float64(nil), c.p...), c.rel
		t.chans = append(t.chans, c)
	}
	return t, nil
}

func kernelLength(m model) int {
	switch mm := m.(type) {
	case *rtfModel:
		return mm.length
	case *modalModel:
		return mm.length
	}
	panic("train: unknown model")
}

func (t *cpuTrainer) Step(ctx context.Context, k int) ([]float64, []float64, error) {
	errs := make([]error, len(t.chans))
	filters.ForEachChannel(len(t.chans), func(i int) {
		c := t.chans[i]
		for s := 0; s < k; s++ {
			if s%8 == 0 && ctx.Err() != nil {
				errs[i] = ctx.Err()
				return
			}
			t.stepChannel(c, s == k-1)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	loss, rel := make([]float64, len(t.chans)), make([]float64, len(t.chans))
	for i, c := range t.chans {
		loss[i], rel[i] = c.loss, c.bestRel
	}
	return loss, rel, nil
}

// stepChannel takes one Adam step. The forward pass that the gradient needs also gives the
// loss of the parameters before the step; when track is set (the last step of a chunk) their
// relative error is compared with the best so far, so that no extra forward pass is spent on
// bookkeeping. Params evaluates the parameters after the last step.
func (t *cpuTrainer) stepChannel(c *cpuChannel, track bool) {
	c.m.kernel(c.ws, c.p, c.k)
	c.loss = t.obj.loss(c.obj, c.k, c.e)
	if track {
		t.consider(c)
	}
	c.m.grad(c.ws, c.p, c.e, c.g)
	for _, v := range c.g {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			// A pole on the unit circle at an FFT bin: restart from the last good state.
			t.rollback(c)
			return
		}
	}
	lr := t.spec.Optimizer.learningRate(c.step, t.total) * c.lrScale
	c.opt.step(c.p, c.g, lr, &t.spec.Optimizer)
	c.step++
	switch m := c.m.(type) {
	case *modalModel:
		m.project(c.p)
	case *rtfModel:
		if t.spec.Constraint == "radius" && c.step%stabilityCheckEvery == 0 {
			if !m.within(c.p, t.spec.poleBound(len(c.k))) {
				t.rollback(c)
			} else {
				copy(c.good, c.p)
				c.goodOpt = c.opt.clone()
			}
		}
	}
}

// consider records the channel's current parameters as its best if their relative error (of
// the kernel in c.k) is the lowest so far and they are admissible.
func (t *cpuTrainer) consider(c *cpuChannel) {
	c.rel = t.obj.relError(c.obj, c.k)
	if c.rel < c.bestRel && t.admissible(c) {
		copy(c.best, c.p)
		c.bestRel = c.rel
	}
}

func (t *cpuTrainer) rollback(c *cpuChannel) {
	copy(c.p, c.good)
	c.opt = c.goodOpt.clone()
	c.lrScale /= 2
}

// admissible reports whether the channel's current parameters satisfy the radius constraint
// (modal models satisfy it by construction).
func (t *cpuTrainer) admissible(c *cpuChannel) bool {
	if m, ok := c.m.(*rtfModel); ok && t.spec.Constraint == "radius" {
		return m.within(c.p, t.spec.poleBound(len(c.k)))
	}
	return true
}

// Params returns each channel's best parameters, after evaluating the current ones (the result
// of the last step, which no forward pass has seen yet).
func (t *cpuTrainer) Params() ([][]float64, error) {
	filters.ForEachChannel(len(t.chans), func(i int) {
		c := t.chans[i]
		c.m.kernel(c.ws, c.p, c.k)
		t.consider(c)
	})
	out := make([][]float64, len(t.chans))
	for i, c := range t.chans {
		out[i] = append([]float64(nil), c.best...)
	}
	return out, nil
}

func (t *cpuTrainer) Close() error { return nil }

// keep narrows the trainer to the given channels, in that order, with their optimiser state.
func (t *cpuTrainer) keep(idx []int) {
	chans := make([]*cpuChannel, len(idx))
	for i, j := range idx {
		chans[i] = t.chans[j]
	}
	t.chans = chans
}

// narrower is implemented by trainers that can drop channels in place (the CPU trainer); the
// init race uses it so that the winning start keeps its optimiser state.
type narrower interface{ keep(idx []int) }
