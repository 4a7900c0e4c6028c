package analysis

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
)

// mode is one real mode (weight 1) or one conjugate pair stored by its member with Im > 0
// (weight 2): its contribution to h[t], t ≥ 1, is weight·Re(residue·pole^(t-1)).
type mode struct {
	pole, residue complex128
	weight        float64
}

// modal is a filter's modal data: h[0] = h0, h[t] = Σ weightᵢ·Re(rᵢλᵢ^(t-1)).
type modal struct {
	h0    float64
	modes []mode
}

// modalOf returns the modal data of f: directly for a Diagonal, through filters.ToDiagonal
// (an eigendecomposition or the residues of the stored poles) otherwise, which fails with
// filters.ErrDefective for repeated poles or a (nearly) defective A.
func modalOf(f filters.Filter) (modal, error) {
	d, ok := f.(*filters.Diagonal)
	if !ok {
		var err error
		if d, _, err = filters.ToDiagonal(f); err != nil {
			return modal{}, err
		}
	}
	return modal{h0: d.H0, modes: pairModes(d.Poles, d.Residues)}, nil
}

// pairConjTol is the relative distance within which two poles count as a conjugate pair and
// a pole as real; it matches the filters package's tolerance for conjugate closure.
const pairConjTol = 1e-9

// pairModes groups a conjugate-closed set of poles and residues into modes. The members of a
// pair are usually adjacent (filters stores them so); otherwise the nearest conjugate is used.
// The pair's pole and residue are the averages of the two members, as in filters.
func pairModes(poles, res []complex128) []mode {
	n := len(poles)
	used := make([]bool, n)
	out := make([]mode, 0, n)
	for i, p := range poles {
		if used[i] {
			continue
		}
		used[i] = true
		tol := pairConjTol * (1 + cmplx.Abs(p))
		if math.Abs(imag(p)) <= tol*1e-3 {
			out = append(out, mode{pole: complex(real(p), 0), residue: complex(real(res[i]), 0), weight: 1})
			continue
		}
		best := -1
		if i+1 < n && !used[i+1] && cmplx.Abs(poles[i+1]-cmplx.Conj(p)) <= tol {
			best = i + 1
		} else {
			bestDist := math.Inf(1)
			for j := i + 1; j < n; j++ {
				if d := cmplx.Abs(poles[j] - cmplx.Conj(p)); !used[j] && d < bestDist {
					best, bestDist = j, d
				}
			}
		}
		if best < 0 {
			// Not conjugate-closed (an invalid Diagonal): keep the mode as it is, so that the
			// result is the real part of the complex modal sum.
			out = append(out, mode{pole: p, residue: res[i], weight: 1})
			continue
		}
		used[best] = true
		pp := (p + cmplx.Conj(poles[best])) / 2
		rr := (res[i] + cmplx.Conj(res[best])) / 2
		if imag(pp) < 0 {
			pp, rr = cmplx.Conj(pp), cmplx.Conj(rr)
		}
		out = append(out, mode{pole: pp, residue: rr, weight: 2})
	}
	return out
}
