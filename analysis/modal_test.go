package analysis

import (
	"math/cmplx"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// TestModesAsFiltersPairsThem: analysis sums the modes the filters package pairs, so its
// responses are the filter's own. Its copy of the pairing rule took the pair 1e-13 ± 1e-13i
// (residues 1 ± 2i) for two real poles with residue 1: h[2] came out +2e-13 for −2e-13.
func TestModesAsFiltersPairsThem(t *testing.T) {
	p := complex(1e-13, 1e-13)
	d, err := filters.NewDiagonal([]complex128{p, cmplx.Conj(p)}, []complex128{1 + 2i, 1 - 2i}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := d.Impulse(4)
	for _, m := range []Method{Recurrence, Vandermonde, Scan} {
		got, err := Impulse(nil, d, 4, m)
		if err != nil {
			t.Fatal(err)
		}
		// modalTol: the same modes summed in another order round the same way.
		const modalTol = 1e-15
		if e := filters.RelDiff(want, got); e > modalTol {
			t.Errorf("%v: impulse %v, the filter's %v", m, got, want)
		}
	}
	omega := []float64{0, 1, 3}
	direct := d.FreqResponse(omega)
	for i, h := range FreqResponse(d, omega).H {
		if cmplx.Abs(h-direct[i]) > 1e-15*cmplx.Abs(direct[i]) {
			t.Errorf("H(ω = %g) = %v, the filter's %v", omega[i], h, direct[i])
		}
	}
}
