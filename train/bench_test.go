package train

import (
	"context"
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkRTFStep times one training step (forward kernel, loss, analytic backward, Adam)
// of an RTF bank with D = 256 channels, n = 64, L = 4096, channels spread over GOMAXPROCS
// goroutines; bench/rtf_step_torch.py times the same step in PyTorch (autograd) with the
// same number of threads.
func BenchmarkRTFStep(b *testing.B) { benchRTFStep(b, 256, 64, 4096) }

// BenchmarkRTFStepLong is the GPU issue's bank (D = 1024, n = 64, L = 16384) on the CPU,
// to set beside BenchmarkGPUStep's float/1024x16384x64.
func BenchmarkRTFStepLong(b *testing.B) { benchRTFStep(b, 1024, 64, 16384) }

func benchRTFStep(b *testing.B, d, n, length int) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := DefaultSpec()
	s.Order, s.Init, s.Constraint, s.Steps = n, "xavier", "none", 1<<30
	prob := &Problem{Spec: s}
	targets := make([][]float64, d)
	for ch := range targets {
		targets[ch] = make([]float64, length)
		for t := range targets[ch] {
			targets[ch][t] = rng.NormFloat64() / float64(1+t)
		}
		m, p, err := initParams(&s, targets[ch], ch)
		if err != nil {
			b.Fatal(err)
		}
		prob.models, prob.Params = append(prob.models, m), append(prob.Params, p)
	}
	prob.obj = newDistill(targets, "mse")
	tr, err := CPU{}.Start(prob)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := tr.Step(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDistill times a whole 16-channel distillation job (L = 1024) per order, the unit
// of the CPU-time comparison with the RTF paper's recipe.
func BenchmarkDistill(b *testing.B) {
	targets := targetFamilies(1024, 16, 1)["hyena"]
	for _, n := range []int{4, 16, 64} {
		for _, recipe := range []struct {
			name string
			spec Spec
		}{{"paper", PaperSpec()}, {"ssmlab", DefaultSpec()}} {
			b.Run(fmt.Sprintf("%s/n=%d", recipe.name, n), func(b *testing.B) {
				s := recipe.spec
				s.Order = n
				for b.Loop() {
					if _, err := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkVarproSums times the sums over the samples one variable-projection iteration runs
// several of (the residual, the projections with and without the derivative columns), at
// the size of the top order: 32 pole pairs, L = 1024; about half of an n = 64 job's
// CPU goes to them.
func BenchmarkVarproSums(b *testing.B) {
	basis, y, c := sumsProblem(rand.New(rand.NewPCG(1, 2)), 32, 0, 1023)
	benchSums(b, basis, c, y)
}

// BenchmarkVarproSumsDecaying is BenchmarkVarproSums at L = 8192 with poles of radius 0.55
// to 0.91, whose powers leave float64's normal range within the samples: where processors
// that run subnormal operations slowly spent most of the time before the sums flushed them
// (package underflow).
func BenchmarkVarproSumsDecaying(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	basis, _, c, y := kernelProblem(rng, 16, 0, 8191, "decaying")
	benchSums(b, basis, c, y)
}

// BenchmarkVarproIteration times the parts of one variable-projection iteration at the
// issue's top order (32 pole pairs of radius 0.8–0.999, L = 1024, a noise target): the Gram
// matrix's geometric sums (gram-sums), an evaluation by the normal equations (solve), the
// Gauss–Newton system (normal) and the residues by the reduced QR (qr), which every
// evaluation of a fit whose normal equations lost its residues runs in place of solve's.
func BenchmarkVarproIteration(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := poleSet{pairs: 32, rmax: MinAutoRadius}
	var pairs []complex128
	for range s.pairs {
		pairs = append(pairs, cmplx.Rect(0.8+0.199*rng.Float64(), 3.1*rng.Float64()))
	}
	a := s.params(pairs, nil)
	y := make([]float64, 1024)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	v := newVarpro(s, y)
	v.sse(a)
	b.Run("gram-sums", func(b *testing.B) {
		for b.Loop() {
			v.fillSums()
		}
	})
	b.Run("solve", func(b *testing.B) {
		for b.Loop() {
			v.solve(a)
		}
	})
	g := make([]float64, s.numParams())
	b.Run("normal", func(b *testing.B) {
		for b.Loop() {
			v.normal(a, v.lm.h, g)
		}
	})
	b.Run("qr", func(b *testing.B) {
		for b.Loop() {
			v.setPoles(a) // forgets the last QR, which exactResidues would otherwise reuse
			v.exactResidues(false)
		}
	})
}

// benchSums times the residual Φc − y and the projections of y with and without the
// derivative columns.
func benchSums(b *testing.B, basis poleBasis, c, y []float64) {
	e := make([]float64, len(y))
	v0, v1 := make([]complex128, len(basis.mu)), make([]complex128, len(basis.mu))
	b.Run("residual", func(b *testing.B) {
		for b.Loop() {
			cpuSums{}.residual(basis, c, y, e)
		}
	})
	b.Run("project", func(b *testing.B) {
		for b.Loop() {
			cpuSums{}.project(basis, y, v0, v1)
		}
	})
	b.Run("project0", func(b *testing.B) {
		for b.Loop() {
			cpuSums{}.project(basis, y, v0, nil)
		}
	})
}

// BenchmarkModalStep is the modal model's kernel and gradient, what each of its Adam steps
// computes, for 16 pole pairs of radius 0.6–0.95 at L = 8192, whose powers leave float64's
// normal range within the samples (BenchmarkVarproSumsDecaying).
func BenchmarkModalStep(b *testing.B) {
	m, p := randomModal(rand.New(rand.NewPCG(3, 4)), 16, 0, 8192, false)
	k, e, g := make([]float64, m.length), make([]float64, m.length), make([]float64, m.numParams())
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	for b.Loop() {
		m.kernel(nil, p, k)
		m.grad(nil, p, e, g)
	}
}
