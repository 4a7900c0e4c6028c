package filters

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/mat"
)

// resolvent evaluates g(z) = C(zI - A)⁻¹B and det(zI - A) at any complex z.
// A is reduced once to upper Hessenberg form H = QᵀAQ by orthogonal similarity (backward
// stable), after which each point costs one O(n²) Gaussian elimination of zI - H with partial
// pivoting between adjacent rows. The determinant is the product of the pivots; it is kept as
// a mantissa and a power of two so that large orders cannot overflow.
type resolvent struct {
	n    int
	h    []float64 // n×n upper Hessenberg, row-major
	b, c []float64 // QᵀB and CQ
	work []complex128
	rhs  []complex128
}

func newResolvent(f *Dense) *resolvent {
	n := f.Order()
	r := &resolvent{n: n, work: make([]complex128, n*n), rhs: make([]complex128, n)}
	if n == 0 {
		return r
	}
	h, q := Hessenberg(f.A)
	raw := h.RawMatrix()
	r.h = make([]float64, n*n)
	for i := 0; i < n; i++ {
		copy(r.h[i*n:(i+1)*n], raw.Data[i*raw.Stride:i*raw.Stride+n])
	}
	r.b = make([]float64, n)
	r.c = make([]float64, n)
	bv := mat.NewVecDense(n, r.b)
	bv.MulVec(q.T(), mat.NewVecDense(n, append([]float64(nil), f.B...)))
	cv := mat.NewVecDense(n, r.c)
	cv.MulVec(q.T(), mat.NewVecDense(n, append([]float64(nil), f.C...)))
	return r
}

// scaledComplex is m·2^e.
type scaledComplex struct {
	m complex128
	e int
}

func (s *scaledComplex) mul(p complex128) {
	s.m *= p
	a := cmplx.Abs(s.m)
	if a == 0 || (a > 0x1p-300 && a < 0x1p300) {
		return
	}
	_, e := math.Frexp(a)
	s.m = complex(math.Ldexp(real(s.m), -e), math.Ldexp(imag(s.m), -e))
	s.e += e
}

func (s scaledComplex) value() complex128 {
	return complex(math.Ldexp(real(s.m), s.e), math.Ldexp(imag(s.m), s.e))
}

// eval returns g(z) and det(zI - A). For z an eigenvalue the pivot is zero and g is Inf.
func (r *resolvent) eval(z complex128) (complex128, scaledComplex) {
	n := r.n
	det := scaledComplex{m: 1}
	if n == 0 {
		return 0, det
	}
	m := r.work
	for i := 0; i < n; i++ {
		row := m[i*n : (i+1)*n]
		hrow := r.h[i*n : (i+1)*n]
		lo := max(i-1, 0)
		for j := 0; j < lo; j++ {
			row[j] = 0
		}
		for j := lo; j < n; j++ {
			row[j] = complex(-hrow[j], 0)
		}
		row[i] += z
		r.rhs[i] = complex(r.b[i], 0)
	}
	for k := 0; k < n-1; k++ {
		rk := m[k*n : (k+1)*n]
		rn := m[(k+1)*n : (k+2)*n]
		if cabs1(rn[k]) > cabs1(rk[k]) {
			for j := k; j < n; j++ {
				rk[j], rn[j] = rn[j], rk[j]
			}
			r.rhs[k], r.rhs[k+1] = r.rhs[k+1], r.rhs[k]
			det.m = -det.m
		}
		p := rk[k]
		det.mul(p)
		if p == 0 {
			continue
		}
		l := rn[k] / p
		rn[k] = 0
		for j := k + 1; j < n; j++ {
			rn[j] -= l * rk[j]
		}
		r.rhs[k+1] -= l * r.rhs[k]
	}
	det.mul(m[n*n-1])
	// Back substitution.
	var g complex128
	for i := n - 1; i >= 0; i-- {
		row := m[i*n : (i+1)*n]
		s := r.rhs[i]
		for j := i + 1; j < n; j++ {
			s -= row[j] * r.rhs[j]
		}
		r.rhs[i] = s / row[i]
		g += complex(r.c[i], 0) * r.rhs[i]
	}
	return g, det
}

func cabs1(z complex128) float64 { return math.Abs(real(z)) + math.Abs(imag(z)) }
