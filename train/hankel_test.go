package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/ssmlab/ssmlab/internal/cputime"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// TestHankelTop checks the Lanczos eigenpairs against a full eigendecomposition on every
// target family: the leading eigenvalues agree to rounding relative to the largest, and each
// Ritz vector's residual ‖Hv - λv‖ is as small.
func TestHankelTop(t *testing.T) {
	fams := targetFamilies(512, 2, 5)
	for _, name := range []string{"hyena", "s4-hippo", "butterworth", "windowed-sinc", "decaying-noise", "iir"} {
		for ch, y := range fams[name] {
			m := (len(y) - 2) / 2
			for _, r := range []int{1, 4, 16, 64} {
				lambda, q, err := lanczosHankelTop(y[1:], m, r)
				if err != nil {
					t.Fatal(err)
				}
				want, _, err := denseHankelTop(y[1:], m, r)
				if err != nil {
					t.Fatal(err)
				}
				if len(lambda) != r {
					t.Fatalf("%s/%d r=%d: %d eigenvalues", name, ch, r, len(lambda))
				}
				top := math.Abs(want[0])
				op := newHankelOp(y[1:], m)
				hv := make([]float64, m)
				for i := range lambda {
					if d := math.Abs(lambda[i] - want[i]); d > 1e-11*top {
						t.Errorf("%s/%d r=%d: λ%d = %.15g, dense %.15g", name, ch, r, i, lambda[i], want[i])
					}
					op.apply(hv, q[i])
					floats.AddScaled(hv, -lambda[i], q[i])
					if res := floats.Norm(hv, 2); res > 1e-12*top {
						t.Errorf("%s/%d r=%d: pair %d residual %.3g (σ₁ %.3g)", name, ch, r, i, res, top)
					}
					if nq := floats.Norm(q[i], 2); math.Abs(nq-1) > 1e-12 {
						t.Errorf("%s/%d r=%d: vector %d has norm %.15g", name, ch, r, i, nq)
					}
				}
			}
		}
	}
}

// TestHankelOp checks the FFT product against the dense one for odd and even sizes.
func TestHankelOp(t *testing.T) {
	for _, m := range []int{1, 2, 3, 7, 64, 100} {
		c := make([]float64, 2*m-1)
		for i := range c {
			c[i] = math.Sin(float64(i)*1.7) + 1/float64(i+1)
		}
		x := make([]float64, m)
		for i := range x {
			x[i] = math.Cos(float64(i) * 0.3)
		}
		got := make([]float64, m)
		newHankelOp(c, m).apply(got, x)
		for i := 0; i < m; i++ {
			want := 0.0
			for j := 0; j < m; j++ {
				want += c[i+j] * x[j]
			}
			if math.Abs(got[i]-want) > 1e-12*float64(m) {
				t.Errorf("m=%d: (Hx)[%d] = %.15g, want %.15g", m, i, got[i], want)
			}
		}
	}
}

// BenchmarkERA is ERA on the full 511×511 Hankel matrix of a 1024-sample kernel at n = 64:
// a near-exact target (Hyena, whose spectrum falls fast) and decaying noise (whose spectrum
// does not, the Lanczos worst case); "dense-eigenpairs" is what the leading eigenpairs alone
// cost by a full eigendecomposition.
func BenchmarkERA(b *testing.B) {
	fams := targetFamilies(1024, 1, 1)
	for _, name := range []string{"hyena", "decaying-noise"} {
		y := fams[name][0]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := eraFilter(y, 64); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	y := fams["hyena"][0]
	b.Run("dense-eigenpairs", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := denseHankelTop(y[1:], 511, 64); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLadderERA is ERA's realisations of a ladder's rungs (orders 4 … 64) for one
// kernel, each from a Lanczos run of its own ("own") or all from one run (hankelTops,
// "shared", as fitLadder makes them).
func BenchmarkLadderERA(b *testing.B) {
	fams := targetFamilies(1024, 1, 1)
	orders := []int{4, 8, 16, 32, 64}
	for _, name := range []string{"s4-hippo", "decaying-noise"} {
		y := fams[name][0]
		b.Run(name+"/own", func(b *testing.B) {
			for b.Loop() {
				for _, n := range orders {
					if _, err := eraRows(y, n, eraSize); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(name+"/shared", func(b *testing.B) {
			for b.Loop() {
				tops := eraTops(y, eraSize)
				for _, n := range orders {
					if _, err := eraFrom(y, n, tops); err != nil {
						b.Fatal(err)
					}
				}
				tops.release()
			}
		})
	}
}

// TestSharedLanczosRun checks that a Lanczos run shared by several r (hankelTops) answers
// each, asked in any order, with the eigenpairs a run for that r alone gives, to the bit:
// fits start from them, and a ladder's rung must not depend on the rungs asked before it.
func TestSharedLanczosRun(t *testing.T) {
	fams := targetFamilies(1024, 2, 1)
	for _, name := range []string{"s4-hippo", "decaying-noise", "butterworth"} {
		for ch, y := range fams[name] {
			m := 511
			tops := newHankelTops(y[1:], m)
			for _, r := range []int{64, 4, 32, 8, 16, 64, 100} {
				gotVals, gotVecs, err := tops.top(r)
				if err != nil {
					t.Fatal(err)
				}
				wantVals, wantVecs, err := lanczosTop(newHankelOp(y[1:], m).apply, m, r)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gotVals, wantVals) {
					t.Fatalf("%s channel %d, r = %d: shared run's values differ from its own run's", name, ch, r)
				}
				for i := range wantVecs {
					if !slices.Equal(gotVecs[i], wantVecs[i]) {
						t.Fatalf("%s channel %d, r = %d: shared run's vector %d differs from its own run's", name, ch, r, i)
					}
				}
			}
			tops.release()
		}
	}
}

// BenchmarkSuggestOrder is distill's suggested order (tolerance 1e-3, the CLI's default) for
// 16 Hyena kernels of 1024 samples.
func BenchmarkSuggestOrder(b *testing.B) {
	hy := targetFamilies(1024, 16, 1)["hyena"]
	for b.Loop() {
		if !SuggestOrder(hy, 1e-3, MaxSuggestOrder).OK {
			b.Fatal("no order")
		}
	}
}

// BenchmarkSuggestOrderTrained is the suggestion on the 16 channels of each trained layer
// (testdata/trained, L = 1024) at 1e-2 and 1e-3, with its CPU time (both threads) per run.
func BenchmarkSuggestOrderTrained(b *testing.B) {
	for _, task := range []string{"fixed", "drawn"} {
		targets, err := trainedFilters("../testdata/trained/copy-"+task+"-layer0.npy", 16)
		if err != nil {
			b.Fatal(err)
		}
		for _, tol := range []float64{1e-2, 1e-3} {
			b.Run(fmt.Sprintf("%s/tol=%g", task, tol), func(b *testing.B) {
				cpu0 := cputime.Process()
				var s Suggestion
				for b.Loop() {
					if s = SuggestOrder(targets, tol, MaxSuggestOrder); !s.OK {
						b.Fatal(s)
					}
				}
				if cputime.Measured {
					b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				}
				b.ReportMetric(float64(s.Order), "order")
			})
		}
	}
}

// BenchmarkSuggestOrderNoReduction is the same for 16 kernels of decaying noise, whose lower
// bound stays above 1e-3/SuggestMargin up to the search's end (order 255): the case where
// every search size is tried.
func BenchmarkSuggestOrderNoReduction(b *testing.B) {
	noise := targetFamilies(1024, 16, 1)["decaying-noise"]
	for b.Loop() {
		if SuggestOrder(noise, 1e-3, MaxSuggestOrder).OK {
			b.Fatal("decaying noise reduced")
		}
	}
}

// TestRitzLast checks the eigenvalues and last eigenvector entries of ritzLast against a
// full tridiagonal eigendecomposition (LAPACK's Dsteqr), on random matrices, matrices with
// clustered and repeated eigenvalues and a split (zero off-diagonal entry).
func TestRitzLast(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	impl := gonum.Implementation{}
	for trial := 0; trial < 40; trial++ {
		n := 1 + rng.IntN(120)
		d, e := make([]float64, n), make([]float64, max(n-1, 0))
		for i := range d {
			d[i] = rng.NormFloat64()
			if trial%4 == 1 {
				d[i] = 1 + 1e-12*rng.NormFloat64() // clustered
			}
		}
		for i := range e {
			e[i] = rng.NormFloat64()
			if trial%4 == 1 {
				e[i] *= 1e-9
			}
			if trial%4 == 2 && i == n/2 {
				e[i] = 0
			}
		}
		theta, last, ok := ritzLast(d, e)
		if !ok {
			t.Fatalf("n = %d: no convergence", n)
		}
		wd, we := append([]float64(nil), d...), append([]float64(nil), e...)
		z := make([]float64, n*n)
		if !impl.Dsteqr(lapack.EVTridiag, n, wd, we, z, n, make([]float64, max(1, 2*n-2))) {
			t.Fatal("Dsteqr failed")
		}
		// Compare as multisets: sorted values, and for each value the squared last entries
		// summed over a cluster (an eigenvector basis of a cluster is not unique).
		type pair struct{ v, z2 float64 }
		got, want := make([]pair, n), make([]pair, n)
		for i := range got {
			got[i] = pair{theta[i], last[i] * last[i]}
			want[i] = pair{wd[i], z[(n-1)*n+i] * z[(n-1)*n+i]}
		}
		sort.Slice(got, func(i, j int) bool { return got[i].v < got[j].v })
		sort.Slice(want, func(i, j int) bool { return want[i].v < want[j].v })
		scale := math.Max(math.Abs(want[0].v), math.Abs(want[n-1].v))
		gs, ws := 0.0, 0.0
		for i := range got {
			if math.Abs(got[i].v-want[i].v) > 1e-13*scale {
				t.Errorf("trial %d n=%d: eigenvalue %d %.15g, Dsteqr %.15g", trial, n, i, got[i].v, want[i].v)
			}
			gs += got[i].z2
			ws += want[i].z2
			if i == n-1 || want[i+1].v-want[i].v > 1e-6*scale {
				if math.Abs(gs-ws) > 1e-12 {
					t.Errorf("trial %d n=%d: squared last entries %.15g near λ = %.6g, Dsteqr %.15g", trial, n, gs, want[i].v, ws)
				}
				gs, ws = 0, 0
			}
		}
	}
}

// TestTridiagInverse checks tridiagInverse's eigenpairs against Dsteqr's (tridiagEigen) on
// random matrices, matrices with clustered and repeated eigenvalues, splits (a zero
// off-diagonal entry, as a Lanczos restart leaves) and Wilkinson's W21⁺ (pairs agreeing to
// 1e-14): the same values to rounding, residuals ‖Tz − θz‖ ≤ 1e-12·‖T‖₁ and vectors
// orthonormal to 1e-12, without falling back to Dsteqr.
func TestTridiagInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		n := 1 + rng.IntN(200)
		d, e := make([]float64, n), make([]float64, max(n-1, 0))
		for i := range d {
			d[i] = rng.NormFloat64()
			if trial%5 == 1 {
				d[i] = 1 + 1e-12*rng.NormFloat64() // clustered
			}
			if trial%5 == 3 {
				d[i] = math.Abs(float64(i - n/2)) // Wilkinson W⁺
			}
		}
		for i := range e {
			e[i] = rng.NormFloat64()
			switch {
			case trial%5 == 1:
				e[i] *= 1e-9
			case trial%5 == 2 && i%(1+n/3) == n/6:
				e[i] = 0
			case trial%5 == 3:
				e[i] = 1
			}
		}
		r := 1 + rng.IntN(n)
		vals, vecs, ok := tridiagInverse(d, e, r)
		if !ok {
			t.Fatalf("trial %d n=%d r=%d: inverse iteration did not converge", trial, n, r)
		}
		want, _, ok := tridiagEigen(d, e, r)
		if !ok {
			t.Fatal("Dsteqr failed")
		}
		norm := tridiagNorm1(d, e)
		for k := range vals {
			if math.Abs(math.Abs(vals[k])-math.Abs(want[k])) > 1e-13*norm {
				t.Errorf("trial %d n=%d: |θ_%d| %.15g, Dsteqr's %.15g", trial, n, k, vals[k], want[k])
			}
			z := vecs[k]
			res := 0.0
			for i := range z {
				s := (d[i] - vals[k]) * z[i]
				if i > 0 {
					s += e[i-1] * z[i-1]
				}
				if i < n-1 {
					s += e[i] * z[i+1]
				}
				res += s * s
			}
			if math.Sqrt(res) > 1e-12*norm {
				t.Errorf("trial %d n=%d: residual of pair %d %.3g (‖T‖ %.3g)", trial, n, k, math.Sqrt(res), norm)
			}
			for j := 0; j <= k; j++ {
				want := 0.0
				if j == k {
					want = 1
				}
				if got := floats.Dot(z, vecs[j]); math.Abs(got-want) > 1e-12 {
					t.Errorf("trial %d n=%d: z_%d·z_%d = %.3g", trial, n, k, j, got)
				}
			}
		}
	}
}
