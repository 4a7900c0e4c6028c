package filters

import (
	"math"
	"math/big"
	"math/cmplx"
	"testing"
)

// bigComplex is a complex number in 256-bit floating point, for exact-enough references.
type bigComplex struct{ re, im *big.Float }

func newBig(z complex128) bigComplex {
	return bigComplex{new(big.Float).SetPrec(256).SetFloat64(real(z)), new(big.Float).SetPrec(256).SetFloat64(imag(z))}
}

func (x bigComplex) mul(y bigComplex) bigComplex {
	rr := new(big.Float).SetPrec(256).Mul(x.re, y.re)
	ii := new(big.Float).SetPrec(256).Mul(x.im, y.im)
	ri := new(big.Float).SetPrec(256).Mul(x.re, y.im)
	ir := new(big.Float).SetPrec(256).Mul(x.im, y.re)
	return bigComplex{rr.Sub(rr, ii), ri.Add(ri, ir)}
}

func (x bigComplex) add(y bigComplex) bigComplex {
	return bigComplex{new(big.Float).SetPrec(256).Add(x.re, y.re), new(big.Float).SetPrec(256).Add(x.im, y.im)}
}

// polyMul multiplies polynomials in z⁻¹ with coefficients in 256-bit arithmetic.
func polyMul(p, q []bigComplex) []bigComplex {
	out := make([]bigComplex, len(p)+len(q)-1)
	for i := range out {
		out[i] = newBig(0)
	}
	for i, u := range p {
		for j, v := range q {
			out[i+j] = out[i+j].add(u.mul(v))
		}
	}
	return out
}

// TestToTFClusteredPoles converts a modal filter with sixteen poles clustered near z = 1 and
// compares the coefficients with the product Π(1 - pᵢz⁻¹) and Σ rᵢ·Π_{j≠i}(1 - pⱼz⁻¹) in
// 256-bit arithmetic. The coefficients are about 1e4 in size; each must be right to about
// eps·max|a(e^{jω})| ≈ 1e-11, which the unit-circle interpolation reaches as long as it does
// not divide by its own computed leading coefficient (7.6e-8 when it did).
func TestToTFClusteredPoles(t *testing.T) {
	var poles, res []complex128
	for k := 1; k <= 8; k++ {
		p := cmplx.Rect(0.99, 0.001*math.Pi*float64(k))
		r := complex(1/float64(k), 0.1*float64(k))
		poles = append(poles, p, cmplx.Conj(p))
		res = append(res, r, cmplx.Conj(r))
	}
	d, err := NewDiagonal(poles, res, 0)
	if err != nil {
		t.Fatal(err)
	}
	tf, _, err := ToTF(d)
	if err != nil {
		t.Fatal(err)
	}
	one := []bigComplex{newBig(1)}
	den := one
	for _, p := range poles {
		den = polyMul(den, []bigComplex{newBig(1), newBig(-p)})
	}
	num := []bigComplex{}
	for i := range poles {
		term := []bigComplex{newBig(res[i])}
		for j, p := range poles {
			if j != i {
				term = polyMul(term, []bigComplex{newBig(1), newBig(-p)})
			}
		}
		// b(z⁻¹) = z⁻¹·Σ rᵢ·Π_{j≠i}(1 - pⱼz⁻¹): coefficient k of the sum is b_{k+1}.
		for k, c := range term {
			if k >= len(num) {
				num = append(num, newBig(0))
			}
			num[k] = num[k].add(c)
		}
	}
	check := func(what string, got []float64, want []bigComplex, tol float64) {
		t.Helper()
		worst := 0.0
		for k, g := range got {
			w, _ := want[k].re.Float64()
			worst = math.Max(worst, math.Abs(g-w))
		}
		if worst > tol {
			t.Errorf("%s: largest coefficient error %.3g, want ≤ %.3g", what, worst, tol)
		}
	}
	check("denominator", tf.Den, den[1:], 1e-10)
	check("numerator", tf.Num, num, 1e-10)
	check("PolyFromRoots", PolyFromRoots(poles), den[1:], 1e-10)
	if got := PolyFromRoots(nil); len(got) != 0 {
		t.Errorf("PolyFromRoots(nil) = %v", got)
	}
}
