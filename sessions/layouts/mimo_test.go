package layouts_test

import (
	"errors"
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"slices"
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
// layer (every pair's response to roundTripTol), for lru, rotrnn (heads of two states) and
// for s5 under zoh and bilinear,
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
		{layouts.RotRNN, nil, 0},
		{layouts.RotRNN, nil, 12},
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
			// A RotRNN layer's bank is its rotation form, another computation of the same
			// responses; the others' is Result.MIMO's pairs.
			tol := 0.0
			if c.lay == layouts.RotRNN {
				tol = roundTripTol
			}
			if e := filters.RelDiff(f.Impulse(mimoLength), g.Impulse(mimoLength)); e > tol {
				t.Errorf("%s %v: channel %d is not the layer's pair (%d, %d): %.3g", c.lay, c.o, h, h, h, e)
			}
		}
	}
	t.Logf("worst relative difference over the round trips: %.2g", worst)
}

// TestExportMIMORefuses: what the lru and s5 modules cannot hold is refused, naming why: a
// D off the diagonal, inputs other than outputs, a pole on or outside the unit circle or at
// 0 (lru), a pole at 0 (s5 zoh) or −1 (s5 bilinear), a mode that clip_eigs would clip, a
// step that is not positive; settings of reading (pairs) and options of other layouts; a
// layer of 2H outputs (bidirectional) in the lru layout, or with D on its backward rows. A
// bidirectional S5 layer's bank is its forward part, as before it was written back.
func TestExportMIMORefuses(t *testing.T) {
	base := func() *filters.MIMO { return randomMIMO(t, 32, 4, 2) }
	withPole := func(p complex128) *filters.MIMO { m := base(); m.Poles[3] = p; return m }
	offD := base()
	offD.D[1] = 0.5
	wide, err := filters.NewMIMO([]complex128{0.5}, []complex128{1, 1, 1}, []complex128{1, 1}, make([]float64, 6), 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	backD := randomBidirectional(t, 33, 4, 2)
	backD.D[2*2+0] = 0.5 // output 2, the first backward one, from input 0
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
		{randomBidirectional(t, 33, 4, 2), layouts.LRU, layouts.Options{}, layouts.ErrInvalid, "2 inputs and 4 outputs"},
		{backD, layouts.S5, layouts.Options{}, layouts.ErrInvalid, "D[2][0] = 0.5: a bidirectional S5 layer's D acts on its forward outputs alone"},
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
	for h, f := range r.Bank.Channels {
		g, _ := m.Channel(h, h)
		if e := filters.RelDiff(g.Impulse(mimoLength), f.Impulse(mimoLength)); e > roundTripTol {
			t.Errorf("bidirectional: channel %d is off the forward pair (%d, %d) by %.3g", h, h, h, e)
		}
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "C2 acts on the reverse scan") {
		t.Errorf("bidirectional: warnings %q do not say C2 was left out", r.Warnings)
	}
}

// randomBidirectional returns a bidirectional S5 layer as Import reads one: randomMIMO's
// layer of n modes and h inputs as its forward part, and h backward outputs of another
// random C (randomMIMO's of seed+1) and no D.
func randomBidirectional(t *testing.T, seed uint64, n, h int) *filters.MIMO {
	t.Helper()
	fwd, bwd := randomMIMO(t, seed, n, h), randomMIMO(t, seed+1, n, h)
	m, err := filters.NewMIMO(fwd.Poles, fwd.B, append(fwd.C, bwd.C...), append(fwd.D, make([]float64, h*h)...), h, 2*h)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestExportMIMOBidirectional: a bidirectional S5 layer (2H outputs, the reverse scan's
// below the forward ones) is written with C1 and C2 (one C of (H, 2P, 2) under c-init
// complex_normal) and read back by Import as the same layer (every pair's response to
// roundTripTol), under zoh and bilinear, conj-sym true and false, padded; its bank is the forward pairs with the warning that C2 is left out, and
// WriteBackVariant no longer refuses it.
func TestExportMIMOBidirectional(t *testing.T) {
	m := randomBidirectional(t, 34, 9, 3)
	worst := 0.0
	for _, c := range []struct {
		o     map[string]string
		state int
	}{
		{nil, 0},
		{map[string]string{"conj-sym": "false", "step-rescale": "0.5", "log-step": "-1"}, 0},
		{map[string]string{"disc": "bilinear", "log-step": "0.3"}, 11},
		{map[string]string{"c-init": "complex_normal"}, 0},
		{map[string]string{"c-init": "complex_normal", "conj-sym": "false"}, 11},
	} {
		named, err := layouts.ExportMIMO(m, layouts.S5, layouts.Options{Values: c.o, StateSize: c.state}, "layers.0.seq.")
		if err != nil {
			t.Fatalf("%v: %v", c.o, err)
		}
		var names []string
		for _, n := range named {
			names = append(names, n.Name)
		}
		stacked := c.o["c-init"] == "complex_normal"
		if got := strings.Join(names, " "); !stacked && (!strings.Contains(got, "seq.C1 layers.0.seq.C2 ") || strings.Contains(got, "seq.C ")) {
			t.Errorf("%v: tensors %s, want C1 and C2 in place of C", c.o, got)
		}
		if stacked && (named[3].Name != "layers.0.seq.C" || !slices.Equal(named[3].Array.Shape, []int{3, 2 * max(9, c.state), 2})) {
			t.Errorf("%v: tensor %s of shape %v, want C of (3, 2P, 2)", c.o, named[3].Name, named[3].Array.Shape)
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), layouts.S5, "layers.0.seq.")
		if err != nil {
			t.Fatalf("%v: %v", c.o, err)
		}
		if l.Options["bidirectional"] != "true" || stacked != (l.Options["c-init"] == "complex_normal") {
			t.Errorf("%v: detected as %v, want bidirectional (c-init complex_normal where C is stacked)", c.o, l.Options)
		}
		if v, _ := layouts.WriteBackVariant(l); v != "" {
			t.Errorf("%v: WriteBackVariant says %q, want \"\" (ExportMIMO writes it)", c.o, v)
		}
		r, err := layouts.Import(src, l, layouts.Options{Values: c.o})
		if err != nil {
			t.Fatalf("%v: %v", c.o, err)
		}
		e := mimoDiff(t, m, r.MIMO, mimoLength)
		worst = max(worst, e)
		if e > roundTripTol {
			t.Errorf("%v: the layer comes back off by %.3g", c.o, e)
		}
		if len(r.Bank.Channels) != 3 || len(r.Pairs) != 2 || !strings.Contains(r.Pairs[1], "on the reverse scan") {
			t.Errorf("%v: bank of %d channels, warnings about the pairs %q", c.o, len(r.Bank.Channels), r.Pairs)
		}
		for h, f := range r.Bank.Channels {
			g, _ := r.MIMO.Channel(h, h)
			if e := filters.RelDiff(f.Impulse(mimoLength), g.Impulse(mimoLength)); e != 0 {
				t.Errorf("%v: channel %d is not the forward pair (%d, %d): %.3g", c.o, h, h, h, e)
			}
		}
	}
	t.Logf("worst relative difference over the bidirectional round trips: %.2g", worst)

	// A C of neither P nor 2P columns is refused, naming both.
	named, err := layouts.ExportMIMO(m, layouts.S5, layouts.Options{Values: map[string]string{"c-init": "complex_normal"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	named[3].Array = &arrays.Array{Shape: []int{3, 10, 2}, Data: make([]float64, 60)}
	src := layouts.NamedSource(named)
	l, err := layouts.Find(src.Arrays(), layouts.S5, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := layouts.Import(src, l, layouts.Options{}); !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), `"C" has shape (3, 10, 2): want (H, 9, 2), or (H, 18, 2)`) {
		t.Errorf("a C of 10 columns for 9 states: %v", err)
	}
}

// TestRotRNNAsModes: a RotRNN layer read as modes (Result.MIMO: each head's pairs of states
// turned by γR(θ) in P's basis, a mode each) has the responses of its rotation form (the
// bank, which the golden files hold against the reference listing's scan), every pair.
func TestRotRNNAsModes(t *testing.T) {
	for _, name := range []string{"rotrnn_64.npz", "rotrnn_32.safetensors"} {
		f, err := arrays.Open(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		l, err := layouts.Find(f.Arrays(), layouts.RotRNN, "")
		if err != nil {
			t.Fatal(err)
		}
		var pairs [][2]int
		for o := range 3 {
			for i := range 3 {
				pairs = append(pairs, [2]int{o, i})
			}
		}
		r, err := layouts.Import(f, l, layouts.Options{Pairs: pairs})
		f.Close()
		if err != nil || r.MIMO == nil || len(r.MIMO.Poles) != l.Order/2 {
			t.Fatalf("%s: %v, %+v", name, err, r.MIMO)
		}
		for c, p := range pairs {
			g, err := r.MIMO.Channel(p[0], p[1])
			if err != nil {
				t.Fatal(err)
			}
			if e := filters.RelDiff(r.Bank.Channels[c].Impulse(mimoLength), g.Impulse(mimoLength)); e > 1e-12 {
				t.Errorf("%s: pair %v: the modes are %.3g from the rotation form", name, p, e)
			}
		}
	}
}

// TestReadBackMIMOStableAsChannels: ReadBackMIMO calls a layer made unstable by its write as
// ReadBack calls its channels, by filters.Stable: a mode 2e-10 inside the unit circle is
// stable and one 5e-11 inside is not (filters.MarginalTol, 1e-10), so only the first is
// reported, and counted stable, when both read back on the circle. Each is an S5 layer of
// one channel written at log_step 75 (Δ = e^75): Re Λ = log(λ)/Δ, about −5e-43, rounds to 0
// in bfloat16 (its least subnormal is 9.2e-41), and the mode reads back as the pole 1.
// ReadBackMIMO called every layer of radius below 1 stable.
func TestReadBackMIMOStableAsChannels(t *testing.T) {
	o := layouts.Options{Values: map[string]string{"log-step": "75"}}
	for _, c := range []struct {
		gap    float64 // 1 − the mode's pole
		stable bool
	}{{2e-10, true}, {5e-11, false}} {
		m, err := filters.NewMIMO([]complex128{complex(1-c.gap, 0), 0.6}, []complex128{1, 0.5}, []complex128{0.3, 0.2}, []float64{0}, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if filters.Stable(m.MaxRadius()) != c.stable {
			t.Fatalf("the test's premise: radius %.17g is stable %v", m.MaxRadius(), c.stable)
		}
		tensors, err := layouts.ExportMIMO(m, layouts.S5, o, "")
		if err != nil {
			t.Fatal(err)
		}
		mimo, err := layouts.ReadBackMIMO(m, tensors, arrays.BFloat16, layouts.S5, o, "", 64)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := m.Channel(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		single, err := layouts.ReadBack(filters.Document{Bank: &filters.Bank{Channels: []filters.Filter{ch}}}, tensors, arrays.BFloat16, layouts.S5, o, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(single.Unstable) == 0 == c.stable {
			t.Fatalf("the test's premise: a channel 1 − %g from the circle, written in bfloat16, is judged made unstable %v; want %v", c.gap, single.Unstable, c.stable)
		}
		if !slices.Equal(mimo.Unstable, single.Unstable) || mimo.Stable != single.Stable {
			t.Errorf("a layer 1 − %g from the circle, read back on it: ReadBackMIMO's unstable outputs %v of %d stable, ReadBack's channels %v of %d", c.gap, mimo.Unstable, mimo.Stable, single.Unstable, single.Stable)
		}
	}
}
