package filters

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// lowpassTF returns the tf form of lowpassZPK(n, wc, rp).
func lowpassTF(t *testing.T, n int, wc, rp float64) *TransferFunction {
	t.Helper()
	tf, _, err := ToTF(lowpassZPK(n, wc, rp))
	if err != nil {
		t.Fatal(err)
	}
	return tf
}

// lowpassZPK returns a digital Butterworth (or, with ripple rp dB, Chebyshev type I) lowpass
// filter of order n and cut-off wc, with gain 1: the analog prototype's poles (Parks &
// Burrus, "Digital Filter Design", §7.3), prewarped and mapped by the bilinear transform, all
// zeros at z = −1. Its poles cluster near z = 1 as wc shrinks.
func lowpassZPK(n int, wc, rp float64) *ZPK {
	wa := 2 * math.Tan(wc/2)
	var poles, zeros []complex128
	for k := 0; k < n; k++ {
		theta := math.Pi * float64(2*k+1) / float64(2*n)
		s := complex(-math.Sin(theta), math.Cos(theta))
		if rp > 0 {
			mu := math.Asinh(1/math.Sqrt(math.Pow(10, rp/10)-1)) / float64(n)
			s = complex(-math.Sinh(mu)*math.Sin(theta), math.Cosh(mu)*math.Cos(theta))
		}
		s *= complex(wa, 0)
		poles = append(poles, (2+s)/(2-s))
		zeros = append(zeros, -1)
	}
	// Exactly conjugate-closed: the members of a pair as mirror images.
	for k := 0; k < n/2; k++ {
		poles[n-1-k] = cmplx.Conj(poles[k])
	}
	if n%2 == 1 {
		poles[n/2] = complex(real(poles[n/2]), 0)
	}
	return &ZPK{Zeros: zeros, Poles: SortRoots(poles), Gain: 1}
}

// TestTFToZPKConditionBoundsError converts Butterworth and Chebyshev tf filters of orders 6 to
// 12, whose poles cluster near z = 1 as the cut-off falls, to zpk: the reported condition
// times ε must bound the measured error within condTrust, and the condition must warn
// wherever the error is above the documented accuracy. Before the condition was estimated
// it was 1 for all of them ("none (poles and zeros as roots of the polynomials)").
func TestTFToZPKConditionBoundsError(t *testing.T) {
	// condTrust: a first-order bound over ε meets the measured error within a factor of a
	// few (the root finder's backward error is a few ε); the nonlinear cases, where ε·κ is
	// near 1, within less than 5.
	const condTrust = 10
	for _, n := range []int{6, 8, 10, 12} {
		for _, wc := range []float64{math.Pi / 4, math.Pi / 16, math.Pi / 64} {
			for _, rp := range []float64{0, 1} {
				name := fmt.Sprintf("order %d wc=%.3g ripple %g dB", n, wc, rp)
				_, rep, err := ToZPK(lowpassTF(t, n, wc, rp))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if rep.Condition*eps < rep.RelError/condTrust {
					t.Errorf("%s: condition %.3g × ε = %.3g is below the measured error %.3g / %d", name, rep.Condition, rep.Condition*eps, rep.RelError, condTrust)
				}
				if rep.RelError > MaxRelError && rep.Condition <= WarnCondition {
					t.Errorf("%s: error %.3g above the documented accuracy, but condition %.3g gives no warning", name, rep.RelError, rep.Condition)
				}
			}
		}
	}
}

// TestTFToZPKConditionSeparated converts tf filters whose poles and zeros are random and
// well separated (at least 0.2 apart, moduli 0.2 to 0.8): the condition must be small and
// the error within it.
func TestTFToZPKConditionSeparated(t *testing.T) {
	// separatedCond: ‖a‖₁/min|a| for n roots of modulus ≤ 0.8 is at most 1.8ⁿ/0.2ⁿ·… ; the
	// samples here stay below 1e5, far from WarnCondition.
	const separatedCond = 1e5
	rng := rand.New(rand.NewPCG(46, 1))
	randomRoots := func(n int) []complex128 {
		var r []complex128
		for len(r) < n {
			z := cmplx.Rect(0.2+0.6*rng.Float64(), math.Pi*rng.Float64())
			if len(r)+1 == n {
				z = complex(real(z), 0)
			}
			ok := imag(z) == 0 || imag(z) >= 0.1 // z and its conjugate 0.2 apart
			for _, q := range r {
				ok = ok && cmplx.Abs(z-q) >= 0.2 && cmplx.Abs(cmplx.Conj(z)-q) >= 0.2
			}
			if !ok {
				continue
			}
			r = append(r, z)
			if imag(z) != 0 {
				r = append(r, cmplx.Conj(z))
			}
		}
		return SortRoots(r)
	}
	for trial := 0; trial < 40; trial++ {
		n := 2 * (1 + rng.IntN(6)) // even: the zeros' count n-1 is odd, one of them real
		zp := &ZPK{Zeros: randomRoots(n - 1), Poles: randomRoots(n), Gain: 1 + rng.Float64()}
		tf, _, err := ToTF(zp)
		if err != nil {
			t.Fatal(err)
		}
		_, rep, err := ToZPK(tf)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if rep.Condition > separatedCond || rep.RelError > 10*rep.Condition*eps {
			t.Errorf("trial %d (order %d): condition %.3g, error %.3g", trial, n, rep.Condition, rep.RelError)
		}
	}
}

// TestTFToZPKConditionFIR converts moving averages, whose denominator is zⁿ: its coefficients
// are exactly zero, so are its roots, and the condition must say so (about √(n+1)), and
// bound the error with a small factor. The zpk form's impulse response, a cascade with every
// zero on the unit circle, is accurate at every order since its sections are in Leja order
// (it was refused at 3.7e14 at n = 199).
func TestTFToZPKConditionFIR(t *testing.T) {
	for _, n := range []int{1, 4, 8, 16, 199, 999} {
		b := make([]float64, n)
		for i := range b {
			b[i] = 1 / float64(n+1)
		}
		tf := &TransferFunction{Den: make([]float64, n), Num: b, H0: 1 / float64(n+1)}
		z, rep, err := ToZPK(tf)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range z.Poles {
			if p != 0 {
				t.Fatalf("n=%d: pole %v, want exactly 0", n, p)
			}
		}
		if want := 2 + math.Sqrt(float64(n+1)); rep.Condition > want || rep.RelError > max(64, 16*rep.Condition)*eps {
			t.Errorf("n=%d: condition %.3g (want ≤ %.3g), error %.3g", n, rep.Condition, want, rep.RelError)
		}
	}
}
