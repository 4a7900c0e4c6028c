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
	// Powers that decay past 2^-800 within the samples, where both flush them (package underflow).
	for _, pairs := range []int{4, 9, 13} {
		name := fmt.Sprintf("%d pairs, 3 reals, L = 8191, poles decaying", pairs)
		b, x, c, y := kernelProblem(rng, pairs, 3, 8191, "decaying")
		compareKernels(t, name, b, x, c, y)
	}
}

// TestSumsFlush: flushing the powers that fall below 2^-800 leaves the sums as the chains
// without it give them, to far below float64's precision, on poles whose powers turn
// subnormal (and, for |λ| > 1/2, would stay so) within the samples.
func TestSumsFlush(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, pairs := range []int{3, 8} {
		b, x, c, y := kernelProblem(rng, pairs, 2, 8191, "decaying")
		n := len(b.mu)
		v0, v1, e := make([]complex128, n), make([]complex128, n), make([]float64, len(x))
		cpuSums{}.project(b, x, v0, v1)
		cpuSums{}.residual(b, c, y, e)
		// The unflushed sums, term by term, with the size of their terms.
		var xSize float64
		for _, xt := range x {
			xSize += math.Abs(xt)
		}
		for p, l := range b.mu {
			var s0, s1 complex128
			pw, prev := complex(1, 0), complex(0, 0)
			for t, xt := range x {
				s0 += complex(xt, 0) * pw
				if p < b.pairs {
					s1 += complex(xt*float64(t), 0) * pw
				} else {
					s1 += complex(xt*float64(t), 0) * prev
				}
				prev, pw = pw, pw*l
			}
			if d := cmplx.Abs(v0[p] - s0); d > 1e-15*xSize {
				t.Errorf("%d pairs, pole %d (|λ| = %.3f): v0 %v, unflushed %v", pairs, p, cmplx.Abs(l), v0[p], s0)
			}
			if d := cmplx.Abs(v1[p] - s1); d > 1e-15*float64(len(x))*xSize {
				t.Errorf("%d pairs, pole %d (|λ| = %.3f): v1 %v, unflushed %v", pairs, p, cmplx.Abs(l), v1[p], s1)
			}
		}
		want := make([]float64, len(y))
		for i := range want {
			want[i] = -y[i]
		}
		for p, l := range b.mu {
			coef := complex(c[p+b.pairs], 0) // a real pole's residue
			if p < b.pairs {
				coef = 2 * complex(c[2*p], c[2*p+1])
			}
			pw := coef
			for t := range want {
				want[t] += real(pw)
				pw *= l
			}
		}
		for i := range e {
			if math.Abs(e[i]-want[i]) > 1e-14*(1+math.Abs(want[i])) {
				t.Fatalf("%d pairs: e[%d] = %v, unflushed %v", pairs, i, e[i], want[i])
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
		case "decaying": // below 2^-1022 within 8191 samples, above 1/2 (stuck there unflushed)
			return 0.55 + 0.36*rng.Float64()
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

// TestChainsFlush: the package's other chains of powers over the samples flush as the sums
// do (package underflow), so that no subnormal number is left in what they write at L = 8192 with
// poles whose powers pass 2^-1022 (and, above 1/2 in radius, would stay there): the modal
// model's kernel and Jacobian, and the QR fallback's columns.
func TestChainsFlush(t *testing.T) {
	check := func(what string, xs []float64) {
		t.Helper()
		for i, x := range xs {
			if x != 0 && math.Abs(x) < 0x1p-1022 {
				t.Errorf("%s: entry %d is subnormal (%g)", what, i, x)
				return
			}
		}
	}
	m, p := randomModal(rand.New(rand.NewPCG(3, 4)), 3, 2, 8192, false)
	for i := range m.pairs {
		p[i*m.pairSize()] = math.Log(-math.Log(0.7)) // 0.7^t passes 2^-1022 at t = 1986
	}
	k := make([]float64, m.length)
	m.kernel(nil, p, k)
	check("modal kernel", k)
	w := newModalRefineWork(m, make([]float64, m.length))
	w.jacobian(p)
	check("modal Jacobian", w.jt.RawMatrix().Data)
	v, _, _, _ := testVarpro(8192, 1, 1e-3, 1)
	for j, c := range v.basisColumns(0, 8192, &v.qr) {
		check(fmt.Sprintf("QR column %d", j), c)
	}
}

// TestChainsFlushRelative: a chain flushes relative to its start, so a target and residues
// scaled by 2^-780 (where 2^-800 is a millionth of the chains' start) give the residual and
// the modal kernel scaled by 2^-780, with the kernels and without.
func TestChainsFlushRelative(t *testing.T) {
	const scale = 0x1p-780
	t.Cleanup(func() { sumsAsm = CPUSums() == "avx2" })
	rng := rand.New(rand.NewPCG(11, 12))
	b, _, c, y := kernelProblem(rng, 9, 3, 4095, "decaying")
	cs, ys := make([]float64, len(c)), make([]float64, len(y))
	for i := range c {
		cs[i] = c[i] * scale
	}
	for i := range y {
		ys[i] = y[i] * scale
	}
	for _, asm := range []bool{false, true} {
		sumsAsm = asm && CPUSums() == "avx2"
		e, es := make([]float64, len(y)), make([]float64, len(y))
		cpuSums{}.residual(b, c, y, e)
		cpuSums{}.residual(b, cs, ys, es)
		for i := range e {
			if d := math.Abs(es[i]/scale - e[i]); d > 1e-12*(1+math.Abs(e[i])) {
				t.Fatalf("kernels %v: e[%d] = %g unscaled, %g scaled back", sumsAsm, i, e[i], es[i]/scale)
			}
		}
	}
	m, p := randomModal(rand.New(rand.NewPCG(3, 4)), 3, 2, 4096, false)
	k := make([]float64, m.length)
	m.kernel(nil, p, k)
	for i := range m.pairs {
		q := p[i*m.pairSize():]
		q[2], q[3] = q[2]*scale, q[3]*scale
	}
	for i := range m.reals {
		p[m.pairs*m.pairSize()+i*m.realSize()+m.realSize()-1] *= scale
	}
	p[len(p)-1] *= scale
	ks := make([]float64, m.length)
	m.kernel(nil, p, ks)
	for i := range k {
		if d := math.Abs(ks[i]/scale - k[i]); d > 1e-12*(1+math.Abs(k[i])) {
			t.Fatalf("modal kernel: k[%d] = %g unscaled, %g scaled back", i, k[i], ks[i]/scale)
		}
	}
}
