package filters

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// markovTol decides when a Markov parameter C·A^(k-1)·B counts as zero: relative to
// ‖C·A^(k-1)‖·‖B‖, rounding leaves about n·eps; anything below 1e-11 is structure, not data.
const markovTol = 1e-11

// zeroDynamics returns the zeros of H(z) = D + C(zI - A)⁻¹B without forming a polynomial.
//
// With relative degree r (m₀ = D, mₖ = C·A^(k-1)·B, r the first k with mₖ ≠ 0), the zeros are
// the eigenvalues of the zero dynamics: Ā = A - B·(C·A^r)/m_r restricted to the subspace
// ker[C; CA; …; CA^(r-1)], which Ā leaves invariant. For r = 0 this is eig(A - BC/D). The
// gain of the ZPK form is m_r. When D is negligible but not zero it is returned as h0 (the
// ZPK form keeps it exactly) and the zeros are those of the strictly proper part.
func zeroDynamics(f *Dense) (zeros []complex128, gain, h0 float64, err error) {
	n := f.Order()
	if n == 0 {
		return nil, f.D, 0, nil
	}
	bn := floats.Norm(f.B, 2)
	row := append([]float64(nil), f.C...) // C·A^k
	r := -1
	if math.Abs(f.D) > markovTol*floats.Norm(row, 2)*bn && f.D != 0 {
		r = 0
		gain = f.D
	} else {
		h0 = f.D
	}
	var rows [][]float64
	for k := 1; r < 0 && k <= n; k++ {
		m := floats.Dot(row, f.B)
		if m != 0 && math.Abs(m) > markovTol*floats.Norm(row, 2)*bn {
			r, gain = k, m
			rows = append(rows, row)
			break
		}
		rows = append(rows, row)
		next := make([]float64, n)
		mat.NewVecDense(n, next).MulVec(f.A.T(), mat.NewVecDense(n, row))
		row = next
	}
	if r < 0 {
		// Every Markov parameter vanishes: H is the constant D.
		return nil, 0, f.D, nil
	}
	// row is now C·A^(r-1) (or C for r = 0) and rows spans [C; …; C·A^(r-1)]; the closed
	// loop uses C·A^r.
	car := make([]float64, n)
	if r == 0 {
		copy(car, f.C)
	} else {
		mat.NewVecDense(n, car).MulVec(f.A.T(), mat.NewVecDense(n, row))
	}
	abar := mat.DenseCopyOf(f.A)
	for i := 0; i < n; i++ {
		floats.AddScaled(abar.RawRowView(i), -f.B[i]/gain, car)
	}
	if len(rows) == n {
		return nil, gain, h0, nil
	}
	var proj *mat.Dense
	if len(rows) == 0 {
		proj = abar
	} else {
		// Orthonormal basis U of ker[C; CA; …]: the last n-r columns of the full Q of its transpose.
		ot := mat.NewDense(n, len(rows), nil)
		for j, rw := range rows {
			ot.SetCol(j, rw)
		}
		var qr mat.QR
		qr.Factorize(ot)
		var q mat.Dense
		qr.QTo(&q)
		u := q.Slice(0, n, len(rows), n)
		var tmp mat.Dense
		tmp.Mul(abar, u)
		proj = &mat.Dense{}
		proj.Mul(u.T(), &tmp)
	}
	zeros, err = eigenvalues(proj)
	return zeros, gain, h0, err
}

// polyZeros returns the zeros, numerator and offset of H(z) = h0 + b(z)/a(z) for the monic
// denominator a(z) = zⁿ + a₁zⁿ⁻¹ + … + aₙ and b(z) = b₁zⁿ⁻¹ + … + bₙ: the roots of the
// numerator h0·a(z) + b(z), with the tests zeroDynamics applies to the companion
// realisation (h0 is the gain unless negligible beside b, and leading bₖ that are are
// skipped), at O(n²) a sweep rather than an O(n³) eigenvalue problem. num is the numerator
// whose roots they are, leading coefficient (the gain) first; nil without zeros.
func polyZeros(a, b []float64, h0 float64) (zeros []complex128, num []float64, off float64, err error) {
	bn := floats.Norm(b, 2)
	if h0 != 0 && math.Abs(h0) > markovTol*bn {
		num = make([]float64, len(a)+1)
		num[0] = h0
		for i := range a {
			num[i+1] = h0*a[i] + b[i]
		}
	} else {
		off = h0
		k := 0
		for k < len(b) && (b[k] == 0 || math.Abs(b[k]) <= markovTol*bn) {
			k++
		}
		if k == len(b) {
			return nil, nil, h0, nil
		}
		num = b[k:]
	}
	gain := num[0]
	monic := make([]float64, len(num)-1)
	for i := range monic {
		monic[i] = num[i+1] / gain
	}
	zeros, err = rootsMonic(monic)
	return zeros, num, off, err
}
