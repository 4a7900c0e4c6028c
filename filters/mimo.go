package filters

import (
	"math"
	"math/cmplx"
)

// MIMO is a layer of complex modes with several inputs and outputs and a real output, the
// form in which LRU and S5 layers compute (their state updated before their output):
//
//	x_t = diag(p)·x_{t−1} + B·u_t,   y_t = Re(C·x_t) + D·u_t,
//
// so that the response from input i to output o is h_oi[0] = Re(C·B)_oi + D_oi and
// h_oi[t] = Re Σₖ C_ok·pₖᵗ·B_ki. One member of each conjugate pair is stored: the real part
// adds the other (a real pole with real B row and C column is a single real state). A layer
// that scales its output (S5's 2·Re under conj_sym) holds the factor in C.
type MIMO struct {
	Poles   []complex128 // the modes, len(Poles) = n
	B       []complex128 // n × Inputs, row-major
	C       []complex128 // Outputs × n, row-major
	D       []float64    // Outputs × Inputs, row-major
	Inputs  int
	Outputs int
}

// NewMIMO checks the shapes and values of a MIMO layer and returns it; the slices are kept,
// not copied.
func NewMIMO(poles, b, c []complex128, d []float64, inputs, outputs int) (*MIMO, error) {
	m := &MIMO{Poles: poles, B: b, C: c, D: d, Inputs: inputs, Outputs: outputs}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Validate checks that the matrices have the shapes the mode count and the inputs and outputs
// give, and that every value is finite.
func (m *MIMO) Validate() error {
	n := len(m.Poles)
	if m.Inputs < 1 || m.Outputs < 1 {
		return invalidf("a MIMO layer of %d inputs and %d outputs: want at least one of each", m.Inputs, m.Outputs)
	}
	if err := checkOrder(n); err != nil {
		return err
	}
	if len(m.B) != n*m.Inputs || len(m.C) != m.Outputs*n || len(m.D) != m.Outputs*m.Inputs {
		return invalidf("a MIMO layer of %d modes, %d inputs and %d outputs has B of %d entries (want %d), C of %d (want %d), D of %d (want %d)",
			n, m.Inputs, m.Outputs, len(m.B), n*m.Inputs, len(m.C), m.Outputs*n, len(m.D), m.Outputs*m.Inputs)
	}
	for k, p := range m.Poles {
		if cmplx.IsNaN(p) || cmplx.IsInf(p) {
			return invalidf("mode %d: pole %v is not finite", k, p)
		}
	}
	for i, v := range m.B {
		if cmplx.IsNaN(v) || cmplx.IsInf(v) {
			return invalidf("B[%d][%d] = %v is not finite", i/m.Inputs, i%m.Inputs, v)
		}
	}
	for i, v := range m.C {
		if cmplx.IsNaN(v) || cmplx.IsInf(v) {
			return invalidf("C[%d][%d] = %v is not finite", i/n, i%n, v)
		}
	}
	for i, v := range m.D {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalidf("D[%d][%d] = %v is not finite", i/m.Inputs, i%m.Inputs, v)
		}
	}
	return nil
}

// Channel is the single-input single-output filter from input in to output out, in
// ssmlab's control convention (h[0] is the direct term): poles pₖ with residues
// C_ok·B_ki·pₖ and h[0] = D_oi + Re Σₖ C_ok·B_ki (NewDiagonalRealPart adds the conjugates).
func (m *MIMO) Channel(out, in int) (*Diagonal, error) {
	if out < 0 || out >= m.Outputs || in < 0 || in >= m.Inputs {
		return nil, invalidf("pair (%d, %d) is outside a layer of %d outputs and %d inputs", out, in, m.Outputs, m.Inputs)
	}
	n := len(m.Poles)
	res := make([]complex128, n)
	h0 := m.D[out*m.Inputs+in]
	for k, p := range m.Poles {
		cb := m.C[out*n+k] * m.B[k*m.Inputs+in]
		res[k] = cb * p
		h0 += real(cb)
	}
	return NewDiagonalRealPart(m.Poles, res, h0)
}

// MaxRadius is the largest |pₖ| (0 for a layer of no modes).
func (m *MIMO) MaxRadius() float64 {
	r := 0.0
	for _, p := range m.Poles {
		r = math.Max(r, cmplx.Abs(p))
	}
	return r
}
