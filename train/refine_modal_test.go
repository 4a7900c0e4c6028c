package train

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// randomModal returns a modal (or rotation) model with pairs conjugate pairs and reals real
// poles at random stable places, and its parameters.
func randomModal(rng *rand.Rand, pairs, reals, length int, rotation bool) (*modalModel, []float64) {
	m := &modalModel{pairs: pairs, reals: reals, length: length, rotation: rotation, minNu: math.Log(-math.Log(0.9999)), maxU: math.Atanh(0.9999)}
	p := make([]float64, m.numParams())
	for i := range p {
		p[i] = rng.NormFloat64()
	}
	for i := 0; i < pairs; i++ {
		p[i*m.pairSize()] = math.Log(-math.Log(0.6 + 0.35*rng.Float64()))
	}
	m.project(p)
	return m, p
}

// TestModalJacobian checks the modal refinement's Jacobian against central differences of
// the kernel, pairs and real poles alike.
func TestModalJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	m, p := randomModal(rng, 3, 2, 48, false)
	w := newModalRefineWork(m, make([]float64, m.length))
	w.jacobian(p)
	kp, km := make([]float64, m.length), make([]float64, m.length)
	for j := range p {
		centralDiff(func(q, out []float64) { m.kernel(nil, q, out) }, p, j, kp, km)
		row := w.jt.RawRowView(j)
		scale := 0.0
		for i := range kp {
			scale = math.Max(scale, math.Abs(row[i]))
		}
		for i := range kp {
			fd := (kp[i] - km[i]) / (2 * fdStep)
			if d := math.Abs(fd - row[i]); d > 1e-6*(1+scale) {
				t.Fatalf("∂k[%d]/∂p[%d] = %.10g, central difference %.10g", i, j, row[i], fd)
			}
		}
	}
}

// TestRotationModalMapping checks that a rotation model's parameters survive the trip to the
// modal parametrisation and back with the same kernel.
func TestRotationModalMapping(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 7))
	m, p := randomModal(rng, 3, 2, 64, true)
	w := newModalRefineWork(m, make([]float64, m.length))
	q := w.toModal(p)
	back := make([]float64, len(p))
	w.fromModal(q, back)
	k1, k2, k3 := make([]float64, m.length), make([]float64, m.length), make([]float64, m.length)
	m.kernel(nil, p, k1)
	w.m.kernel(nil, q, k2)
	m.kernel(nil, back, k3)
	if e := filters.RelDiff(k1, k2); e > 1e-13 {
		t.Errorf("modal form of the rotation model: kernel differs by %.3g", e)
	}
	if e := filters.RelDiff(k1, k3); e > 1e-13 {
		t.Errorf("rotation → modal → rotation: kernel differs by %.3g", e)
	}
}

// TestModalRefinement checks the refinement of rotation jobs on S4 kernels at n = 64, where
// Adam barely moves the hankel init: it lowers the error clearly, keeps every channel stable
// and the job deterministic. (A modal job from the hankel init is fitted by variable
// projection instead, which TestLadder checks.)
func TestModalRefinement(t *testing.T) {
	targets := targetFamilies(1024, 2, 1)["s4-hippo"]
	for _, model := range []Model{ModelRotation} {
		spec := withOrder(DefaultSpec(), 64)
		spec.Model, spec.Steps = model, 20
		plain := spec
		plain.Refine = 0
		before, err := Run(context.Background(), Job{Spec: plain, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		after, err := Run(context.Background(), Job{Spec: spec, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s n = 64: %.4g without the refinement, %.4g with it", model, before.Report.MeanRelError, after.Report.MeanRelError)
		if !(after.Report.MeanRelError < 0.7*before.Report.MeanRelError) {
			t.Errorf("%s: refinement %.4g, without %.4g", model, after.Report.MeanRelError, before.Report.MeanRelError)
		}
		for ch, c := range after.Report.Channels {
			if !c.Stable || c.RelError > before.Report.Channels[ch].RelError*(1+1e-12) {
				t.Errorf("%s channel %d: %+v against %+v", model, ch, c, before.Report.Channels[ch])
			}
		}
		again, err := Run(context.Background(), Job{Spec: spec, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.Report.Channels, after.Report.Channels) {
			t.Errorf("%s: the refined job is not deterministic", model)
		}
	}
}

func TestRefineModalCancels(t *testing.T) {
	m, p := randomModal(rand.New(rand.NewPCG(1, 1)), 2, 1, 64, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := refineModal(ctx, newModalRefineWork(m, make([]float64, 64)), p, 50, nil); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// BenchmarkRefineModalIteration is one modal Gauss–Newton iteration at n = 64, L = 1024.
func BenchmarkRefineModalIteration(b *testing.B) {
	y := targetFamilies(1024, 1, 1)["s4-hippo"][0]
	spec := withOrder(DefaultSpec(), 64)
	spec.Model = "modal"
	mm, p0, err := initParams(&spec, y, 0)
	if err != nil {
		b.Fatal(err)
	}
	m := mm.(*modalModel)
	w := newModalRefineWork(m, y)
	for b.Loop() {
		p := append([]float64(nil), p0...)
		if _, err := refineModal(context.Background(), w, p, 1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestModalFilterRealPair checks that a pole pair whose angle sits at 0 or π (which the
// optimisers can reach) deploys as a valid real filter with the model's kernel.
func TestModalFilterRealPair(t *testing.T) {
	for _, theta := range []float64{0, math.Pi, 1e-14} {
		m := &modalModel{pairs: 2, length: 64, minNu: math.Log(-math.Log(0.9999)), maxU: math.Atanh(0.9999)}
		p := []float64{math.Log(-math.Log(0.8)), theta, 0.3, -0.7, math.Log(-math.Log(0.5)), 1, 0.2, 0.1, 0.05}
		f, _, err := m.filter(p)
		if err != nil {
			t.Fatalf("θ = %g: %v", theta, err)
		}
		k := make([]float64, m.length)
		m.kernel(nil, p, k)
		if e := filters.RelDiff(k, f.Impulse(m.length)); e > 1e-12 {
			t.Errorf("θ = %g: deployed response differs from the kernel by %.3g", theta, e)
		}
	}
}
