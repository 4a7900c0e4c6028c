package filters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ssmlab/ssmlab/internal/numtest"
)

// polyFromRoots returns the monic coefficients a₁…aₙ of Π(z - rᵢ) for conjugate-closed roots.
func polyFromRootsTest(r []complex128) []float64 {
	c := []complex128{1}
	for _, x := range r {
		next := make([]complex128, len(c)+1)
		for i, v := range c {
			next[i] += v
			next[i+1] -= v * x
		}
		c = next
	}
	a := make([]float64, len(r))
	for i := range a {
		a[i] = real(c[i+1])
	}
	return a
}

// backwardError is the largest normwise backward error of roots z of zⁿ + a₁zⁿ⁻¹ + … + aₙ:
// |p(z)| / Σ|cₖ||z|ᵏ, evaluated on the reversed polynomial outside the unit circle.
func backwardError(a []float64, z []complex128) float64 {
	worst := 0.0
	for _, r := range z {
		var p complex128
		var s float64
		if cmplx.Abs(r) <= 1 {
			p, s = 1, 1
			for _, v := range a {
				p = p*r + complex(v, 0)
				s = s*cmplx.Abs(r) + math.Abs(v)
			}
		} else {
			w := 1 / r
			p, s = complex(a[len(a)-1], 0), math.Abs(a[len(a)-1])
			for k := len(a) - 2; k >= -1; k-- {
				c := 1.0
				if k >= 0 {
					c = a[k]
				}
				p = p*w + complex(c, 0)
				s = s*cmplx.Abs(w) + math.Abs(c)
			}
		}
		worst = math.Max(worst, cmplx.Abs(p)/s)
	}
	return worst
}

// TestAberthAgainstQR compares the Aberth–Ehrlich roots with the companion matrix's
// eigenvalues on polynomials with random N(0, 1) coefficients (roots near the unit circle,
// well separated), and checks the backward error of both.
func TestAberthAgainstQR(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	for _, n := range []int{33, 64, 100, 200, 400} {
		for trial := range 4 {
			a := make([]float64, n)
			for i := range a {
				a[i] = rng.NormFloat64()
			}
			got, ok, _ := aberthRoots(context.Background(), a)
			qr := qrRoots(t, a)
			be, beQR := backwardError(a, got), backwardError(a, qr)
			d := numtest.RootsRelDist(got, qr)
			// Backward stable: a few roundings of the coefficients, as QR is (8 eps here).
			if !ok || be > 32*eps || d > 1e-8 {
				t.Errorf("n=%d trial %d: converged %v, backward error %.3g (QR %.3g), distance to QR %.3g", n, trial, ok, be, beQR, d)
			}
		}
	}
}

func TestAberthLarge(t *testing.T) {
	for _, n := range []int{512, 1024, 4096} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		var r []complex128
		for len(r) < n {
			x := cmplx.Rect(0.9+0.099*rng.Float64(), math.Pi*rng.Float64())
			r = append(r, x, cmplx.Conj(x))
		}
		a := polyFromRootsTest(r)
		t0 := time.Now()
		got, ok, _ := aberthRoots(context.Background(), a)
		t.Logf("n=%d: %v, converged %v, %d roots, radius %.6g", n, time.Since(t0), ok, len(got), maxAbs(got))
	}
}

// TestPolesContextCancelled: a cancelled context stops the root search with its error.
func TestPolesContextCancelled(t *testing.T) {
	a := make([]float64, 2048)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range a {
		a[i] = (2*rng.Float64() - 1) / 2048
	}
	tf, err := NewTransferFunction(a, make([]float64, len(a)), 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PolesContext(ctx, tf); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if p, err := PolesContext(context.Background(), tf); err != nil || len(p) != len(a) {
		t.Errorf("%d poles, %v", len(p), err)
	}
}

// TestRootsKeepClusterMean checks that the roots of polynomials with clustered roots sum to
// −a₁, as the companion matrix's eigenvalues do (QR keeps the trace to a few ε·‖A‖): the mean
// of a cluster is well conditioned even where its members are not, and the zeros of a
// Butterworth filter, (z + 1)ⁿ, are one such cluster. Newton steps taken from residuals at
// the rounding level moved the mean of (z + 1)⁶'s roots by 8e-5 (tf → zpk of a Butterworth
// filter of order 6 failed its accuracy check at 4e-5).
func TestRootsKeepClusterMean(t *testing.T) {
	// traceTol: QR's backward error, a few ε times the norm of the balanced companion matrix.
	const traceTol = 64 * eps
	cases := map[string][]complex128{}
	for _, m := range []int{2, 3, 4, 6, 8, 12} {
		for _, c := range []complex128{-1, 0.9, complex(0.8, 0.3)} {
			var r []complex128
			for k := 0; k < m; k++ {
				r = append(r, c)
				if imag(c) != 0 {
					r = append(r, cmplx.Conj(c))
				}
			}
			cases[fmt.Sprintf("(z-%v)^%d", c, m)] = r
		}
	}
	for name, r := range cases {
		a := polyFromRootsTest(r)
		got, err := rootsMonic(a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sum complex128
		scale := 0.0
		for _, z := range got {
			sum += z
			scale += cmplx.Abs(z)
		}
		if e := cmplx.Abs(sum + complex(a[0], 0)); e > traceTol*scale {
			t.Errorf("%s: Σ roots + a₁ = %.3g, above %.3g", name, e, traceTol*scale)
		}
	}
}

// clusterPoly returns the roots of (z - c)ᵐ (with its conjugate where c is complex) times n - m
// (or n - 2m) separated roots evenly spaced on the circle |z| = rho, a real one where the
// count is odd: a polynomial of degree n with one m-fold cluster.
func clusterPoly(n, m int, c complex128, rho float64) []complex128 {
	var r []complex128
	for k := 0; k < m; k++ {
		r = append(r, c)
		if imag(c) != 0 {
			r = append(r, cmplx.Conj(c))
		}
	}
	rest := n - len(r)
	for k := 0; k < rest/2; k++ {
		z := cmplx.Rect(rho, math.Pi*(float64(k)+0.5)/float64(rest/2+1))
		r = append(r, z, cmplx.Conj(z))
	}
	if rest%2 == 1 {
		r = append(r, complex(-rho, 0))
	}
	return r
}

// TestAberthKeepsClusterMean runs the Aberth–Ehrlich path (degree above qrRootsMax) on
// polynomials of degree 33 to 128 with one cluster of multiplicity up to 40, and the
// iteration itself on smaller clusters, which it leaves to its trace correction: the roots
// must sum to −a₁ as in TestRootsKeepClusterMean, or as closely as the companion matrix's
// eigenvalues do (their coefficients grow as 2.2ⁿ, and QR's backward error with them). Its
// stopping rule, each root on its own, left (z + 1)⁶'s mean 3e-5 off and (z + 1)⁴⁰'s 0.07.
func TestAberthKeepsClusterMean(t *testing.T) {
	const traceTol = 64 * eps
	traceErr := func(a []float64, got []complex128) (e, scale float64) {
		var sum complex128
		for _, z := range got {
			sum += z
			scale += cmplx.Abs(z)
		}
		return cmplx.Abs(sum + complex(a[0], 0)), scale
	}
	check := func(name string, a []float64, got []complex128) {
		t.Helper()
		e, scale := traceErr(a, got)
		tol := traceTol * scale
		if len(a) > qrRootsMax {
			eQR, _ := traceErr(a, qrRoots(t, a))
			tol = math.Max(tol, 4*eQR)
		}
		if e > tol || len(got) != len(a) {
			t.Errorf("%s: %d roots, Σ roots + a₁ = %.3g, above %.3g", name, len(got), e, tol)
		}
	}
	for _, c := range []complex128{-1, 0.9, complex(0.8, 0.3)} {
		for _, m := range []int{2, 6, 12, 20, 40} {
			for _, n := range []int{33, 64, 128} {
				if m*(1+btoi(imag(c) != 0)) > n {
					continue
				}
				a := polyFromRootsTest(clusterPoly(n, m, c, 1.2))
				got, err := rootsMonic(a)
				if err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("order %d, (z-%v)^%d", n, c, m), a, got)
			}
			if m > 16 {
				continue
			}
			a := polyFromRootsTest(clusterPoly(m, m, c, 0))
			got, _, clustered := aberthRoots(context.Background(), a)
			if !clustered {
				t.Errorf("(z-%v)^%d: no cluster found", c, m)
			}
			check(fmt.Sprintf("aberth (z-%v)^%d", c, m), a, got)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAberthTFToZPKConditionBoundsError converts tf filters of order 64 and 128 (the Aberth
// path) whose numerator holds (z + 1)ᵐ, the zeros of a Butterworth filter, with separated
// poles: the error must stay within condTrust times the reported condition times ε, as in
// TestTFToZPKConditionBoundsError, or within a few times the error of the companion matrix's
// eigenvalues where those exceed it too (the condition leaves out the other zeros' own
// sensitivity: 2e-11 … 3e-5 at a condition of 10). With each root stopped on its own, errors
// reached 1e-4 … 1.
func TestAberthTFToZPKConditionBoundsError(t *testing.T) {
	const condTrust = 10
	for _, n := range []int{64, 128} {
		for _, m := range []int{6, 12, 24, 40} {
			zp := &ZPK{Zeros: SortRoots(clusterPoly(n-1, m, -1, 0.7)), Poles: SortRoots(clusterPoly(n, 0, 0, 0.5)), Gain: 1}
			tf, _, err := ToTF(zp)
			if err != nil {
				t.Fatal(err)
			}
			_, rep, err := ToZPK(tf)
			if err != nil {
				t.Fatalf("order %d, (z+1)^%d: %v", n, m, err)
			}
			restore := forceQR()
			_, repQR, err := ToZPK(tf)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if tol := math.Max(condTrust*rep.Condition*eps, 4*repQR.RelError); rep.RelError > tol {
				t.Errorf("order %d, (z+1)^%d: error %.3g above %.3g (condition %.3g, QR's error %.3g)", n, m, rep.RelError, tol, rep.Condition, repQR.RelError)
			}
		}
	}
}

// forceQR makes rootsMonic take the companion matrix's eigenvalues at every degree (it takes
// Aberth's above qrRootsMax) until the function it returns is called.
func forceQR() (restore func()) {
	old := qrRootsMax
	qrRootsMax = 1 << 30
	return func() { qrRootsMax = old }
}

// qrRoots returns the roots of the monic polynomial a by the companion matrix's eigenvalues.
func qrRoots(t *testing.T, a []float64) []complex128 {
	t.Helper()
	defer forceQR()()
	r, err := rootsMonic(a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
