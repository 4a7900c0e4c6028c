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

// TestRealModes512: a diagonal filter of 512 real modes (which pair in O(n), once per call,
// through filters.ValidHalfModes) gives its own impulse and frequency responses: the modes
// are the stored ones. It checks the result, not the cost.
func TestRealModes512(t *testing.T) {
	const n = 512
	poles, res := make([]complex128, n), make([]complex128, n)
	for k := range n {
		poles[k] = complex(0.999-0.0019*float64(k), 0)
		res[k] = complex(float64(k%7)-3, 0)
	}
	d, err := filters.NewDiagonal(poles, res, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	m, err := modalOf(d)
	if err != nil || len(m.modes) != n {
		t.Fatalf("%d modes (want %d), err %v", len(m.modes), n, err)
	}
	for k, md := range m.modes {
		if md.pole != poles[k] || md.residue != res[k] || md.weight != 1 {
			t.Fatalf("mode %d: %+v, want pole %v residue %v weight 1", k, md, poles[k], res[k])
		}
	}
	// modalTol: the same modes summed in another order round the same way.
	const modalTol = 1e-13
	got, err := Impulse(nil, d, 256, Recurrence)
	if err != nil {
		t.Fatal(err)
	}
	if e := filters.RelDiff(d.Impulse(256), got); e > modalTol {
		t.Errorf("impulse off the filter's by %.3g", e)
	}
	omega := []float64{0, 0.01, 1, 3}
	direct := d.FreqResponse(omega)
	for i, h := range FreqResponse(d, omega).H {
		if cmplx.Abs(h-direct[i]) > modalTol*cmplx.Abs(direct[i]) {
			t.Errorf("H(ω = %g) = %v, the filter's %v", omega[i], h, direct[i])
		}
	}
}
