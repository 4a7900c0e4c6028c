package analysis

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// RefitMIMO refits the B rows and C columns of red, a reduction of m with the same inputs,
// outputs and D, to m's responses over length samples, red's poles kept: alternating least
// squares, C given B (each output its own problem) then B given C (each input its own),
// each step the exact minimiser of the total squared error Σ_o Σ_i Σ_{t<L} (h − g)² over
// what it changes, so that the error never rises; it stops when a sweep lowers the squared
// error by less than refitGain of it, or after maxRefitSweeps. Balanced truncation is near-optimal in the
// H∞ norm, not in this finite-horizon L2 error, which the refit lowers: a trained LRU layer
// of 64 modes at order 64 from 0.514 to 0.482 (mean per output). Its normal equations come in
// closed form from the modes (filters.GeomSum at products of poles), O((n + r)·r·(in + out))
// a sweep. A sweep whose normal equations are singular ends the refit. It returns the layer
// with each output's relative error (filters.MIMODiff, which measures it once before and once
// after): red itself where the refitted layer is not better.
func RefitMIMO(m, red *filters.MIMO, length int) (*filters.MIMO, []float64, error) {
	if m.Inputs != red.Inputs || m.Outputs != red.Outputs || !slices.Equal(m.D, red.D) {
		return nil, nil, fmt.Errorf("%w: a refit keeps the layer's inputs, outputs and D", filters.ErrInvalid)
	}
	startErrs, start, err := filters.MIMODiff(m, red, length)
	if err != nil || len(red.Poles) == 0 {
		return red, startErrs, err
	}
	// The sweeps follow the squared error as the target's energy (D aside: both layers have
	// it) less what each step's least squares explains, with no MIMODiff per sweep; the
	// result is measured once at the end, and red kept where it is not better.
	markov := &filters.MIMO{Poles: m.Poles, B: m.B, C: m.C, D: make([]float64, len(m.D)), Inputs: m.Inputs, Outputs: m.Outputs}
	energies, err := markov.Energies(length)
	if err != nil {
		return nil, nil, err
	}
	total := floats.Sum(energies)
	cur := &filters.MIMO{Poles: red.Poles, B: slices.Clone(red.B), C: slices.Clone(red.C), D: red.D, Inputs: red.Inputs, Outputs: red.Outputs}
	prev := math.Inf(1)
	for range maxRefitSweeps {
		c, _, ok := refitRows(m.Poles, m.B, m.C, cur.Poles, cur.B, m.Inputs, m.Outputs, length)
		if !ok {
			break
		}
		cur.C = c
		bt, explained, ok := refitRows(m.Poles, transpose(m.C, m.Outputs, len(m.Poles)), transpose(m.B, len(m.Poles), m.Inputs),
			cur.Poles, transpose(cur.C, cur.Outputs, len(cur.Poles)), m.Outputs, m.Inputs, length)
		if !ok {
			break
		}
		cur.B = transpose(bt, m.Inputs, len(cur.Poles))
		sq := total - explained // the squared error after the sweep
		if !(sq < prev) || prev-sq < refitGain*sq {
			break
		}
		prev = sq
	}
	if err := cur.Validate(); err != nil {
		return red, startErrs, nil
	}
	endErrs, end, err := filters.MIMODiff(m, cur, length)
	if err != nil || !(end < start) {
		return red, startErrs, nil
	}
	return cur, endErrs, nil
}

// refitGain is the relative drop of the squared error below which RefitMIMO stops: on the
// trained LRU layers at order 64 it ends within 0.2% of the error 100 sweeps reach (total
// relative error 0.4594 and 0.4697 against 0.4585 and 0.4695; balanced truncation's 0.4903
// and 0.5020).
const refitGain = 5e-4

// maxRefitSweeps bounds RefitMIMO's sweeps (each one C step and one B step); on the trained
// LRU layers 20 sweeps come within 0.1% of 100 sweeps' error.
const maxRefitSweeps = 20

// refitRows solves the C step: given the reduced layer's poles q and B rows (r × in), the C
// columns (out × r) minimising Σ_o Σ_i Σ_{t<L} (h_oi[t] − Re Σ_k c_ok·q_kᵗ·b_ki)² for the
// target h_oi[t] = Re Σ_j C_oj·p_jᵗ·B_ji (D aside, the same in both). With φ_ki[t] = q_kᵗ·b_ki
// and x = [Re c_o; Im c_o], the model is Σ_k Re c_ok·Re φ_k − Im c_ok·Im φ_k, and its normal
// matrix, the same for every output, has the sums S₁ = Σ φ_k·φ̄_l = (b·bᴴ)_kl·g(q_k·q̄_l) and
// S₂ = Σ φ_k·φ_l = (b·bᵀ)_kl·g(q_k·q_l) (g the geometric sum over L) through Re a·Re b =
// Re(ab + ab̄)/2 and its kin; the right-hand sides the like sums T₁ = C·((B·bᴴ) ∘ g(p_j·q̄_k))
// and T₂ = C·((B·bᵀ) ∘ g(p_j·q_k)). An unknown no sample sees is held at 0. It returns the
// squared norm the fit explains, Σ_o rhs_oᵀ·x_o, and false where the normal matrix is still
// not positive definite.
func refitRows(p, bRef, cRef, q, b []complex128, in, out, length int) ([]complex128, float64, bool) {
	n, r := len(p), len(q)
	lp, lq := filters.PoleLogs(p), filters.PoleLogs(q)
	bbH, bbT := filters.Products(b, r, b, r, in) // b·bᴴ, b·bᵀ, then S₁ and S₂
	for k := range r {
		for l := range r {
			bbH[k*r+l] *= filters.GeomSum(lq[k]+cmplx.Conj(lq[l]), length)
			bbT[k*r+l] *= filters.GeomSum(lq[k]+lq[l], length)
		}
	}
	g := mat.NewSymDense(2*r, nil)
	for k := range r {
		for l := k; l < r; l++ {
			s1, s2 := bbH[k*r+l], bbT[k*r+l]
			g.SetSym(k, l, real(s2+s1)/2)     // Σ Re φ_k·Re φ_l
			g.SetSym(r+k, r+l, real(s1-s2)/2) // Σ Im φ_k·Im φ_l
			g.SetSym(k, r+l, -imag(s2-s1)/2)  // −Σ Re φ_k·Im φ_l
			if l > k {
				s1, s2 = bbH[l*r+k], bbT[l*r+k]
				g.SetSym(l, r+k, -imag(s2-s1)/2)
			}
		}
	}
	// X₁ = (B·bᴴ) ∘ g(p_j·q̄_k), X₂ = (B·bᵀ) ∘ g(p_j·q_k): n × r.
	x1, x2 := filters.Products(bRef, n, b, r, in)
	for j := range n {
		for k := range r {
			x1[j*r+k] *= filters.GeomSum(lp[j]+cmplx.Conj(lq[k]), length)
			x2[j*r+k] *= filters.GeomSum(lp[j]+lq[k], length)
		}
	}
	rhs := mat.NewDense(2*r, out, nil)
	for o := range out {
		for k := range r {
			var t1, t2 complex128
			for j := range n {
				t1 += cRef[o*n+j] * x1[j*r+k]
				t2 += cRef[o*n+j] * x2[j*r+k]
			}
			rhs.Set(k, o, real(t2+t1)/2)    // Σ h·Re φ_k
			rhs.Set(r+k, o, -imag(t2-t1)/2) // −Σ h·Im φ_k
		}
	}
	// An unknown that no sample sees (the imaginary part of C for a real pole with a real B
	// row: Im φ = 0) is held at 0: its row and column of G become the identity's.
	big := 0.0
	for i := range 2 * r {
		big = math.Max(big, g.At(i, i))
	}
	for i := range 2 * r {
		if g.At(i, i) > 1e-14*big {
			continue
		}
		for j := range 2 * r {
			g.SetSym(i, j, 0)
		}
		g.SetSym(i, i, 1)
		for o := range out {
			rhs.Set(i, o, 0)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(g) {
		return nil, 0, false
	}
	var x mat.Dense
	if err := ch.SolveTo(&x, rhs); err != nil {
		return nil, 0, false
	}
	c := make([]complex128, out*r)
	explained := 0.0 // Σ_o rhs_oᵀ·x_o: the squared error is the target's energy less it
	for o := range out {
		for k := range r {
			v := complex(x.At(k, o), x.At(r+k, o))
			if cmplx.IsNaN(v) || cmplx.IsInf(v) {
				return nil, 0, false
			}
			c[o*r+k] = v
			explained += rhs.At(k, o)*x.At(k, o) + rhs.At(r+k, o)*x.At(r+k, o)
		}
	}
	return c, explained, true
}

// transpose returns the transpose of a row-major rows × cols complex matrix.
func transpose(a []complex128, rows, cols int) []complex128 {
	t := make([]complex128, len(a))
	for i := range rows {
		for j := range cols {
			t[j*rows+i] = a[i*cols+j]
		}
	}
	return t
}
