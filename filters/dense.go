package filters

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// Dense is a state-space filter (A, B, C, D) with a full n×n matrix A.
// A is nil for an order-0 filter (a pure gain D).
type Dense struct {
	A    *mat.Dense
	B, C []float64
	D    float64
}

// NewDense returns the dense filter with A given by rows; it validates the dimensions and values.
func NewDense(a [][]float64, b, c []float64, d float64) (*Dense, error) {
	am, err := squareFromRows("A", a)
	if err != nil {
		return nil, err
	}
	f := &Dense{A: am, B: clone(b), C: clone(c), D: d}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// squareFromRows copies the matrix named name given by rows (nil for none), which must be
// square and of an order within MaxOrder.
func squareFromRows(name string, rows [][]float64) (*mat.Dense, error) {
	n := len(rows)
	if err := checkOrder(n); err != nil {
		return nil, err
	}
	for i, row := range rows {
		if len(row) != n {
			return nil, invalidf("%s row %d has %d entries, want %d (%s must be square)", name, i, len(row), n, name)
		}
	}
	if n == 0 {
		return nil, nil
	}
	m := mat.NewDense(n, n, nil)
	for i, row := range rows {
		m.SetRow(i, row)
	}
	return m, nil
}

// newDenseMat wraps already-validated parts without copying.
func newDenseMat(a *mat.Dense, b, c []float64, d float64) *Dense {
	if a != nil {
		if r, _ := a.Dims(); r == 0 {
			a = nil
		}
	}
	return &Dense{A: a, B: b, C: c, D: d}
}

// Form returns FormDense.
func (f *Dense) Form() Form { return FormDense }

// Order returns n.
func (f *Dense) Order() int {
	if f.A == nil {
		return 0
	}
	r, _ := f.A.Dims()
	return r
}

// Validate checks that A is square, B and C have length n and every value is finite.
func (f *Dense) Validate() error {
	n, err := squareOrder("A", f.A)
	if err != nil {
		return err
	}
	if err := checkOrder(n); err != nil {
		return err
	}
	if err := checkFiniteRows("A", f.A, n); err != nil {
		return err
	}
	return checkIO(n, f.B, f.C, f.D)
}

// squareOrder returns the order of the matrix named name, which must be square (0 for nil).
func squareOrder(name string, m *mat.Dense) (int, error) {
	if m == nil {
		return 0, nil
	}
	r, c := m.Dims()
	if r != c {
		return 0, invalidf("%s is %d×%d, want a square matrix", name, r, c)
	}
	return r, nil
}

// checkFiniteRows checks the n rows of the matrix named name for NaN and Inf.
func checkFiniteRows(name string, m *mat.Dense, n int) error {
	for i := 0; i < n; i++ {
		if err := checkFinite(name+" row", m.RawRowView(i)...); err != nil {
			return err
		}
	}
	return nil
}

// Rows returns A as a slice of rows (empty for order 0).
func (f *Dense) Rows() [][]float64 {
	n := f.Order()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = append([]float64(nil), f.A.RawRowView(i)...)
	}
	return rows
}

// Impulse runs the state recurrence x[t+1] = A x[t] from x[1] = B.
func (f *Dense) Impulse(length int) []float64 {
	h := make([]float64, length)
	if length == 0 {
		return h
	}
	h[0] = f.D
	n := f.Order()
	if n == 0 {
		return h
	}
	x := append([]float64(nil), f.B...)
	next := make([]float64, n)
	scale := floats.Norm(f.B, math.Inf(1))
	for t := 1; t < length; t++ {
		h[t] = floats.Dot(f.C, x)
		for i := 0; i < n; i++ {
			next[i] = floats.Dot(f.A.RawRowView(i), x)
		}
		x, next = next, x
		if t%underflow.Every == 0 { // the state's decayed entries (package underflow)
			for i, v := range x {
				x[i] = underflow.Real(v, scale)
			}
		}
	}
	return h
}

// FreqResponse evaluates D + C(zI - A)⁻¹B on the unit circle through a Hessenberg reduction,
// O(n³) once and O(n²) per frequency.
func (f *Dense) FreqResponse(omega []float64) []complex128 { return f.PrepareFreqResponse()(omega) }

// PrepareFreqResponse is FreqResponse with A's Hessenberg reduction done once, here
// (FreqPreparer).
func (f *Dense) PrepareFreqResponse() func(omega []float64) []complex128 {
	d := f.D
	if f.Order() == 0 {
		return func(omega []float64) []complex128 {
			out := make([]complex128, len(omega))
			for i := range out {
				out[i] = complex(d, 0)
			}
			return out
		}
	}
	r := newResolvent(f)
	return func(omega []float64) []complex128 {
		out := make([]complex128, len(omega))
		for i, w := range omega {
			g, _ := r.eval(unitCircle(w))
			out[i] = complex(d, 0) + g
		}
		return out
	}
}
