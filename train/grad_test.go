package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fdTol: central differences with step 1e-6 on O(1) quantities are accurate to about 1e-9
// (truncation h² plus rounding eps/h); the analytic gradients must agree to 1e-6 relative.
const fdTol = 1e-6

func testModels(length int) map[string]model {
	return map[string]model{
		"rtf":            &rtfModel{n: 5, length: length},
		"rtf/montel":     &rtfModel{n: 5, length: length, montel: true},
		"modal":          &modalModel{pairs: 2, reals: 1, length: length},
		"rotation":       &modalModel{pairs: 2, reals: 1, length: length, rotation: true},
		"rtf/order0":     &rtfModel{n: 0, length: length},
		"modal/realonly": &modalModel{reals: 2, length: length},
	}
}

// TestGradientsFiniteDifference checks ∂(v·k)/∂p against central differences for every model,
// at a power-of-two length (the RTF's pruned transforms) and others (full real transforms:
// FFTPACK at 60, Bluestein's algorithm at 131, a prime).
func TestGradientsFiniteDifference(t *testing.T) {
	for _, length := range []int{64, 60, 131} {
		testGradients(t, length)
	}
}

func testGradients(t *testing.T, length int) {
	for name, m := range testModels(length) {
		name = fmt.Sprintf("%s/L=%d", name, length)
		rng := rand.New(rand.NewPCG(1, 2))
		p := make([]float64, m.numParams())
		for i := range p {
			p[i] = 0.3 * rng.NormFloat64()
		}
		if mm, ok := m.(*modalModel); ok {
			for i := 0; i < mm.pairs; i++ {
				p[i*mm.pairSize()] = -1.5 + 0.5*rng.Float64() // |λ| ≈ 0.8
			}
		}
		v := make([]float64, length)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		ws := m.newWorkspace()
		k := make([]float64, length)
		f := func(q []float64) float64 {
			m.kernel(ws, q, k)
			s := 0.0
			for i := range k {
				s += v[i] * k[i]
			}
			return s
		}
		g := make([]float64, len(p))
		f(p)
		m.grad(ws, p, v, g)
		const h = 1e-6
		for i := range p {
			q := append([]float64(nil), p...)
			q[i] += h
			up := f(q)
			q[i] -= 2 * h
			down := f(q)
			fd := (up - down) / (2 * h)
			if d := math.Abs(fd - g[i]); d > fdTol*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: ∂/∂p[%d] analytic %.10g, finite difference %.10g", name, i, g[i], fd)
			}
		}
	}
}

// TestRTFKernelIsTruncatedResponse: the deployed filter's true first L samples equal the
// trained circular kernel (RTF paper, eq. 13 and its inverse).
func TestRTFKernelIsTruncatedResponse(t *testing.T) {
	for _, length := range []int{16, 64, 100, 131} {
		m := &rtfModel{n: 4, length: length}
		p := []float64{-0.9, 0.5, -0.1, 0.02, 0.3, -0.2, 0.1, 0.05, 0.7}
		k := make([]float64, length)
		m.kernel(m.newWorkspace(), p, k)
		f, cond, err := m.filter(p)
		if err != nil {
			t.Fatal(err)
		}
		h := f.Impulse(length)
		for i := range h {
			if math.Abs(h[i]-k[i]) > 1e-12 {
				t.Fatalf("L=%d: h[%d] = %v, kernel %v (cond %v)", length, i, h[i], k[i], cond)
			}
		}
	}
}

func ExampleDefaultSpec() {
	s := DefaultSpec()
	fmt.Println(s.Model, s.Init, s.Optimizer.Name, s.Optimizer.Schedule)
	// Output: rtf hankel adam cosine
}

// TestSchurCohnAgreesWithEigenvalues: the O(n²) stability test and the spectral radius from
// eigenvalues agree on random denominators, on both sides of the radius.
func TestSchurCohnAgreesWithEigenvalues(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	agree, tried := 0, 0
	for trial := 0; trial < 400; trial++ {
		n := 1 + rng.IntN(24)
		m := &rtfModel{n: n, length: 64}
		p := make([]float64, m.numParams())
		for i := 0; i < n; i++ {
			p[i] = rng.NormFloat64() * 0.6 / float64(i+1)
		}
		rho := m.maxRadius(p)
		r := 0.5 + rng.Float64()*0.6
		if math.Abs(rho-r) < 1e-6 {
			continue // too close to call in floating point
		}
		tried++
		if m.within(p, r) == (rho < r) {
			agree++
		} else {
			t.Errorf("n=%d r=%.4f: Schur–Cohn says %v, spectral radius %.6f", n, r, m.within(p, r), rho)
		}
	}
	if tried < 300 {
		t.Fatalf("only %d decisive trials", tried)
	}
}
