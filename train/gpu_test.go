package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Tolerances of the GPU parity checks against the CPU backend.
const (
	// gpuTol32: a float32 transform carries a normwise relative error of about 1e-7, and
	// the spectral division multiplies the forward transforms' error by up to the condition
	// κ of the denominator on the unit circle (up to 120 for parityParams). The bar
	// is 1e-5; where κ puts it out of a float32 transform's reach, the bar is that
	// transform's rounding bound, u·log₂(2L)·κ (tol32): on an H200 with cuFFT 12.0, a
	// channel of κ = 117 (L = 128) had its gradient 1.9e-5 from the CPU's, its kernel
	// 8.6e-6; under the emulator's model of float32 rounding 6.1e-6 and 4.4e-6.
	gpuTol32 = 1e-5
	// gpuTol64: float64 throughout, the same operations in another order.
	gpuTol64 = 1e-11
)

// tol32 is the float32 parity bar of a channel whose denominator has condition kappa on
// the unit circle, at length L (gpuTol32).
func tol32(kappa float64, length int) float64 {
	const u = 0x1p-24 // float32's unit roundoff
	return math.Max(gpuTol32, u*math.Log2(2*float64(length))*kappa)
}

// deviceOpener opens a device of one precision: CUDA, or the tests' emulator.
type deviceOpener func(f64 bool) (device, error)

// TestGPUKernelSource checks the launcher's kernel names against the CUDA source: every
// extern "C" __global__ function is parsed, every name the launcher uses exists, and no
// kernel is dead.
func TestGPUKernelSource(t *testing.T) {
	decl := regexp.MustCompile(`extern "C" __global__`).FindAllStringIndex(gpuSource, -1)
	if len(decl) != len(kernelSigs) {
		t.Fatalf("%d extern \"C\" __global__ declarations, %d parsed: %v", len(decl), len(kernelSigs), kernelSigs)
	}
	used := map[string]bool{}
	for _, name := range gpuKernelNames {
		used[name] = true
		if _, ok := kernelSigs[name]; !ok {
			t.Errorf("the launcher uses kernel %s, which the source does not define", name)
		}
	}
	for name, sig := range kernelSigs {
		if !used[name] {
			t.Errorf("kernel %s (%s) is never launched", name, sig)
		}
		if strings.Trim(string(sig), "pid") != "" || sig == "" {
			t.Errorf("kernel %s: signature %q", name, sig)
		}
	}
	// Spot-check one signature against the source by hand.
	if got := kernelSigs[kLossFinish]; got != "piipppp" {
		t.Errorf("loss_finish parsed as %q, want piipppp", got)
	}
	// The source must not lean on anything NVRTC lacks without headers.
	for _, banned := range []string{"#include", "atomicAdd", "__shfl", "isfinite", "std::"} {
		if strings.Contains(gpuSource, banned) {
			t.Errorf("the kernel source uses %s", banned)
		}
	}
}

func TestPackArgs(t *testing.T) {
	slots := packArgs(kLossFinish, devPtr(0x1000), 7, 3, devPtr(8), devPtr(16), devPtr(24), devPtr(32))
	if slots[0] != 0x1000 || slots[1] != 7 || slots[2] != 3 || slots[6] != 32 {
		t.Errorf("slots %v", slots)
	}
}

func TestPackArgsMismatchPanics(t *testing.T) {
	for name, args := range map[string][]any{
		"too few":       {devPtr(1)},
		"int for ptr":   {1, 2, 3, devPtr(1), devPtr(1), devPtr(1), devPtr(1)},
		"float for int": {devPtr(1), 2.0, 3, devPtr(1), devPtr(1), devPtr(1), devPtr(1)},
		"int overflow":  {devPtr(1), 1 << 40, 3, devPtr(1), devPtr(1), devPtr(1), devPtr(1)},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "train: gpu:") {
					t.Errorf("%s: recovered %v", name, r)
				}
			}()
			packArgs(kLossFinish, args...)
		}()
	}
}

// gpuTargets are kernels of the kind a long-convolution layer learns: a few damped
// resonances of random frequency and decay, plus a little decaying noise.
func gpuTargets(length, channels int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 31))
	out := make([][]float64, channels)
	for c := range out {
		k := make([]float64, length)
		for m := 0; m < 3; m++ {
			r, w, amp := 0.85+0.13*rng.Float64(), math.Pi*rng.Float64(), rng.NormFloat64()
			for i := range k {
				k[i] += amp * math.Pow(r, float64(i)) * math.Cos(w*float64(i))
			}
		}
		for i := range k {
			k[i] += 0.01 * rng.NormFloat64() * math.Exp(-0.05*float64(i))
		}
		out[c] = k
	}
	return out
}

// gpuProblem builds the Problem Run would give a backend, without a race.
func gpuProblem(t testing.TB, spec Spec, targets [][]float64) *Problem {
	t.Helper()
	obj, targets, err := Job{Spec: spec, Targets: targets}.objective()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(len(targets), len(targets[0])); err != nil {
		t.Fatal(err)
	}
	spec.resolveRadius(len(targets[0]), false) // as a job's validation does
	p := &Problem{Spec: spec, obj: obj}
	for ch, y := range targets {
		m, params, err := initParams(&spec, y, ch)
		if err != nil {
			t.Fatal(err)
		}
		p.models = append(p.models, m)
		p.Params = append(p.Params, params)
	}
	return p
}

// cloneProblem copies p with its own parameters (a trainer owns them).
func cloneProblem(p *Problem) *Problem {
	q := *p
	q.Params = nil
	for _, x := range p.Params {
		q.Params = append(q.Params, append([]float64(nil), x...))
	}
	return &q
}

func TestGPUUnsupportedJobs(t *testing.T) {
	targets := gpuTargets(64, 2, 1)
	s := quickSpec("modal", 3)
	if _, err := gpuJobOf(gpuProblem(t, s, targets)); !errors.Is(err, ErrGPUUnsupported) || !strings.Contains(err.Error(), "modal") {
		t.Errorf("modal: %v", err)
	}
	s = quickSpec("rtf", 3)
	s.Loss = "freq"
	if _, err := gpuJobOf(gpuProblem(t, s, targets)); !errors.Is(err, ErrGPUUnsupported) || !strings.Contains(err.Error(), "freq") {
		t.Errorf("freq: %v", err)
	}
	// Orders beyond the kernels' shared arrays (MAX_ORDER in gpuSource) run on the CPU.
	if !strings.Contains(gpuSource, fmt.Sprintf("#define MAX_ORDER %d\n", gpuMaxOrder)) {
		t.Errorf("gpuMaxOrder %d is not the kernels' MAX_ORDER", gpuMaxOrder)
	}
	if _, err := gpuJobOf(gpuProblem(t, quickSpec("rtf", gpuMaxOrder+1), gpuTargets(4*gpuMaxOrder, 1, 1))); !errors.Is(err, ErrGPUUnsupported) || !strings.Contains(err.Error(), "order") {
		t.Errorf("order %d: %v", gpuMaxOrder+1, err)
	}
	task, err := DelayTask(256, 4, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	s = quickSpec("rtf", 3)
	s.Target.Length = 32
	obj, _, err := task.objective(s)
	if err != nil {
		t.Fatal(err)
	}
	p := gpuProblem(t, quickSpec("rtf", 3), gpuTargets(32, 1, 1))
	p.obj = obj
	if _, err := gpuJobOf(p); !errors.Is(err, ErrGPUUnsupported) || !strings.Contains(err.Error(), "task") {
		t.Errorf("task: %v", err)
	}
	for _, s := range []Spec{quickSpec("rtf", 3), func() Spec { s := quickSpec("rtf", 3); s.Loss = "relative"; return s }()} {
		if _, err := gpuJobOf(gpuProblem(t, s, targets)); err != nil {
			t.Errorf("loss %s: %v", s.Loss, err)
		}
	}
}

// TestDetectGPUWithoutDevice: on a machine without a GPU, DetectGPU says why in one line and
// the backend refuses to start with the same reason.
func TestDetectGPUWithoutDevice(t *testing.T) {
	info, err := DetectGPU()
	if err == nil {
		t.Skipf("a GPU is present: %s", info)
	}
	if !errors.Is(err, ErrNoGPU) {
		t.Errorf("DetectGPU: %v does not wrap ErrNoGPU", err)
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "no GPU: ") {
		t.Errorf("DetectGPU's reason is not one line starting \"no GPU: \": %q", msg)
	}
	if _, err2 := DetectGPU(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("a second DetectGPU says %v", err2)
	}
	_, err = GPU{}.Start(gpuProblem(t, quickSpec("rtf", 3), gpuTargets(64, 1, 1)))
	if !errors.Is(err, ErrNoGPU) {
		t.Errorf("GPU.Start without a GPU: %v", err)
	}
}

// parityParams gives every channel random parameters with the denominator's poles within
// radius 0.6 and O(1) numerators, so that the spectral division is fairly well conditioned:
// the float32 transforms' normwise error reaches the kernel multiplied by up to
// max|A(e^jω)|/min|A(e^jω)| (denominatorCondition; 1 to 120 for these seeds).
func parityParams(p *Problem, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	for ch, m := range p.models {
		rm := m.(*rtfModel)
		q := p.Params[ch]
		for i := range q {
			q[i] = 0.5 * rng.NormFloat64()
		}
		if rm.montel {
			continue // any w: a = w[:n]/Σ|w| has Σ|aᵢ| < 1, so its poles are inside the circle
		}
		// a from the poles 0.6·(random points in the unit disc), in conjugate pairs.
		a := []complex128{1}
		for i := 0; i < rm.n; {
			r, th := 0.6*math.Sqrt(rng.Float64()), math.Pi*rng.Float64()
			if i+1 < rm.n {
				z := complex(r*math.Cos(th), r*math.Sin(th))
				a = polyMulRoot(polyMulRoot(a, z), complex(real(z), -imag(z)))
				i += 2
			} else {
				a = polyMulRoot(a, complex(r*math.Cos(th), 0))
				i++
			}
		}
		for i := 0; i < rm.n; i++ {
			q[i] = real(a[i+1])
		}
	}
}

// denominatorCondition is max|A(e^jω)|/min|A(e^jω)| over the model's FFT bins.
func denominatorCondition(p []float64, m *rtfModel) float64 {
	a := m.denominator(p, make([]float64, m.n))
	lo, hi := math.Inf(1), 0.0
	for k := 0; k <= m.length/2; k++ {
		z := cmplx.Exp(complex(0, -2*math.Pi*float64(k)/float64(m.length)))
		v, zi := complex(1, 0), complex(1, 0)
		for _, c := range a {
			zi *= z
			v += complex(c, 0) * zi
		}
		lo, hi = math.Min(lo, cmplx.Abs(v)), math.Max(hi, cmplx.Abs(v))
	}
	return hi / lo
}

func polyMulRoot(a []complex128, z complex128) []complex128 {
	out := make([]complex128, len(a)+1)
	for i, c := range a {
		out[i] += c
		out[i+1] -= z * c
	}
	return out
}

func relDiff(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// checkKernelParity compares one forward and backward pass on the device with the CPU model's
// kernel and gradient, channel by channel, across model variants: to gpuTol64 in float64,
// to tol32 in float32.
func checkKernelParity(t *testing.T, open deviceOpener, f64 bool) {
	for _, c := range []struct {
		name                string
		n, length, channels int
		constraint          Constraint
		loss                Loss
	}{
		{"mse", 6, 128, 3, "none", "mse"},
		{"relative/odd-length", 5, 99, 2, "radius", "relative"},
		{"montel", 4, 64, 2, "l1_montel", "mse"},
		{"order0", 0, 32, 2, "none", "mse"},
		{"long", 16, 1024, 2, "none", "relative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := quickSpec("rtf", c.n)
			s.Init, s.Constraint, s.Loss = "zeros", c.constraint, c.loss
			if c.constraint == "radius" {
				s.MaxRadius = 0.95
			}
			p := gpuProblem(t, s, gpuTargets(c.length, c.channels, 3))
			parityParams(p, uint64(c.length))
			want := cloneProblem(p)
			tr, err := GPU{Float64: f64, open: open}.Start(p)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			kg, gg, err := tr.(*gpuTrainer).evaluate()
			if err != nil {
				t.Fatal(err)
			}
			for ch, m := range want.models {
				ws := m.newWorkspace()
				k, e := make([]float64, c.length), make([]float64, c.length)
				g := make([]float64, m.numParams())
				m.kernel(ws, want.Params[ch], k)
				want.obj.loss(ch, k, e)
				m.grad(ws, want.Params[ch], e, g)
				dk, dg := relDiff(kg[ch], k), relDiff(gg[ch], g)
				kappa := denominatorCondition(want.Params[ch], m.(*rtfModel))
				tol := gpuTol64
				if !f64 {
					tol = tol32(kappa, c.length)
				}
				t.Logf("channel %d: relative difference from the CPU: kernel %.2g, gradient %.2g (denominator condition %.3g, tolerance %.2g)",
					ch, dk, dg, kappa, tol)
				if d := dk; !(d <= tol) {
					t.Errorf("channel %d: kernel differs from the CPU's by %.3g relative (tolerance %g)", ch, d, tol)
				}
				if d := dg; !(d <= tol) {
					t.Errorf("channel %d: gradient differs from the CPU's by %.3g relative (tolerance %g)\n gpu %v\n cpu %v", ch, d, tol, gg[ch], g)
				}
			}
		})
	}
}

// checkStepParity runs the CPU and the device trainers side by side, in float64, through
// chunks of steps, and compares losses, errors, rollbacks and the best parameters.
// The cases exercise the schedule, AdamW, the Montel map, the radius check with its
// rollbacks, and the rollback on a non-finite gradient.
func checkStepParity(t *testing.T, open deviceOpener, tol float64) {
	for _, c := range []struct {
		name      string
		edit      func(*Spec)
		prep      func(*Problem)
		rollbacks bool
	}{
		{"adam-cosine-warmup", func(s *Spec) {}, nil, false},
		{"adamw-constant", func(s *Spec) {
			s.Optimizer.Name, s.Optimizer.WeightDecay, s.Optimizer.Schedule, s.Constraint = "adamw", 0.01, "constant", "none"
		}, nil, false},
		{"montel", func(s *Spec) { s.Constraint, s.Init = "l1_montel", "montel" }, nil, false},
		{"radius-rollbacks", func(s *Spec) { s.MaxRadius, s.Optimizer.LR = 0.5, 0.05 }, nil, true},
		{"pole-on-the-unit-circle", func(s *Spec) { s.Constraint = "none" }, func(p *Problem) {
			// a(z) = 1 + z⁻¹ vanishes at the Nyquist bin: every gradient is NaN and the
			// channel rolls back at each step, never moving.
			for _, q := range p.Params {
				clear(q)
				q[0] = 1
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := quickSpec("rtf", 4)
			s.Init, s.Steps, s.Loss = "xavier", 60, "relative"
			c.edit(&s)
			p := gpuProblem(t, s, gpuTargets(64, 3, 2))
			if c.prep != nil {
				c.prep(p)
			}
			start := cloneProblem(p)
			cpu, err := CPU{}.Start(cloneProblem(p))
			if err != nil {
				t.Fatal(err)
			}
			gpu, err := GPU{Float64: true, open: open}.Start(cloneProblem(p))
			if err != nil {
				t.Fatal(err)
			}
			defer gpu.Close()
			for chunk := 0; chunk < 4; chunk++ {
				lc, rc, err := cpu.Step(context.Background(), 15)
				if err != nil {
					t.Fatal(err)
				}
				lg, rg, err := gpu.Step(context.Background(), 15)
				if err != nil {
					t.Fatal(err)
				}
				for ch := range lc {
					if !closeTo(lg[ch], lc[ch], tol) || !closeTo(rg[ch], rc[ch], tol) {
						t.Fatalf("chunk %d channel %d: gpu loss %.15g rel %.15g, cpu %.15g %.15g", chunk, ch, lg[ch], rg[ch], lc[ch], rc[ch])
					}
				}
			}
			// The rollbacks (each halves a channel's learning rate) happened alike.
			scales := make([]float64, len(p.Params))
			gt := gpu.(*gpuTrainer)
			release, err := gt.dev.bind()
			if err != nil {
				t.Fatal(err)
			}
			err = gt.dev.download(f64Bytes(scales), gt.lrScale)
			release()
			if err != nil {
				t.Fatal(err)
			}
			rolled := false
			for ch, c := range cpu.(*cpuTrainer).chans {
				if scales[ch] != c.lrScale {
					t.Errorf("channel %d: learning-rate scale %g on the device, %g on the CPU", ch, scales[ch], c.lrScale)
				}
				rolled = rolled || c.lrScale < 1
			}
			if c.rollbacks && !rolled {
				t.Errorf("no channel rolled back: the case does not test what it should")
			}
			pc, err := cpu.Params()
			if err != nil {
				t.Fatal(err)
			}
			pg, err := gpu.Params()
			if err != nil {
				t.Fatal(err)
			}
			for ch := range pc {
				if d := relDiff(pg[ch], pc[ch]); !(d <= tol) {
					t.Errorf("channel %d: best parameters differ by %.3g\n gpu %v\n cpu %v", ch, d, pg[ch], pc[ch])
				}
			}
			if c.prep != nil && relDiff(pg[0], start.Params[0]) != 0 {
				t.Errorf("a channel whose every gradient is NaN moved: %v", pg[0])
			}
		})
	}
}

// closeTo compares two numbers to a relative tolerance; NaN equals NaN.
func closeTo(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(b), 1e-300) || a == b
}

// checkDistillParity runs a short distillation of a bank (with the hankel/zeros race) on the
// CPU and on the device and compares the final losses: the bar is 1%. The Montel
// constraint keeps the job on the optimiser (the hankel init's jobs under the radius
// constraint are fitted by variable projection: checkProjectionParity).
func checkDistillParity(t *testing.T, open deviceOpener, f64 bool, length, steps int) {
	targets := gpuTargets(length, 3, 11)
	s := DefaultSpec()
	s.Order, s.Steps = 6, steps
	s.Constraint, s.MaxRadius = "l1_montel", 0
	cpu, err := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	gpu, err := Run(context.Background(), Job{Spec: s, Targets: targets}, GPU{Float64: f64, open: open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d steps of %d channels: cpu %.2fs, gpu %.2fs", steps, len(targets), cpu.Report.Seconds, time.Since(start).Seconds())
	if gpu.Report.Backend != "gpu" || !gpu.Report.Stable {
		t.Errorf("gpu report: backend %s, stable %v", gpu.Report.Backend, gpu.Report.Stable)
	}
	for ch := range targets {
		c, g := cpu.Report.Channels[ch], gpu.Report.Channels[ch]
		t.Logf("channel %d: mse cpu %.6g gpu %.6g; rel error cpu %.4g gpu %.4g", ch, c.MSE, g.MSE, c.RelError, g.RelError)
		// Within 1% of each other, or both far below the targets' scale.
		if math.Abs(g.MSE-c.MSE) > 0.01*c.MSE && math.Abs(g.RelError-c.RelError) > 1e-6 {
			t.Errorf("channel %d: gpu mse %.6g, cpu %.6g: more than 1%% apart", ch, g.MSE, c.MSE)
		}
	}
}

// The parity tests on a real device: they skip, saying why, where there is none.

func requireGPU(t testing.TB) {
	info, err := DetectGPU()
	if err != nil {
		t.Skipf("no GPU to test on: %v", err)
	}
	t.Logf("GPU: %s", info)
}

func TestGPUParityKernels(t *testing.T) {
	requireGPU(t)
	t.Run("float32", func(t *testing.T) { checkKernelParity(t, openCUDA, false) })
	t.Run("float64", func(t *testing.T) { checkKernelParity(t, openCUDA, true) })
}

func TestGPUParitySteps(t *testing.T) {
	requireGPU(t)
	// CUDA's pow, cos and fused multiply-adds round differently from Go's; over 60 Adam
	// steps the float64 trajectories should stay well within 1e-6.
	checkStepParity(t, openCUDA, 1e-6)
}

func TestGPUParityDistill(t *testing.T) {
	requireGPU(t)
	t.Run("float32", func(t *testing.T) { checkDistillParity(t, openCUDA, false, 1024, 400) })
	t.Run("float64", func(t *testing.T) { checkDistillParity(t, openCUDA, true, 1024, 400) })
}

// gpuBenchShapes are the banks BenchmarkGPUStep times (channels D, length L, order n): the
// bank of BenchmarkRTFStep, to compare with the CPU backend and with
// bench/rtf_step_torch.py --device cuda on the same machine, a wide bank, a long one, and
// the GPU issue's (BenchmarkRTFStepLong on the CPU).
var gpuBenchShapes = []struct{ d, l, n int }{{256, 4096, 64}, {1024, 4096, 16}, {256, 65536, 64}, {1024, 16384, 64}}

// gpuStepBytes is what a step's passes read and write, each array once per pass, for D
// channels of L samples of rsize bytes (U = D·L·rsize; a half spectrum of L/2+1 complex
// values counts as U): pad writes a and b̃ (2U), the forward transforms read 2U and write
// 2U, the division reads 2U and writes 2U, the inverse reads U and writes U, the residual
// reads k and y and writes k and e (4U), the transform of e 2U, the adjoint reads 3U and
// writes 2U, the inverse pair 4U: 27U. The transforms' own passes come on top, so the
// bandwidth it gives is a lower bound on the one achieved.
func gpuStepBytes(d, length int, rsize int64) float64 {
	return 27 * float64(d) * float64(length) * float64(rsize)
}

// BenchmarkGPUStep times training steps of a bank on the device, in both precisions, with
// BenchmarkRTFStep's recipe (xavier init, no constraint, mse): float64/256x4096x64 is the
// CPU benchmark's step.
func BenchmarkGPUStep(b *testing.B) {
	requireGPU(b)
	benchGPUStep(b, nil, gpuBenchShapes)
}

func benchGPUStep(b *testing.B, open deviceOpener, shapes []struct{ d, l, n int }) {
	for _, f64 := range []bool{false, true} {
		for _, c := range shapes {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", gpuReal(f64), c.d, c.l, c.n), func(b *testing.B) {
				s := DefaultSpec()
				s.Order, s.Init, s.Constraint, s.Steps = c.n, "xavier", "none", 1<<20
				p := gpuProblem(b, s, gpuTargets(c.l, c.d, 1))
				tr, err := GPU{Float64: f64, open: open}.Start(p)
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				if _, _, err := tr.Step(context.Background(), 5); err != nil { // warm up
					b.Fatal(err)
				}
				const steps = 20
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					if _, _, err := tr.Step(context.Background(), steps); err != nil {
						b.Fatal(err)
					}
				}
				perStep := time.Since(start).Seconds() / float64(b.N*steps)
				b.ReportMetric(perStep*1e6, "µs/step")
				rsize := int64(4)
				if f64 {
					rsize = 8
				}
				b.ReportMetric(gpuStepBytes(c.d, c.l, rsize)/perStep/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkGPUCopy measures the device's copy bandwidth (bytes read and written) with
// device-to-device copies of 1 GiB, the ceiling for BenchmarkGPUStep's GB/s.
func BenchmarkGPUCopy(b *testing.B) {
	requireGPU(b)
	dev, err := openCUDA(true)
	if err != nil {
		b.Fatal(err)
	}
	release, err := dev.bind()
	if err != nil {
		b.Fatal(err)
	}
	defer release()
	defer dev.close()
	const size = 1 << 30
	src, err := dev.alloc(size)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := dev.alloc(size)
	if err != nil {
		b.Fatal(err)
	}
	sync := func() {
		if err := dev.download(make([]byte, 8), dst); err != nil {
			b.Fatal(err)
		}
	}
	if err := dev.zero(src, size); err != nil {
		b.Fatal(err)
	}
	if err := dev.copy(dst, src, size); err != nil { // warm up
		b.Fatal(err)
	}
	sync()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := dev.copy(dst, src, size); err != nil {
			b.Fatal(err)
		}
	}
	sync()
	b.ReportMetric(2*size*float64(b.N)/time.Since(start).Seconds()/1e9, "GB/s")
}
