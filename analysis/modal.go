package analysis

import "github.com/ssmlab/ssmlab/filters"

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

// pairModes groups a conjugate-closed set of poles and residues into modes as the filters
// package pairs them (filters.HalfModes, the rule Validate applies), so that every response
// of a filter sums the modes its own Impulse sums; its copy of the rule here took the pair
// 1e-13 ± 1e-13i, whose residues are complex, for two real poles. A set that is not
// conjugate-closed (not a valid Diagonal) gives the real part of the complex modal sum. One
// pairing checks the set and gives the halves (filters.ValidHalfModes).
func pairModes(poles, res []complex128) []mode {
	out := make([]mode, 0, len(poles))
	hp, hr, err := filters.ValidHalfModes(&filters.Diagonal{Poles: poles, Residues: res})
	if err != nil {
		for i, p := range poles {
			out = append(out, mode{pole: p, residue: res[i], weight: 1})
		}
		return out
	}
	for i, p := range hp {
		if imag(p) != 0 {
			out = append(out, mode{pole: p, residue: hr[i] / 2, weight: 2})
		} else {
			out = append(out, mode{pole: p, residue: hr[i], weight: 1})
		}
	}
	return out
}
