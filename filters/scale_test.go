package filters

import (
	"strings"
	"testing"
)

// TestConvertTinyResponse: a filter whose response lies below float64's normal range is
// compared with its converted form scaled up, not as the zeros its samples round to. With
// B = C = 1e-200 every sample is 0: the tf, zpk and diagonal forms, whose coefficients (about
// 1e-400) round to 0, were written as the zero filter with "rel error 0".
func TestConvertTinyResponse(t *testing.T) {
	rot := [][]float64{{0.5, -0.5}, {0.5, 0.5}}
	mk := func(s float64) *Dense {
		d, err := NewDense(rot, []float64{s, 0}, []float64{0, s}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// exactTol: forms that copy or rotate B and C keep the response to rounding.
	const exactTol = 1e-14
	for _, c := range []struct {
		scale float64
		to    Form
		lost  bool // the form's coefficients underflow: the conversion loses the filter
	}{
		{1e-200, FormTF, true}, {1e-200, FormZPK, true}, {1e-200, FormDiagonal, true},
		{1e-200, FormRotation, false}, {1e-200, FormDense, false},
		// Coefficients of 1e-300, responses of 5e-301: normal, but below 2^-960.
		{1e-150, FormTF, false}, {1e-150, FormZPK, false}, {1e-150, FormDiagonal, false},
	} {
		_, rep, err := Convert(mk(c.scale), c.to)
		if err != nil {
			t.Fatalf("%g → %s: %v", c.scale, c.to, err)
		}
		if c.lost != rep.Inaccurate() || !c.lost && rep.RelError > exactTol {
			t.Errorf("%g → %s: rel error %.3g, inaccurate %v; want lost = %v", c.scale, c.to, rep.RelError, rep.Inaccurate(), c.lost)
		}
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), "below float64's normal range") {
			t.Errorf("%g → %s: warnings %q", c.scale, c.to, rep.Warnings)
		}
	}
	// A zero filter stays exact, and says nothing of its scale.
	_, rep, err := Convert(mk(0), FormTF)
	if err != nil || rep.RelError != 0 || len(rep.Warnings) != 0 {
		t.Errorf("zero filter: %+v, %v", rep, err)
	}
}

// TestCompareBanksTinyResponse: a read-back check compares tiny responses rescaled, as a
// conversion's report does: the zero filter read back for B = C = 1e-200 passed as exact, so
// ssmlab export wrote it.
func TestCompareBanksTinyResponse(t *testing.T) {
	d, err := NewDense([][]float64{{0.5, -0.5}, {0.5, 0.5}}, []float64{1e-200, 0}, []float64{0, 1e-200}, 0)
	if err != nil {
		t.Fatal(err)
	}
	zero, err := NewTransferFunction([]float64{-1, 0.5}, []float64{0, 0}, 0)
	if err != nil {
		t.Fatal(err)
	}
	same, _, err := ToRotation(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100} {
		if worst, _, _, _ := CompareBanks(nil, []Filter{d}, []Filter{zero}, n, 1e9); worst != 1 {
			t.Errorf("n=%d: the zero filter reads back to %.3g, want 1", n, worst)
		}
		if worst, _, _, _ := CompareBanks(nil, []Filter{d}, []Filter{same}, n, 1e9); worst > 1e-14 {
			t.Errorf("n=%d: the rotation form reads back to %.3g", n, worst)
		}
	}
}
