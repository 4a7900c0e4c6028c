package train

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/fft"
)

// hankelOp applies the m×m Hankel matrix H[i][j] = c[i+j] (c has 2m-1 entries) by FFT:
// (Hx)[i] = Σⱼ c[i+j]·x[j] is entry i+m-1 of the linear convolution of c with x reversed,
// which a circular convolution of length N ≥ 2m-1 leaves unaliased at those entries. A
// product costs two real FFTs instead of m² multiply-adds.
type hankelOp struct {
	m    int
	f    *fft.Real
	c    []complex128 // the spectrum of c
	x    []float64
	spec []complex128
}

func newHankelOp(c []float64, m int) *hankelOp {
	n := 4
	for n < 2*m-1 {
		n *= 2
	}
	op := &hankelOp{m: m, f: fft.NewReal(n), x: make([]float64, n), spec: make([]complex128, n/2+1)}
	copy(op.x, c[:2*m-1])
	op.c = op.f.Coefficients(nil, op.x)
	return op
}

// apply writes Hx into dst (length m).
func (op *hankelOp) apply(dst, x []float64) {
	m := op.m
	clear(op.x)
	for j, v := range x {
		op.x[m-1-j] = v
	}
	op.f.Coefficients(op.spec, op.x)
	for k := range op.spec {
		op.spec[k] *= op.c[k]
	}
	op.f.Sequence(op.x, op.spec)
	inv := 1 / float64(len(op.x))
	for i := range dst {
		dst[i] = op.x[i+m-1] * inv
	}
}

// hankelLanczosTol is the residual ‖Hv - λv‖, relative to the largest |λ|, at which a Ritz
// pair counts as converged: ERA resolves singular values down to ~1e-13·σ₁ (below that it
// drops them), so the vectors must be accurate to about that level for the deep states of a
// near-exact realisation (Hyena kernels reach 1e-10 relative error).
const hankelLanczosTol = 1e-14

// hankelTop returns the r eigenvalues of largest magnitude of the symmetric m×m Hankel
// matrix H[i][j] = c[i+j], in decreasing |λ|, and their unit eigenvectors. A scalar
// sequence's Hankel matrix is symmetric, so these are its singular triplets up to signs.
// For a few pairs, Lanczos (lanczosHankelTop) costs a fraction of a full eigendecomposition;
// for many, it needs about m steps anyway and the dense solver is faster.
func hankelTop(c []float64, m, r int) ([]float64, [][]float64, error) {
	r = min(r, m)
	if 4*r > m {
		return denseHankelTop(c, m, r)
	}
	return lanczosHankelTop(c, m, r)
}

// denseHankelTop is hankelTop by a full symmetric eigendecomposition.
func denseHankelTop(c []float64, m, r int) ([]float64, [][]float64, error) {
	h := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			h.SetSym(i, j, c[i+j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(h, true) {
		return nil, nil, fmt.Errorf("ERA: the eigendecomposition of the Hankel matrix did not converge")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(vals[idx[a]]) > math.Abs(vals[idx[b]]) })
	lambda, q := make([]float64, r), make([][]float64, r)
	for k, i := range idx[:r] {
		lambda[k] = vals[i]
		q[k] = mat.Col(nil, i, &vecs)
	}
	return lambda, q, nil
}

// lanczosHankelTop is hankelTop by Lanczos with full reorthogonalisation (classical
// Gram–Schmidt, twice), which converges to both ends of the spectrum first, exactly where the
// largest |λ| lie; it stops once the wanted Ritz pairs meet hankelLanczosTol, and at m steps
// it is exact. With the FFT product, k steps cost O(k·m log m + k²·m) instead of the O(m³) of
// a full eigendecomposition: ERA at n = 64 on the 511×511 Hankel matrix of a 1024-sample
// kernel takes 3–8 ms instead of ~150 ms.
func lanczosHankelTop(c []float64, m, r int) ([]float64, [][]float64, error) {
	return lanczosTop(newHankelOp(c, m).apply, m, r)
}

// lanczosTop is lanczosHankelTop for any symmetric m×m operator apply (dst = Mx).
func lanczosTop(apply func(dst, x []float64), m, r int) ([]float64, [][]float64, error) {
	var qs [][]float64
	alpha, beta := make([]float64, 0, m), make([]float64, 0, m)
	// A fixed, dense start vector (deterministic; not orthogonal to any structured subspace
	// the way e₁ or the ones vector can be).
	q := make([]float64, m)
	for i := range q {
		q[i] = math.Sin(float64(i+1)*0.7548776662466927) + 0.5
	}
	floats.Scale(1/floats.Norm(q, 2), q)
	w := make([]float64, m)
	coef := make([]float64, m)
	impl := gonum.Implementation{}
	var theta, z, prevLead []float64
	var idx []int
	check := r + max(16, r/4)
	for k := 1; k <= m; k++ {
		qs = append(qs, q)
		apply(w, q)
		a := floats.Dot(w, q)
		alpha = append(alpha, a)
		// Full reorthogonalisation against every Lanczos vector so far: the three-term
		// recurrence alone loses orthogonality as soon as a Ritz pair converges. A second pass
		// only where the first removed most of w (Daniel, Gragg, Kaufman and Stewart's
		// criterion: then rounding left a component along the old vectors).
		before := floats.Norm(w, 2)
		for pass := 0; pass < 2; pass++ {
			for j, v := range qs {
				coef[j] = floats.Dot(w, v)
			}
			for j, v := range qs {
				floats.AddScaled(w, -coef[j], v)
			}
			if after := floats.Norm(w, 2); after > 0.7*before {
				break
			} else {
				before = after
			}
		}
		b := floats.Norm(w, 2)
		if k == check || k == m || b <= 1e-15*math.Abs(alpha[0]) {
			n := len(alpha)
			d := append([]float64(nil), alpha...)
			e := append([]float64(nil), beta...)
			// The eigenvectors of the Lanczos matrix cost O(n³) (most of a run's time when
			// computed at every check): first the eigenvalues alone, O(n²), and the vectors
			// only once the wanted Ritz values have settled to 1e-13 since the last check
			// (converged pairs' values settle first: they move by the square of the residual).
			final := k == m || b <= 1e-15*math.Abs(alpha[0])
			if !final {
				impl.Dsterf(n, d, e)
				lead := topAbs(d, min(r, n))
				settled := prevLead != nil && len(prevLead) == len(lead)
				for i := range lead {
					if settled && math.Abs(lead[i]-prevLead[i]) > 1e-13*math.Abs(lead[0]) {
						settled = false
					}
				}
				prevLead = lead
				if !settled || n < r {
					check = min(m, k+max(16, k/4))
					beta = append(beta, b)
					q = make([]float64, m)
					floats.ScaleTo(q, 1/b, w)
					continue
				}
				copy(d, alpha)
				copy(e, beta)
			}
			z = make([]float64, n*n)
			if !impl.Dsteqr(lapack.EVTridiag, n, d, e, z, n, make([]float64, max(1, 2*n-2))) {
				return nil, nil, fmt.Errorf("ERA: the eigendecomposition of the Lanczos matrix did not converge")
			}
			theta = d
			idx = make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(i, j int) bool { return math.Abs(theta[idx[i]]) > math.Abs(theta[idx[j]]) })
			top := math.Abs(theta[idx[0]])
			converged := true
			for _, i := range idx[:min(r, n)] {
				// The residual of Ritz pair i is β_k·|last entry of its eigenvector|.
				if b*math.Abs(z[(n-1)*n+i]) > hankelLanczosTol*top {
					converged = false
					break
				}
			}
			if converged && n >= r || k == m {
				break
			}
			if b <= 1e-15*math.Abs(alpha[0]) {
				// An invariant subspace: continue from a fresh vector orthogonal to it.
				b = 0
				for i := range w {
					w[i] = math.Cos(float64(i+k)*1.3247179572447460) + 0.25
				}
				for pass := 0; pass < 2; pass++ {
					for _, v := range qs {
						floats.AddScaled(w, -floats.Dot(w, v), v)
					}
				}
				nw := floats.Norm(w, 2)
				if nw == 0 {
					break
				}
				floats.Scale(1/nw, w)
				q = append([]float64(nil), w...)
				beta = append(beta, 0)
				check = k + 16
				continue
			}
			check = min(m, k+max(16, k/4))
		}
		beta = append(beta, b)
		q = make([]float64, m)
		floats.ScaleTo(q, 1/b, w)
	}
	n := len(alpha)
	r = min(r, n)
	lambda := make([]float64, r)
	vecs := make([][]float64, r)
	for out, i := range idx[:r] {
		lambda[out] = theta[i]
		v := make([]float64, m)
		for j := 0; j < n; j++ {
			floats.AddScaled(v, z[j*n+i], qs[j])
		}
		vecs[out] = v
	}
	return lambda, vecs, nil
}

// topAbs returns the r values of d of largest magnitude, by decreasing magnitude.
func topAbs(d []float64, r int) []float64 {
	s := append([]float64(nil), d...)
	sort.Slice(s, func(i, j int) bool { return math.Abs(s[i]) > math.Abs(s[j]) })
	return s[:r]
}
