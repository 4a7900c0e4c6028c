package filters_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// powerSumTol is the relative accuracy asked of the closed-form power sums against direct
// summation, relative to the largest term's size (N^k): the closed forms cancel to about
// that level where they meet the Taylor branch.
const powerSumTol = 1e-11

// directPowerSums is Σ_{τ=s}^{n-1} τ^k z^(τ−s), k = 0, 1, 2, summed term by term.
func directPowerSums(z complex128, n, s int) [3]complex128 {
	var out [3]complex128
	pw := complex(1, 0)
	for tau := s; tau < n; tau++ {
		tf := float64(tau)
		out[0] += pw
		out[1] += complex(tf, 0) * pw
		out[2] += complex(tf*tf, 0) * pw
		pw *= z
	}
	return out
}

// checkPowerSums reports where got misses want by more than powerSumTol of the largest term.
func checkPowerSums(t *testing.T, what string, n int, got, want [3]complex128) {
	t.Helper()
	for k := range got {
		scale := math.Pow(float64(n), float64(k)) * math.Max(1, cmplx.Abs(want[0]))
		if d := cmplx.Abs(got[k]-want[k]) / scale; !(d <= powerSumTol) {
			t.Errorf("%s: S_%d = %v, want %v (%.2g)", what, k, got[k], want[k], d)
		}
	}
}

// TestPowerSums compares the closed-form sums with direct summation on both sides of the
// Taylor branch's radius, near z = 1, near 0, on the negative axis and with shifts.
func TestPowerSums(t *testing.T) {
	const n = 1023
	g := filters.SharedPowerSums(n)
	rng := rand.New(rand.NewPCG(3, 4))
	var ws []complex128
	for range 300 {
		// log-distance from the unit circle from 1e-7 to 30, any angle.
		re := -math.Pow(10, -7+8.5*rng.Float64())
		ws = append(ws, complex(re, math.Pi*(2*rng.Float64()-1)))
	}
	ws = append(ws, complex(-1e-9, 0), complex(-2.0/n, 0), complex(-2.0/n, 1e-4), complex(-1e-3, math.Pi), -800)
	for _, w := range ws {
		z := cmplx.Exp(w)
		if real(w) < -700 {
			z = 0
		}
		for s := 0; s <= 2; s++ {
			checkPowerSums(t, fmt.Sprintf("w = %v, s = %d", w, s), n, g.Shifted(w, s, g.At(w)), directPowerSums(z, n, s))
		}
	}
}

// TestPowerSumsAtProduct checks the sums at a product of two poles formed from each pole's
// exps (AtProduct, as train's variable projection makes them) against direct summation:
// pole pairs of every radius and angle, a pole times the conjugate of a nearby one, and two
// poles near −1, whose product lies near z = 1 (without the phase taken into [−π, π] six of
// them miss the tolerance).
func TestPowerSumsAtProduct(t *testing.T) {
	const n = 1023
	g := filters.SharedPowerSums(n)
	rng := rand.New(rand.NewPCG(5, 6))
	logPole := func() complex128 {
		return complex(-math.Pow(10, -6+6*rng.Float64()), math.Pi*rng.Float64())
	}
	type pair struct{ p, q complex128 }
	var ps []pair
	for range 400 {
		ps = append(ps, pair{logPole(), logPole()})
	}
	for range 100 {
		p := logPole()
		near := complex(real(p)*(1+0.1*rng.Float64()), imag(p)+1e-4*rng.NormFloat64())
		ps = append(ps, pair{p, p}, pair{p, near}, pair{complex(real(p), math.Pi-1e-3*rng.Float64()), complex(real(near), math.Pi-1e-3*rng.Float64())})
	}
	ps = append(ps, pair{complex(-1e-4, math.Pi), complex(-2e-4, math.Pi)}, pair{complex(-1e-3, 0), complex(-2e-3, 0)})
	for _, d := range []float64{0.002, 0.003, 0.005, 0.01, 0.03} {
		ps = append(ps, pair{complex(-1e-5, math.Pi-d), complex(-2e-5, math.Pi-d/2)})
	}
	for _, pq := range ps {
		for _, conj := range []bool{false, true} {
			wq, xq := pq.q, g.PoleExp(pq.q)
			if conj {
				wq, xq = cmplx.Conj(wq), xq.Conj()
			}
			got := g.AtProduct(pq.p, wq, g.PoleExp(pq.p), xq)
			checkPowerSums(t, fmt.Sprintf("w = %v + %v", pq.p, wq), n, got, directPowerSums(cmplx.Exp(pq.p+wq), n, 0))
		}
	}
}

// TestGeomSumIsS0 checks GeomSum, the power sums' S₀ without their table, against S₀ of
// PowerSums and direct summation, at the edges it handles itself: z = 0, z = 1 and Im w
// beyond π (two poles near −1).
func TestGeomSumIsS0(t *testing.T) {
	const n = 1023
	g := filters.SharedPowerSums(n)
	ws := []complex128{0, complex(math.Inf(-1), 0), complex(-1e-9, 0), complex(-1e-3, 2*math.Pi-1e-6), complex(-2e-4, -2*math.Pi+1e-3), complex(-0.1, 3)}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100 {
		ws = append(ws, complex(-math.Pow(10, -7+8.5*rng.Float64()), 2*math.Pi*(2*rng.Float64()-1)))
	}
	for _, w := range ws {
		want := directPowerSums(cmplx.Exp(w), n, 0)[0]
		if math.IsInf(real(w), -1) {
			want = 1
		}
		got := filters.GeomSum(w, n)
		scale := math.Max(1, cmplx.Abs(want))
		if d := cmplx.Abs(got-want) / scale; !(d <= powerSumTol) {
			t.Errorf("w = %v: GeomSum = %v, want %v (%.2g)", w, got, want, d)
		}
		if math.IsInf(real(w), -1) {
			continue
		}
		if d := cmplx.Abs(got-g.At(w)[0]) / scale; !(d <= powerSumTol) {
			t.Errorf("w = %v: GeomSum = %v, PowerSums S₀ = %v (%.2g)", w, got, g.At(w)[0], d)
		}
	}
}
