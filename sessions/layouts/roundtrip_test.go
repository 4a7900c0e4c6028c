package layouts_test

import (
	"errors"
	"maps"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestExportIsReal: with is-real, Export writes an S4D layer for SSMKernelDiag(is_real=True)
// (kernel.inv_dt (H, 1), A_real (H, N), B (1, H, N), C (1, H, N), D (1, H), no A_imag),
// which import detects as such and reads back to the bank, for zoh and bilinear; a pole that
// is not real and positive, which that module cannot hold, and the minimal variant, which
// has no is_real, are refused. Export wrote no real layer: is-real was no option.
func TestExportIsReal(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	chans := make([]filters.Filter, 3)
	for c := range chans {
		var p, r []complex128
		for range 2 + c {
			p = append(p, complex(0.05+0.94*rng.Float64(), 0))
			r = append(r, complex(rng.NormFloat64(), 0))
		}
		f, err := filters.NewDiagonal(p, r, rng.NormFloat64())
		if err != nil {
			t.Fatal(err)
		}
		chans[c] = f
	}
	bank, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"p.kernel.inv_dt": {3, 1}, "p.kernel.A_real": {3, 4}, "p.kernel.B": {1, 3, 4}, "p.kernel.C": {1, 3, 4}, "p.D": {1, 3}}
	for _, disc := range []string{"zoh", "bilinear"} {
		o := layouts.Options{Values: map[string]string{"is-real": "true", "disc": disc}}
		named, _, err := layouts.Export(filters.Document{Bank: bank}, layouts.S4D, o, "p.")
		if err != nil {
			t.Fatalf("%s: %v", disc, err)
		}
		if len(named) != len(want) {
			t.Errorf("%s: %d tensors, want %d", disc, len(named), len(want))
		}
		for _, n := range named {
			if s, ok := want[n.Name]; !ok || !slices.Equal(n.Array.Shape, s) {
				t.Errorf("%s: tensor %s of shape %v, want %v", disc, n.Name, n.Array.Shape, s)
			}
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), layouts.S4D, "p.")
		if err != nil || l.Options["is-real"] != "true" {
			t.Fatalf("%s: %v, options %v", disc, err, l.Options)
		}
		r, err := layouts.Import(src, l, layouts.Options{Values: map[string]string{"disc": disc}})
		if err != nil {
			t.Fatalf("%s: %v", disc, err)
		}
		for ch, f := range bank.Channels {
			if e := filters.RelDiff(f.Impulse(200), r.Bank.Channels[ch].Impulse(200)); e > roundTripTol {
				t.Errorf("%s: channel %d comes back off by %.3g", disc, ch, e)
			}
		}
	}
	for _, c := range []struct {
		poles []complex128
		o     map[string]string
		want  string
	}{
		{[]complex128{complex(0.5, 0.2), complex(0.5, -0.2)}, nil, "is not real and positive"},
		{[]complex128{-0.5}, map[string]string{"disc": "bilinear"}, "is not real and positive"},
		{[]complex128{0.5}, map[string]string{"variant": "minimal"}, "has no is_real"},
	} {
		res := make([]complex128, len(c.poles))
		for i, p := range c.poles {
			res[i] = complex(1, imag(p))
		}
		f, err := filters.NewDiagonal(c.poles, res, 0)
		if err != nil {
			t.Fatal(err)
		}
		o := layouts.Options{Values: map[string]string{"is-real": "true"}}
		maps.Copy(o.Values, c.o)
		if _, _, err := layouts.Export(filters.Document{Filter: f}, layouts.S4D, o, ""); !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("poles %v, %v: %v, want %q", c.poles, c.o, err, c.want)
		}
	}
}
