package layouts_test

import (
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// randomModal returns a bank of stable diagonal channels with complex pairs and real poles of
// both signs, of different orders.
func randomModal(t *testing.T, seed uint64, channels int) *filters.Bank {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	chans := make([]filters.Filter, channels)
	for c := range chans {
		n := 2 + rng.IntN(4)
		var p, r []complex128
		for range n {
			p = append(p, cmplx.Rect(0.3+0.65*rng.Float64(), 3*rng.Float64()))
			r = append(r, complex(rng.NormFloat64(), rng.NormFloat64()))
		}
		p = append(p, complex(0.8*rng.Float64(), 0), complex(-0.9*rng.Float64()-0.05, 0))
		r = append(r, complex(rng.NormFloat64(), 0), complex(rng.NormFloat64(), 0))
		f, err := filters.NewDiagonalRealPart(p, r, rng.NormFloat64())
		if err != nil {
			t.Fatal(err)
		}
		chans[c] = f
	}
	b, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTripTol: the modes pass through log, exp and a division in float64.
const roundTripTol = 1e-12

func TestExportImportRoundTrip(t *testing.T) {
	bank := randomModal(t, 7, 5)
	for _, c := range []struct {
		lay layouts.Layout
		o   map[string]string
	}{
		{layouts.StripedHyena, nil},
		{layouts.S4D, nil},
		{layouts.S4D, map[string]string{"disc": "bilinear"}},
		{layouts.S4D, map[string]string{"variant": "minimal"}},
		{layouts.SOS, nil},
	} {
		o := layouts.Options{Values: c.o}
		named, _, err := layouts.Export(filters.Document{Bank: bank}, c.lay, o, "layers.1.mixer.")
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), c.lay, "layers.1.mixer")
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		ro := layouts.Options{Values: map[string]string{}}
		if v, ok := c.o["disc"]; ok {
			ro.Values["disc"] = v
		}
		r, err := layouts.Import(src, l, ro)
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		for ch, f := range bank.Channels {
			if e := filters.RelDiff(f.Impulse(200), r.Bank.Channels[ch].Impulse(200)); e > roundTripTol {
				t.Errorf("%s %v: channel %d comes back off by %.3g", c.lay, c.o, ch, e)
			}
		}
	}
}
