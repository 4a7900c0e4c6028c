package filters

import (
	"math"
	"math/cmplx"
	"testing"
)

// clusteredZPK is a low-pass filter of order 2k whose pole pairs 0.999·e^{±i·0.001·j}
// (j = 1 … k) cluster near z = 1, with every zero at z = −1 and unit gain at ω = 0: the
// shape of a Butterworth filter of high order at a low cut-off, whose polynomial coefficients
// cannot hold its poles.
func clusteredZPK(k int) *ZPK {
	var poles, zeros []complex128
	dc := complex(1, 0)
	for j := 1; j <= k; j++ {
		p := cmplx.Rect(0.999, 0.001*float64(j))
		poles = append(poles, p, cmplx.Conj(p))
		zeros = append(zeros, -1, -1)
		dc *= (1 - p) * (1 - cmplx.Conj(p)) / 4
	}
	return &ZPK{Zeros: zeros, Poles: poles, Gain: real(dc)}
}

// TestZPKToDenseCascade: a zpk filter the modal form refuses (clustered or repeated poles) is
// realised as a cascade of real sections, whose response is the zpk form's own. It went
// through the companion form of its transfer function: clusteredZPK(6) came out unstable
// (spectral radius 1.1, relative error 1e161), so analysis, which realises such a filter
// densely for its Gramians, printed Hankel singular values of 4e-198 for a Butterworth filter
// of order 64 whose largest is 1.
func TestZPKToDenseCascade(t *testing.T) {
	// cascadeTol: the sections hold their poles and zeros exactly, and each output row comes
	// from a few products (clusteredZPK(20)'s realisation is within 2.4e-14 of the zpk form in
	// exact arithmetic, mpmath); the dense form's own recurrence, 40 clustered states over 4096
	// steps, rounds to 3.6e-12.
	const cascadeTol = 1e-10
	pair := func(r, th float64) []complex128 { p := cmplx.Rect(r, th); return []complex128{p, cmplx.Conj(p)} }
	cat := func(vs ...[]complex128) []complex128 {
		var out []complex128
		for _, v := range vs {
			out = append(out, v...)
		}
		return out
	}
	cases := []struct {
		name string
		f    *ZPK
	}{
		{"clustered order 12", clusteredZPK(6)},
		{"clustered order 40", clusteredZPK(20)},
		// A pole pair twice and a real pole three times: no modal form.
		{"repeated", &ZPK{Zeros: cat(pair(0.5, 2), []complex128{0.3, -0.7}), Poles: cat(pair(0.9, 0.4), pair(0.9, 0.4), []complex128{0.8, 0.8, 0.8}), Gain: -2.5, H0: 0.25}},
		// Two complex zero pairs and one pole pair: two real poles share a section.
		{"zero pairs beyond pole pairs", &ZPK{Zeros: cat(pair(1.2, 1), pair(0.4, 2.5)), Poles: cat(pair(0.95, 0.2), []complex128{0.7, 0.7, -0.2}), Gain: 0.5}},
		{"moving average", movingAverageZPK(9)},
		{"no zeros, odd order", &ZPK{Poles: cat(pair(0.99, 0.01), pair(0.99, 0.01), []complex128{0.5}), Gain: 3}},
	}
	for _, c := range cases {
		if _, _, err := ToDiagonal(c.f); err == nil {
			t.Fatalf("%s: has a modal form; the case should need the cascade", c.name)
		}
		d, rep, err := ToDense(c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Order() != c.f.Order() {
			t.Errorf("%s: order %d, want %d", c.name, d.Order(), c.f.Order())
		}
		if rep.Inaccurate() || rep.RelError > cascadeTol {
			t.Errorf("%s: report %+v", c.name, rep)
		}
		want := c.f.Impulse(rep.Length)
		if e := RelDiff(want, d.Impulse(rep.Length)); e > cascadeTol {
			t.Errorf("%s: impulse responses differ by %.3g", c.name, e)
		}
		rho, err := SpectralRadius(d)
		if want, _ := SpectralRadius(c.f); err != nil || math.Abs(rho-want) > 1e-6 {
			t.Errorf("%s: spectral radius %v (%v), want %v", c.name, rho, err, want)
		}
	}
}

// TestDiagonalTinyComplexPair: a conjugate pair whose imaginary parts are below the
// real-pole tolerance only in absolute terms (1e-13 ± 1e-13i) is a pair when its residues
// are conjugate: it was refused as "pole 0 … is real but its residue … is not".
func TestDiagonalTinyComplexPair(t *testing.T) {
	p := complex(1e-13, 1e-13)
	d, err := NewDiagonal([]complex128{p, cmplx.Conj(p)}, []complex128{1 + 2i, 1 - 2i}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// h[t] = 2·Re((1 + 2i)·p^(t−1)): 2, 2·Re(−1e-13 + 3e-13i), 2·Re((1 + 2i)·2e-26i).
	want := []float64{0, 2, -2e-13, -8e-26}
	if got := d.Impulse(4); RelDiff(want, got) > 1e-15 {
		t.Errorf("impulse %v, want %v", got, want)
	}
	// A real pole with a complex residue is still refused.
	if _, err := NewDiagonal([]complex128{0.5, 0.5}, []complex128{1 + 2i, 1 - 2i}, 0); err == nil {
		t.Error("real poles with complex residues accepted")
	}
}
