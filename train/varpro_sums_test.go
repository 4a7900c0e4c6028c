package train

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestSumsKernels: the AVX2 kernels (varpro_sums_amd64.s) give the Go loops' sums bit for
// bit, signs of zero included, on every shape of pole set (0 to 13 pairs: blocks of eight
// and four and the pairs left to Go; real poles after them), at lengths around the
// residual's blocks of four samples, with poles at 0, near 0 (and on the real axis) and near
// the unit circle, and large and signed zero samples and residues. Neither writes outside
// its outputs.
func TestSumsKernels(t *testing.T) {
	if !sumsAsm {
		t.Skip("no AVX2 kernels in this build or on this CPU")
	}
	t.Cleanup(func() { sumsAsm = true })
	rng := rand.New(rand.NewPCG(5, 6))
	for pairs := range 14 {
		for _, reals := range []int{0, 3} {
			for _, m := range []int{0, 1, 2, 3, 4, 5, 8, 1023} {
				for _, radius := range []string{"0", "near 0", "near 1", "any", "signed zeros"} {
					name := fmt.Sprintf("%d pairs, %d reals, L = %d, poles %s", pairs, reals, m, radius)
					b, x, c, y := kernelProblem(rng, pairs, reals, m, radius)
					compareKernels(t, name, b, x, c, y)
				}
			}
		}
	}
}

// kernelProblem draws poles of the given radius, samples x and y and residues c, a tenth of
// them signed zeros and some of x's of size 1e150 (large, and finite through the sums).
func kernelProblem(rng *rand.Rand, pairs, reals, m int, radius string) (poleBasis, []float64, []float64, []float64) {
	r := func() float64 {
		switch radius {
		case "0": // every term after the first a signed zero
			return 0
		case "near 0":
			if rng.IntN(4) == 0 {
				return 0
			}
			return 1e-3 * rng.Float64()
		case "near 1":
			return 1 - 1e-7*rng.Float64()
		}
		return rng.Float64()
	}
	b := poleBasis{pairs: pairs}
	for i := range pairs + reals {
		mu := cmplx.Rect(r(), math.Pi*rng.Float64())
		switch k := rng.IntN(6); {
		case i >= pairs || k == 0:
			mu = complex(r(), 0)
		case k == 1:
			mu = complex(-r(), 0)
		}
		if i >= pairs && rng.IntN(2) == 0 {
			mu = -mu
		}
		b.mu = append(b.mu, mu)
	}
	draw := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			switch rng.IntN(20) {
			case 0:
				v[i] = 0
			case 1:
				v[i] = math.Copysign(0, -1)
			case 2:
				v[i] = -scale * rng.Float64()
			default:
				v[i] = rng.NormFloat64()
			}
		}
		return v
	}
	x, c, y := draw(m, 1e150), draw(2*pairs+reals, 1), draw(m, 1)
	if radius == "signed zeros" {
		// Poles on the positive real axis, residues (−0, +0) and y = +0: every term of e is
		// −0 and so is e, where a single +0 added would make it +0.
		for i := range b.mu {
			b.mu[i] = complex(rng.Float64(), 0)
		}
		for i := range c {
			c[i] = math.Copysign(0, float64(i%2)-0.5)
		}
		for i := range c[2*pairs:] {
			c[2*pairs+i] = math.Copysign(0, -1)
		}
		clear(y)
	}
	return b, x, c, y
}

// compareKernels runs the sums with and without the kernels and fails on any bit of
// difference, or on a write past an output's end (a sentinel after each).
func compareKernels(t *testing.T, name string, b poleBasis, x, c, y []float64) {
	t.Helper()
	n, m := len(b.mu), len(x)
	type outputs struct {
		v0, v1, w0 []complex128
		e          []float64
	}
	run := func(asm bool, fill float64) outputs { // fill inside the outputs, 7 after them
		sumsAsm = asm
		o := outputs{make([]complex128, n+1), make([]complex128, n+1), make([]complex128, n+1), make([]float64, m+1)}
		for _, v := range [][]complex128{o.v0, o.v1, o.w0} {
			for i := range v {
				v[i] = complex(fill, fill)
			}
			v[n] = 7
		}
		o.e[m] = 7
		cpuSums{}.project(b, x, o.v0[:n], o.v1[:n])
		cpuSums{}.project(b, x, o.w0[:n], nil)
		cpuSums{}.residual(b, c, y, o.e[:m])
		return o
	}
	got, want := run(true, 8), run(false, 9) // what neither writes differs
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for _, s := range []struct {
		what      string
		got, want []complex128
	}{{"project v0", got.v0, want.v0}, {"project v1", got.v1, want.v1}, {"project0 v0", got.w0, want.w0}} {
		for p := range s.got {
			if !same(real(s.got[p]), real(s.want[p])) || !same(imag(s.got[p]), imag(s.want[p])) {
				t.Fatalf("%s: %s[%d] = %v with the kernels, %v without", name, s.what, p, s.got[p], s.want[p])
			}
		}
	}
	for i := range got.e {
		if !same(got.e[i], want.e[i]) {
			t.Fatalf("%s: residual e[%d] = %v with the kernels, %v without", name, i, got.e[i], want.e[i])
		}
	}
}
