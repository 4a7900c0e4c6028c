package filters

import (
	"math"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// TransferFunction is the rational transfer function of the RTF paper, eq. 4:
//
//	H(z) = H0 + (b₁z⁻¹ + … + bₙz⁻ⁿ) / (1 + a₁z⁻¹ + … + aₙz⁻ⁿ),
//
// with Den = (a₁…aₙ) and Num = (b₁…bₙ).
type TransferFunction struct {
	Den, Num []float64
	H0       float64
}

// Companion is the same transfer function realised in the controllable canonical form of
// RTF paper, eq. 16 (A's first row -a, ones on the subdiagonal, B = e₁, C = b, D = h0) or, when
// Observable is set, its transpose (A ← Aᵀ, B ← bᵀ, C ← e₁ᵀ).
type Companion struct {
	Den, Num   []float64
	H0         float64
	Observable bool
}

// NewTransferFunction validates and returns a transfer function; the slices are copied.
func NewTransferFunction(a, b []float64, h0 float64) (*TransferFunction, error) {
	f := &TransferFunction{Den: clone(a), Num: clone(b), H0: h0}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// NewCompanion validates and returns a companion-form filter; the slices are copied.
func NewCompanion(a, b []float64, h0 float64, observable bool) (*Companion, error) {
	f := &Companion{Den: clone(a), Num: clone(b), H0: h0, Observable: observable}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

func validateCoefficients(a, b []float64, h0 float64) error {
	if err := checkOrder(len(a)); err != nil {
		return err
	}
	if err := checkLen("b", len(b), len(a)); err != nil {
		return err
	}
	if err := checkFinite("a", a...); err != nil {
		return err
	}
	if err := checkFinite("b", b...); err != nil {
		return err
	}
	return checkFinite("h0", h0)
}

// Form returns FormTF.
func (f *TransferFunction) Form() Form { return FormTF }

// Order returns n.
func (f *TransferFunction) Order() int { return len(f.Den) }

// Validate checks that a and b have the same length and finite values.
func (f *TransferFunction) Validate() error { return validateCoefficients(f.Den, f.Num, f.H0) }

// Impulse runs the difference equation of the rational function.
func (f *TransferFunction) Impulse(length int) []float64 {
	return coefficientImpulse(f.Den, f.Num, f.H0, length)
}

// FreqResponse evaluates numerator and denominator by Horner's rule in z⁻¹.
func (f *TransferFunction) FreqResponse(omega []float64) []complex128 {
	return coefficientResponse(f.Den, f.Num, f.H0, omega)
}

// Form returns FormCompanion.
func (f *Companion) Form() Form { return FormCompanion }

// Order returns n.
func (f *Companion) Order() int { return len(f.Den) }

// Validate checks that a and b have the same length and finite values.
func (f *Companion) Validate() error { return validateCoefficients(f.Den, f.Num, f.H0) }

// Impulse runs the companion recurrence, which is the difference equation of the rational
// function (RTF paper, §B.1).
func (f *Companion) Impulse(length int) []float64 {
	return coefficientImpulse(f.Den, f.Num, f.H0, length)
}

// FreqResponse evaluates numerator and denominator by Horner's rule in z⁻¹.
func (f *Companion) FreqResponse(omega []float64) []complex128 {
	return coefficientResponse(f.Den, f.Num, f.H0, omega)
}

// Dense returns the state-space realisation (eq. 16, or its transpose).
func (f *Companion) Dense() *Dense {
	n := len(f.Den)
	if n == 0 {
		return newDenseMat(nil, nil, nil, f.H0)
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, n)
		if i > 0 {
			rows[i][i-1] = 1
		}
	}
	for j, a := range f.Den {
		rows[0][j] = -a
	}
	e1 := make([]float64, n)
	e1[0] = 1
	b, c := e1, append([]float64(nil), f.Num...)
	if f.Observable {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				rows[i][j], rows[j][i] = rows[j][i], rows[i][j]
			}
		}
		b, c = c, b
	}
	d, err := NewDense(rows, b, c, f.H0)
	if err != nil {
		panic("filters: companion realisation of a valid filter: " + err.Error())
	}
	return d
}

// coefficientImpulse: g[t] = b_t - Σ_k a_k g[t-k] with g[0] = 0 and b_t = 0 for t > n.
func coefficientImpulse(a, b []float64, h0 float64, length int) []float64 {
	h := make([]float64, length)
	if length == 0 {
		return h
	}
	n := len(a)
	// The outputs that have decayed below underflow.Below of the numerator's scale are set
	// to zero as they come (a comparison against n multiply-adds), so that the recursion
	// does not run on subnormal numbers (package underflow).
	scale := 0.0
	for _, v := range b {
		scale = max(scale, math.Abs(v))
	}
	for t := 1; t < length; t++ {
		var s float64
		if t <= n {
			s = b[t-1]
		}
		for k := 1; k <= n && k < t; k++ {
			s -= a[k-1] * h[t-k]
		}
		h[t] = underflow.Real(s, scale)
	}
	h[0] = h0
	return h
}

func coefficientResponse(a, b []float64, h0 float64, omega []float64) []complex128 {
	out := make([]complex128, len(omega))
	for i, w := range omega {
		zi := unitCircle(-w)
		out[i] = complex(h0, 0) + hornerInv(b, zi)*zi/hornerInv1(a, zi)
	}
	return out
}

// hornerInv1 evaluates 1 + a₁w + … + aₙwⁿ.
func hornerInv1(a []float64, w complex128) complex128 {
	var s complex128
	for k := len(a) - 1; k >= 0; k-- {
		s = s*w + complex(a[k], 0)
	}
	return 1 + s*w
}

// hornerInv evaluates b₁ + b₂w + … + bₙwⁿ⁻¹.
func hornerInv(b []float64, w complex128) complex128 {
	var s complex128
	for k := len(b) - 1; k >= 0; k-- {
		s = s*w + complex(b[k], 0)
	}
	return s
}
