package layouts_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// sharedBank returns shared modes with residues for channels channels of ssms SSMs (modes
// with Im A of both signs and one real), and the bank of diagonal filters they are.
func sharedBank(t *testing.T, seed uint64, ssms, modes, channels int) (*layouts.SharedModes, *filters.Bank) {
	t.Helper()
	return sharedBankDisc(t, seed, ssms, modes, channels, "zoh")
}

// sharedBankDisc is sharedBank with the poles of disc (zoh or bilinear).
func sharedBankDisc(t *testing.T, seed uint64, ssms, modes, channels int, disc string) (*layouts.SharedModes, *filters.Bank) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &layouts.SharedModes{A: make([][]complex128, ssms)}
	for g := range ssms {
		for n := range modes {
			im := math.Pi * float64(n) * (1 + rng.Float64())
			if n%2 == 1 {
				im = -im
			}
			m.A[g] = append(m.A[g], complex(-0.2-rng.Float64(), im))
		}
	}
	var chans []filters.Filter
	for h := range channels {
		m.Group = append(m.Group, h%ssms)
		m.Dt = append(m.Dt, 0.01+0.2*rng.Float64())
		var poles, rs []complex128
		for _, a := range m.A[h%ssms] {
			x := complex(m.Dt[h], 0) * a
			if disc == "bilinear" {
				poles = append(poles, (1+x/2)/(1-x/2))
			} else {
				poles = append(poles, cmplx.Exp(x))
			}
			rs = append(rs, complex(rng.NormFloat64(), rng.NormFloat64()))
		}
		m.Residues = append(m.Residues, rs)
		// h[t] = 2·Re Σ r·λ^(t−1): Re Σ (2r)·λ^(t−1); mode 0 (Im A = 0) is real.
		twice := make([]complex128, len(rs))
		for i, r := range rs {
			twice[i] = 2 * r
		}
		d, err := filters.NewDiagonalRealPart(poles, twice, rng.NormFloat64())
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, d)
	}
	b, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}

// TestExportSharedModes: a bank fitted with modes shared by n_ssm SSMs is written with A and
// B of n_ssm rows, one Δt per channel, and reads back (through the s4d reader, which tiles the
// SSMs over the channels) as the bank, padded or not, with softplus transforms, under the
// bilinear disc too; the reader gives the modes and steps back as the start of a shared fit.
func TestExportSharedModes(t *testing.T) {
	for _, c := range []struct {
		ssms, width int
		values      map[string]string
	}{
		{1, 0, nil},
		{2, 6, nil},
		{1, 0, map[string]string{"dt-transform": "softplus", "real-transform": "softplus"}},
		{2, 0, map[string]string{"disc": "bilinear"}},
	} {
		m, bank := sharedBankDisc(t, uint64(c.ssms+c.width), c.ssms, 3, 4, c.values["disc"])
		o := layouts.Options{Values: c.values, StateSize: c.width, Shared: m}
		tensors, _, err := layouts.Export(filters.Document{Bank: bank}, layouts.S4D, o, "layer.")
		if err != nil {
			t.Fatal(err)
		}
		width := max(3, c.width)
		shapes := map[string][]int{"layer.kernel.inv_dt": {4, 1}, "layer.kernel.A_real": {c.ssms, width}, "layer.kernel.A_imag": {c.ssms, width},
			"layer.kernel.B": {1, c.ssms, width, 2}, "layer.kernel.C": {1, 4, width, 2}, "layer.D": {1, 4}}
		for _, tn := range tensors {
			if want := shapes[tn.Name]; len(want) == 0 || !equalInts(tn.Array.Shape, want) {
				t.Errorf("%d SSMs: %s has shape %v, want %v", c.ssms, tn.Name, tn.Array.Shape, want)
			}
		}
		ro := layouts.Options{Values: c.values}
		rb, err := layouts.ReadBackOver(filters.Document{Bank: bank}, tensors, arrays.Float64, layouts.S4D, ro, "layer.", 256)
		if err != nil {
			t.Fatal(err)
		}
		if !(rb.RelError < roundTripTol) {
			t.Errorf("%d SSMs, width %d, %v: read back to %.3g", c.ssms, c.width, c.values, rb.RelError)
		}
		l, err := layouts.Find(layouts.NamedSource(tensors).Arrays(), layouts.S4D, "layer.")
		if err != nil {
			t.Fatal(err)
		}
		if !layouts.SharesModes(l) {
			t.Errorf("%d SSMs: the layer read back does not share modes (options %v)", c.ssms, l.Options)
		}
		r, err := layouts.Import(layouts.NamedSource(tensors), l, ro)
		if err != nil || r.Shared == nil {
			t.Fatalf("%d SSMs: %v, shared %v", c.ssms, err, r.Shared)
		}
		for g, as := range m.A {
			for n, a := range as {
				got := r.Shared.A[g][n]
				if imag(a) > 0 {
					a = cmplx.Conj(a) // written as the member with Im A ≤ 0
				}
				if cmplx.Abs(got-a) > 1e-12*cmplx.Abs(a) {
					t.Errorf("SSM %d, mode %d: read back as %v, written %v", g, n, got, a)
				}
			}
		}
		for h, dt := range m.Dt {
			if math.Abs(r.Shared.Dt[h]-dt) > 1e-12*dt || r.Shared.Group[h] != h%c.ssms {
				t.Errorf("channel %d: Δt %v of SSM %d, written %v of %d", h, r.Shared.Dt[h], r.Shared.Group[h], dt, h%c.ssms)
			}
		}
	}
}

// TestExportSharedModesZeroChannel: a channel whose kernel is zero (a shared fit gives it
// residues +0 and no direct term) is written with C and D of +0, the project's zero; C̃ = r/λ
// gave −0 where λ = e^{ΔA} (or its bilinear image) has Im < 0 with |Im| ≥ |Re|, or Re < 0
// with |Re| ≥ |Im|: the modes here at angles −1.5 and −2.5 rad.
func TestExportSharedModesZeroChannel(t *testing.T) {
	for _, disc := range []string{"zoh", "bilinear"} {
		const dt, zero = 0.05, 1
		as := []complex128{-0.5, complex(-0.3, -30), complex(-0.2, 50)}
		m := &layouts.SharedModes{Group: []int{0, 0}, A: [][]complex128{as}, Dt: []float64{dt, dt},
			Residues: [][]complex128{{0.7, complex(0.2, -0.4), complex(-0.3, 0.1)}, make([]complex128, len(as))}}
		var chans []filters.Filter
		for h, rs := range m.Residues {
			var poles, twice []complex128
			for k, a := range as {
				x := complex(dt, 0) * a
				if disc == "bilinear" {
					poles = append(poles, (1+x/2)/(1-x/2))
				} else {
					poles = append(poles, cmplx.Exp(x))
				}
				twice = append(twice, 2*rs[k])
			}
			d, err := filters.NewDiagonalRealPart(poles, twice, float64(1-h))
			if err != nil {
				t.Fatal(err)
			}
			chans = append(chans, d)
		}
		bank, err := filters.NewBank(chans)
		if err != nil {
			t.Fatal(err)
		}
		o := layouts.Options{Values: map[string]string{"disc": disc}, Shared: m}
		tensors, _, err := layouts.Export(filters.Document{Bank: bank}, layouts.S4D, o, "layer.")
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range tensors {
			var row []float64
			switch tn.Name {
			case "layer.kernel.C": // (1, H, width, 2)
				n := tn.Array.Shape[2] * 2
				row = tn.Array.Data[zero*n : (zero+1)*n]
			case "layer.D": // (1, H)
				row = tn.Array.Data[zero : zero+1]
			default:
				continue
			}
			for i, x := range row {
				if x != 0 || math.Signbit(x) {
					t.Errorf("%s: the zero channel's %s[%d] is %v (sign bit %v), want +0", disc, tn.Name, i, x, math.Signbit(x))
				}
			}
		}
	}
}

// TestExportSharedModesRefuses: shared modes that do not fit the bank (a residue row short
// of the modes, SSMs not tiled as the layout tiles them, the dss disc) are refused, not
// written (a damaged work file must not panic the writer).
func TestExportSharedModesRefuses(t *testing.T) {
	m, bank := sharedBank(t, 9, 2, 3, 4)
	short := *m
	short.Residues = append([][]complex128{m.Residues[0][:2]}, m.Residues[1:]...)
	untiled := *m
	untiled.Group = []int{0, 0, 1, 1}
	// A mode whose pole underflows to 0 with a residue (a tap at t = 1) cannot be written.
	tap := *m
	tap.A = [][]complex128{{complex(-1e6, 0), m.A[0][1], m.A[0][2]}, m.A[1]}
	for i, c := range []struct {
		m      *layouts.SharedModes
		values map[string]string
	}{{&short, nil}, {&untiled, nil}, {m, map[string]string{"disc": "dss", "length": "64"}}, {&tap, nil}} {
		_, _, err := layouts.Export(filters.Document{Bank: bank}, layouts.S4D, layouts.Options{Values: c.values, Shared: c.m}, "layer.")
		if err == nil || c.m == &tap && !strings.Contains(err.Error(), "its pole e^{ΔA} is 0") {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

// TestSharesModes: an S4D layer of n_ssm SSMs that is causal, complex, of one Δt per channel
// and disc zoh or bilinear, and an S4 (DPLR) layer of n_ssm SSMs (its module built with mode
// diag and disc bilinear holds them), are written from shared modes; no other layer is.
func TestSharesModes(t *testing.T) {
	base := map[string]string{"n_ssm": "1", "disc": "zoh", "variant": "ssm"}
	with := func(k, v string) map[string]string {
		o := map[string]string{}
		for a, b := range base {
			o[a] = b
		}
		o[k] = v
		return o
	}
	// A layer of shared modes that the s4d layout does not hold says what keeps it, once: it
	// blamed n_ssm alone where disc dss was the reason.
	for _, c := range []struct {
		o    map[string]string
		want string
	}{
		{with("disc", "dss"), "n_ssm 1 (A and B shared among the 3 channels) with disc dss (shared modes are written for zoh or bilinear)"},
		{with("bidirectional", "true"), "bidirectional (C's anti-causal rows share A with the causal ones), n_ssm 1 (A and B shared among the 3 channels)"},
		{base, "n_ssm 1 (A and B shared among the 3 channels)"},
	} {
		if v, _ := layouts.WriteBackVariant(layouts.Layer{Layout: layouts.S4D, Channels: 3, Options: c.o}); v != c.want {
			t.Errorf("%v: WriteBackVariant says %q, want %q", c.o, v, c.want)
		}
	}
	for _, c := range []struct {
		l    layouts.Layer
		want bool
	}{
		{layouts.Layer{Layout: layouts.S4D, Options: base}, true},
		{layouts.Layer{Layout: layouts.S4D, Options: with("n_ssm", "")}, false},
		{layouts.Layer{Layout: layouts.S4D, Options: with("disc", "bilinear")}, true},
		{layouts.Layer{Layout: layouts.S4D, Options: with("disc", "dss")}, false},
		{layouts.Layer{Layout: layouts.S4D, Options: with("is-real", "true")}, false},
		{layouts.Layer{Layout: layouts.S4D, Options: with("dt_tie", "false")}, false},
		{layouts.Layer{Layout: layouts.S4D, Options: with("bidirectional", "true")}, false},
		{layouts.Layer{Layout: layouts.S4, Options: map[string]string{"n_ssm": "1", "disc": "bilinear"}}, true},
		{layouts.Layer{Layout: layouts.S4, Options: map[string]string{"disc": "bilinear"}}, false},
		{layouts.Layer{Layout: layouts.StripedHyena, Options: base}, false},
	} {
		if got := layouts.SharesModes(c.l); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.l.Layout, c.l.Options, got, c.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
