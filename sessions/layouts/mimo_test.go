package layouts_test

import (
	"errors"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// randomMIMO returns a stable layer of n modes (n ≥ 4) and h inputs and outputs, diagonal
// D: complex poles of radius up to 0.9999 (one at it), a real positive and a real negative
// pole; B and C complex.
func randomMIMO(t *testing.T, seed uint64, n, h int) *filters.MIMO {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	p := make([]complex128, n)
	for k := range p {
		p[k] = cmplx.Rect(0.3+0.6999*rng.Float64(), 0.05+3*rng.Float64())
	}
	p[0] = cmplx.Rect(0.9999, 0.01+rng.Float64())
	p[1] = complex(0.2+0.7*rng.Float64(), 0)
	p[2] = complex(-0.2-0.7*rng.Float64(), 0)
	norm := func() complex128 { return complex(rng.NormFloat64(), rng.NormFloat64()) }
	b, c := make([]complex128, n*h), make([]complex128, h*n)
	for i := range b {
		b[i], c[i] = norm(), norm()
	}
	d := make([]float64, h*h)
	for i := range h {
		d[i*h+i] = rng.NormFloat64()
	}
	m, err := filters.NewMIMO(p, b, c, d, h, h)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mimoLength is the samples the round trips compare: long enough that the |λ| = 0.9999 mode
// has turned several times, short enough to be quick. A pole read back to rounding ε moves
// pᵗ by t·ε: 400·1.1e-16 = 4.4e-14, the worst measured (3.7e-14), well within roundTripTol.
const mimoLength = 400

// mimoDiff is the worst relative L2 difference of the impulse responses of every pair of
// two layers over n samples.
func mimoDiff(t *testing.T, want, got *filters.MIMO, n int) float64 {
	t.Helper()
	if got == nil || got.Inputs != want.Inputs || got.Outputs != want.Outputs {
		t.Fatalf("read back as %+v, want %d outputs × %d inputs", got, want.Outputs, want.Inputs)
	}
	worst := 0.0
	for o := range want.Outputs {
		for i := range want.Inputs {
			w, err := want.Channel(o, i)
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.Channel(o, i)
			if err != nil {
				t.Fatal(err)
			}
			worst = max(worst, filters.RelDiff(w.Impulse(n), g.Impulse(n)))
		}
	}
	return worst
}

// TestExportMIMORoundTrip: a MIMO layer written by ExportMIMO and read back by Import is the
// layer (every pair's response to roundTripTol), for lru and for s5 under zoh and bilinear,
// conj-sym true and false, a step_rescale other than 1 and a written log_step, with clip-eigs
// where the modes are below its clip; the bank is the diagonal pairs of Result.MIMO; a
// StateSize above the layer's order pads it with modes that change nothing.
func TestExportMIMORoundTrip(t *testing.T) {
	m := randomMIMO(t, 31, 9, 3)
	worst := 0.0
	for _, c := range []struct {
		lay   layouts.Layout
		o     map[string]string
		state int
	}{
		{layouts.LRU, nil, 0},
		{layouts.LRU, nil, 12},
		{layouts.S5, nil, 0},
		{layouts.S5, map[string]string{"conj-sym": "false", "step-rescale": "0.5", "log-step": "-1"}, 0},
		{layouts.S5, map[string]string{"disc": "bilinear", "step-rescale": "2", "log-step": "0.3"}, 0},
		{layouts.S5, map[string]string{"disc": "bilinear", "conj-sym": "false"}, 11},
		{layouts.S5, map[string]string{"clip-eigs": "true", "log-step": "-2"}, 0},
		{layouts.S5, map[string]string{"disc": "bilinear", "clip-eigs": "true", "log-step": "-2", "step-rescale": "0.7"}, 0},
	} {
		o := layouts.Options{Values: c.o, StateSize: c.state}
		named, err := layouts.ExportMIMO(m, c.lay, o, "layers.2.seq.")
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), c.lay, "layers.2.seq")
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		r, err := layouts.Import(src, l, layouts.Options{Values: c.o}) // log-step: accepted, the file's read
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		if want := max(len(m.Poles), c.state); r.MIMO == nil || len(r.MIMO.Poles) != want {
			t.Fatalf("%s %v: Result.MIMO %+v, want %d modes", c.lay, c.o, r.MIMO, want)
		}
		e := mimoDiff(t, m, r.MIMO, mimoLength)
		worst = max(worst, e)
		if e > roundTripTol {
			t.Errorf("%s %v: the layer comes back off by %.3g", c.lay, c.o, e)
		}
		for h, f := range r.Bank.Channels {
			g, _ := r.MIMO.Channel(h, h)
			if e := filters.RelDiff(f.Impulse(mimoLength), g.Impulse(mimoLength)); e != 0 {
				t.Errorf("%s %v: channel %d is not the layer's pair (%d, %d): %.3g", c.lay, c.o, h, h, h, e)
			}
		}
	}
	t.Logf("worst relative difference over the round trips: %.2g", worst)
}

// TestExportMIMORefuses: what the lru and s5 modules cannot hold is refused, naming why: a
// D off the diagonal, inputs other than outputs, a pole on or outside the unit circle or at
// 0 (lru), a pole at 0 (s5 zoh) or −1 (s5 bilinear), a mode that clip_eigs would clip, a
// step that is not positive; settings of reading (pairs) and options of other layouts. A
// bidirectional S5 layer is read as its forward part, and WriteBackVariant refuses to write
// it back.
func TestExportMIMORefuses(t *testing.T) {
	base := func() *filters.MIMO { return randomMIMO(t, 32, 4, 2) }
	withPole := func(p complex128) *filters.MIMO { m := base(); m.Poles[3] = p; return m }
	offD := base()
	offD.D[1] = 0.5
	wide, err := filters.NewMIMO([]complex128{0.5}, []complex128{1, 1, 1}, []complex128{1, 1}, make([]float64, 6), 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    *filters.MIMO
		lay  layouts.Layout
		o    layouts.Options
		is   error
		want string
	}{
		{offD, layouts.LRU, layouts.Options{}, layouts.ErrInvalid, "D must be diagonal"},
		{offD, layouts.S5, layouts.Options{}, layouts.ErrInvalid, "D must be diagonal"},
		{wide, layouts.LRU, layouts.Options{}, layouts.ErrInvalid, "3 inputs and 2 outputs"},
		{withPole(1), layouts.LRU, layouts.Options{}, layouts.ErrInvalid, "mode 3: pole (1+0i) of |λ| = 1 is outside 0 < |λ| < 1"},
		{withPole(complex(0.9, 0.9)), layouts.LRU, layouts.Options{}, layouts.ErrInvalid, "mode 3"},
		{withPole(0), layouts.LRU, layouts.Options{}, layouts.ErrInvalid, "mode 3: pole (0+0i) of |λ| = 0"},
		{withPole(0), layouts.S5, layouts.Options{}, layouts.ErrInvalid, "mode 3: pole 0 has no logarithm"},
		{withPole(-1), layouts.S5, layouts.Options{Values: map[string]string{"disc": "bilinear"}}, layouts.ErrInvalid, "mode 3: pole −1"},
		{withPole(0.99995), layouts.S5, layouts.Options{Values: map[string]string{"clip-eigs": "true"}}, layouts.ErrInvalid, "mode 3: Re Λ = -5.00013e-05"},
		{base(), layouts.S5, layouts.Options{Values: map[string]string{"step-rescale": "0"}}, layouts.ErrInvalid, "want a positive finite step"},
		{base(), layouts.S5, layouts.Options{Values: map[string]string{"disc": "dss"}}, layouts.ErrInvalid, "not dss"},
		{base(), layouts.S5, layouts.Options{Pairs: [][2]int{{0, 1}}}, layouts.ErrNotExported, "written whole"},
		{base(), layouts.LRU, layouts.Options{Values: map[string]string{"disc": "zoh"}}, nil, "not of lru"},
		{base(), layouts.S4D, layouts.Options{}, layouts.ErrNotFound, "writes the layouts lru, s5"},
	} {
		_, err := layouts.ExportMIMO(c.m, c.lay, c.o, "")
		if err == nil || c.is != nil && !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want %q", c.lay, c.o, err, c.want)
		}
	}

	// A bidirectional S5 layer: C1 and C2 in place of C.
	m := base()
	named, err := layouts.ExportMIMO(m, layouts.S5, layouts.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var src layouts.NamedSource
	for _, n := range named {
		if n.Name == "C" {
			src = append(src, arrays.Named{Name: "C1", Array: n.Array}, arrays.Named{Name: "C2", Array: n.Array.Clone()})
			continue
		}
		src = append(src, n)
	}
	l, err := layouts.Find(src.Arrays(), layouts.S5, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := layouts.Import(src, l, layouts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := mimoDiff(t, m, r.MIMO, mimoLength); e > roundTripTol {
		t.Errorf("bidirectional: the forward part reads back off by %.3g", e)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "C2 acts on the reverse scan") {
		t.Errorf("bidirectional: warnings %q do not say C2 was left out", r.Warnings)
	}
	if v, _ := layouts.WriteBackVariant(l); !strings.Contains(v, "bidirectional") {
		t.Errorf("bidirectional: WriteBackVariant says %q, want it refused as bidirectional", v)
	}
	if v, _ := layouts.WriteBackVariant(layouts.Layer{Layout: layouts.S5, Options: map[string]string{}}); v != "" {
		t.Errorf("a causal S5 layer: WriteBackVariant says %q, want \"\"", v)
	}
}
