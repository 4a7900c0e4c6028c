package filters

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// tinyResponse is the peak below which a response is not compared as computed: its samples'
// differences lie among float64's subnormal numbers, which hold fewer digits than
// MaxRelError asks, or underflow to 0 (B = C = 1e-200 makes every sample 0).
const tinyResponse = 0x1p-960

// responseExp returns e with the scale of f's response about 2^e, from its coefficients (the
// response itself may have underflowed): the larger of the direct term's and of the dynamics'
// gain ‖B‖·‖C‖, the residues, the numerator or the zpk gain. ok is false for a filter whose
// coefficients are all zero.
func responseExp(f Filter) (e int, ok bool) {
	e = math.MinInt
	add := func(v float64) {
		if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			e = max(e, math.Ilogb(v))
		}
	}
	bc := func(b, c []float64) {
		nb, nc := floats.Norm(b, math.Inf(1)), floats.Norm(c, math.Inf(1))
		if nb != 0 && nc != 0 {
			e = max(e, math.Ilogb(nb)+math.Ilogb(nc))
		}
	}
	switch s := f.(type) {
	case *Dense:
		bc(s.B, s.C)
		add(s.D)
	case *Rotation:
		bc(s.B, s.C)
		add(s.D)
	case *Diagonal:
		for _, r := range s.Residues {
			add(cabs1(r))
		}
		add(s.H0)
	case *TransferFunction:
		add(floats.Norm(s.Num, math.Inf(1)))
		add(s.H0)
	case *Companion:
		add(floats.Norm(s.Num, math.Inf(1)))
		add(s.H0)
	case *ZPK:
		add(s.Gain)
		add(s.H0)
	}
	return e, e != math.MinInt
}

// scaledBy returns f with its response multiplied by 2^e, exactly where no coefficient
// leaves float64's range: a state-space form's B and C each brought near 1 (their product
// carries 2^e), D, the residues, the numerator or the gain and h0 scaled by 2^e.
func scaledBy(f Filter, e int) Filter {
	ld := func(v []float64, k int) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = math.Ldexp(x, k)
		}
		return out
	}
	split := func(b []float64) int {
		if nb := floats.Norm(b, math.Inf(1)); nb != 0 {
			return -math.Ilogb(nb)
		}
		return 0
	}
	switch s := f.(type) {
	case *Dense:
		eb := split(s.B)
		var a *mat.Dense
		if s.A != nil {
			a = mat.DenseCopyOf(s.A)
		}
		return &Dense{A: a, B: ld(s.B, eb), C: ld(s.C, e-eb), D: math.Ldexp(s.D, e)}
	case *Rotation:
		eb := split(s.B)
		g := *s
		g.B, g.C, g.D = ld(s.B, eb), ld(s.C, e-eb), math.Ldexp(s.D, e)
		return &g
	case *Diagonal:
		r := make([]complex128, len(s.Residues))
		for i, v := range s.Residues {
			r[i] = complex(math.Ldexp(real(v), e), math.Ldexp(imag(v), e))
		}
		return &Diagonal{Poles: s.Poles, Residues: r, H0: math.Ldexp(s.H0, e)}
	case *TransferFunction:
		return &TransferFunction{Den: s.Den, Num: ld(s.Num, e), H0: math.Ldexp(s.H0, e)}
	case *Companion:
		return &Companion{Den: s.Den, Num: ld(s.Num, e), H0: math.Ldexp(s.H0, e), Observable: s.Observable}
	case *ZPK:
		return &ZPK{Zeros: s.Zeros, Poles: s.Poles, Gain: math.Ldexp(s.Gain, e), H0: math.Ldexp(s.H0, e)}
	}
	panic("filters: scaledBy of an unknown form")
}

// rescaled returns want and got with their responses multiplied by one power of two, 2^-e
// for the scale 2^e of want's coefficients (responseExp), so that responses whose peak lies
// below tinyResponse can be compared; ok is false for a want whose coefficients are all zero.
func rescaled(want, got Filter) (ws, gs Filter, e int, ok bool) {
	e, ok = responseExp(want)
	if !ok {
		return want, got, 0, false
	}
	return scaledBy(want, -e), scaledBy(got, -e), e, true
}

// tinyPeak reports whether the responses' largest |h| lies below tinyResponse.
func tinyPeak(hs ...[]float64) bool {
	m := 0.0
	for _, h := range hs {
		m = max(m, floats.Norm(h, math.Inf(1)))
	}
	return m < tinyResponse
}

// tinyWarning is the warning of a comparison made on rescaled responses.
func tinyWarning(e int) string {
	return fmt.Sprintf("the responses lie below float64's normal range (coefficients of about 2^%d): the error is measured on both scaled by 2^%d; scale B and C (or the numerator) up", e, -e)
}
