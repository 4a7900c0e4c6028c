package train

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestAutoRadius: the automatic bound is 0.9999 up to 10000 samples (the quality tables' L =
// 1024 among them), 1 − 1/L beyond, and never closer to the unit circle than a MaxRadius may
// be.
func TestAutoRadius(t *testing.T) {
	for _, c := range []struct {
		length int
		want   float64
	}{
		{2, 0.9999}, {1024, 0.9999}, {9999, 0.9999},
		{32768, 1 - 1.0/32768}, {131072, 1 - 1.0/131072}, {MaxLength, 1 - 1.0/MaxLength},
		{1 << 40, 1 - 1e-10},
	} {
		if got := AutoRadius(c.length); got != c.want {
			t.Errorf("AutoRadius(%d) = %.17g, want %.17g", c.length, got, c.want)
		}
	}
}

// TestRadiusText: a bound is written with the digits that tell it from the unit circle.
func TestRadiusText(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want string
	}{
		{0.5, "0.5"}, {0.9999, "0.9999"}, {0.99999, "0.99999"}, {AutoRadius(32768), "0.999969"},
		{AutoRadius(131072), "0.9999924"}, {1 - 1e-10, "0.9999999999"},
	} {
		if got := RadiusText(c.r); got != c.want {
			t.Errorf("RadiusText(%.17g) = %s, want %s", c.r, got, c.want)
		}
	}
}

// TestParseMaxRadius: auto is 0 and a number itself, each written back as read; anything
// else is refused.
func TestParseMaxRadius(t *testing.T) {
	for _, c := range []struct {
		s string
		r float64
	}{{"auto", 0}, {"0.99999", 0.99999}, {"0.5", 0.5}} {
		r, err := ParseMaxRadius(c.s)
		if err != nil || r != c.r {
			t.Errorf("ParseMaxRadius(%q) = %v, %v, want %v", c.s, r, err, c.r)
		}
		if got := MaxRadiusText(r); got != c.s {
			t.Errorf("MaxRadiusText(%v) = %q, want %q", r, got, c.s)
		}
	}
	for _, s := range []string{"", "wide", "Auto"} {
		if _, err := ParseMaxRadius(s); err == nil {
			t.Errorf("ParseMaxRadius(%q) took it", s)
		}
	}
}

// TestAutoRadiusSettings: max_radius 0 under the radius constraint is auto, not refused;
// below 0 or beyond 1 − 1e-10 it still is.
func TestAutoRadiusSettings(t *testing.T) {
	s := DefaultSpec()
	if s.MaxRadius != 0 || s.CheckSettings() != nil {
		t.Fatalf("DefaultSpec: max_radius %g, %v; want 0 (auto), valid", s.MaxRadius, s.CheckSettings())
	}
	for _, r := range []float64{0, 0.5, 1 - 1e-10} {
		if err := CheckMaxRadius(r); err != nil {
			t.Errorf("max_radius %g: %v", r, err)
		}
	}
	for _, r := range []float64{-0.5, 1, 1 - 1e-11, math.NaN()} {
		s.MaxRadius = r
		var fe *FieldError
		if err := s.CheckSettings(); !errors.As(err, &fe) || fe.Field != "max_radius" {
			t.Errorf("max_radius %g: %v, want a max_radius FieldError", r, err)
		}
	}
}

// twoModes is a kernel of length samples of two real modes: 0.5·0.9ᵗ and the slow (1 − 3/L)ᵗ,
// a Hyena filter's slowest decay (exp(−δ·t/L), δ = ln 100/1.5 ≈ 3.07 for slow_decay_pct 1.5).
func twoModes(length int) []float64 {
	y := make([]float64, length)
	slow := 1 - 3/float64(length)
	for i := range y {
		y[i] = 0.5*math.Pow(0.9, float64(i)) + math.Pow(slow, float64(i))
	}
	return y
}

// TestAutoRadiusLongKernel: over 32768 samples the default spec bounds the poles by
// 1 − 1/32768 and says so in its report, so a kernel whose slowest mode is 1 − 3/L fits at
// order 2 to rounding (4.7e-12); under the constant 0.9999 the default held before, that
// mode was clipped and the fit ended at 0.014. An explicit bound is honoured as given and
// not reported.
func TestAutoRadiusLongKernel(t *testing.T) {
	const length = 32768
	y := [][]float64{twoModes(length)}
	auto, err := Run(t.Context(), Job{Spec: withOrder(DefaultSpec(), 2), Targets: y}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := auto.Report.AutoMaxRadius; got != 1-1.0/length {
		t.Errorf("auto: the report's bound %.17g, want 1 − 1/32768", got)
	}
	if got, want := auto.Report.AutoRadiusText(), "radius bound 0.999969 (auto: "+AutoRadiusRule+")"; got != want {
		t.Errorf("auto: the report says %q, want %q", got, want)
	}
	spec := withOrder(DefaultSpec(), 2)
	spec.MaxRadius = 0.9999
	fixed, err := Run(t.Context(), Job{Spec: spec, Targets: y}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Report.AutoMaxRadius != 0 || fixed.Report.AutoRadiusText() != "" {
		t.Errorf("max_radius 0.9999: the report's automatic bound %g, want none (0)", fixed.Report.AutoMaxRadius)
	}
	if r := fixed.Report.Channels[0].MaxPoleRadius; r >= 0.9999 {
		t.Errorf("max_radius 0.9999: a pole at %.9g, outside the bound", r)
	}
	// The two errors: what the slow mode's clipping costs, and rounding.
	if a, f := auto.Report.MaxRelError, fixed.Report.MaxRelError; !(a < 1e-8 && f > 1e-3) {
		t.Errorf("relative errors: auto %.3g, under 0.9999 %.3g; want the mode at 1 − 3/L fitted (< 1e-8) only by the automatic bound (> 1e-3 under 0.9999)", a, f)
	}
}

// TestAutoRadiusShortKernel: at L = 1024 the automatic bound is 0.9999 and every fit is the
// one of an explicit 0.9999, to the bit, by variable projection (a job and a ladder) and by
// the optimiser (the xavier init, whose training steps hold the rtf's poles within it).
func TestAutoRadiusShortKernel(t *testing.T) {
	targets := targetFamilies(1024, 2, 1)["hyena"]
	xavier := withOrder(quickSpec(ModelRTF, 6), 6)
	xavier.Init = "xavier"
	for name, spec := range map[string]Spec{"projection": withOrder(DefaultSpec(), 8), "optimiser": xavier} {
		explicit := spec
		explicit.MaxRadius = 0.9999
		auto, err := Run(t.Context(), Job{Spec: spec, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		fixed, err := Run(t.Context(), Job{Spec: explicit, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auto.Report.AutoMaxRadius != 0.9999 {
			t.Errorf("%s: the report's automatic bound %.17g, want 0.9999", name, auto.Report.AutoMaxRadius)
		}
		sameFilters(t, name, targets, auto, fixed)
	}
	l, err := FitLadder(t.Context(), Job{Spec: DefaultSpec(), Targets: targets}, []int{4, 8}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range l.Results {
		if r.Report.AutoMaxRadius != 0.9999 {
			t.Errorf("ladder order %d: the report's automatic bound %.17g, want 0.9999", r.Report.Order, r.Report.AutoMaxRadius)
		}
	}
}

// sameFilters holds two results' filters to the same responses, to the bit.
func sameFilters(t *testing.T, name string, targets [][]float64, a, b *Result) {
	t.Helper()
	for ch := range targets {
		n := len(targets[ch])
		if !slices.Equal(a.Filters[ch].Impulse(n), b.Filters[ch].Impulse(n)) {
			t.Errorf("%s channel %d: auto ends at %.17g, an explicit 0.9999 at %.17g, by another filter", name, ch, a.Report.Channels[ch].RelError, b.Report.Channels[ch].RelError)
		}
	}
}

// TestUnconstrainedBoundLongKernel: without the radius constraint the variable projection
// bounds its poles by the automatic rule too (AutoRadius of the kernels' length), so the
// kernel of TestAutoRadiusLongKernel fits at order 2 to rounding; under the constant 0.9999
// the unconstrained fit held before, its slow mode was clipped and the fit ended at 0.014.
func TestUnconstrainedBoundLongKernel(t *testing.T) {
	const length = 32768
	spec := withOrder(DefaultSpec(), 2)
	spec.Constraint = ConstraintNone
	res, err := Run(t.Context(), Job{Spec: spec, Targets: [][]float64{twoModes(length)}}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e, r := res.Report.MaxRelError, res.Report.Channels[0].MaxPoleRadius; !(e < 1e-8) || !(r > 0.9999 && r < AutoRadius(length)) {
		t.Errorf("constraint none: error %.3g, pole radius %.9g; want the mode at 1 − 3/L fitted (< 1e-8) within 1 − 1/L", e, r)
	}
	if res.Report.AutoMaxRadius != AutoRadius(length) {
		t.Errorf("constraint none: the report's automatic bound %.17g, want the bound its poles were kept within, 1 − 1/L", res.Report.AutoMaxRadius)
	}
}

// TestUnconstrainedBoundReported: without the radius constraint the report carries the bound
// the job's fits keep their poles within where one applies, AutoRadius of the kernels'
// length, so that the front ends say it as for the constraint's automatic bound: variable
// projection and the modal and rotation models (their parametrisation holds the poles
// within it); none for an rtf the optimiser trains (its coefficients are free) or under
// l1_montel. It was 0 for every job without the radius constraint.
func TestUnconstrainedBoundReported(t *testing.T) {
	const length = 20000
	y := make([]float64, length)
	for i := range y {
		y[i] = math.Pow(0.9, float64(i)) * math.Cos(0.3*float64(i))
	}
	for _, tc := range []struct {
		name string
		set  func(*Spec)
		want float64
	}{
		{"rtf by variable projection", func(s *Spec) {}, AutoRadius(length)},
		{"modal by variable projection", func(s *Spec) { s.Model = ModelModal }, AutoRadius(length)},
		{"modal, zeros", func(s *Spec) { s.Model, s.Init = ModelModal, InitZeros }, AutoRadius(length)},
		{"rotation", func(s *Spec) { s.Model = ModelRotation }, AutoRadius(length)},
		{"rtf, zeros (the paper's recipe)", func(s *Spec) { s.Init = InitZeros }, 0},
		{"rtf, l1_montel", func(s *Spec) { s.Init, s.Constraint = InitMontel, ConstraintL1Montel }, 0},
	} {
		spec := withOrder(DefaultSpec(), 2)
		spec.Constraint, spec.Steps, spec.Refine = ConstraintNone, 4, 2
		tc.set(&spec)
		res, err := Run(t.Context(), Job{Spec: spec, Targets: [][]float64{y}}, CPU{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := res.Report.AutoMaxRadius; got != tc.want {
			t.Errorf("%s: the report's bound %.17g, want %.17g", tc.name, got, tc.want)
		}
		if tc.want > 0 && !(res.Report.Channels[0].MaxPoleRadius <= tc.want) {
			t.Errorf("%s: pole radius %.17g beyond the bound reported", tc.name, res.Report.Channels[0].MaxPoleRadius)
		}
		if text := res.Report.AutoRadiusText(); (text != "") != (tc.want > 0) {
			t.Errorf("%s: %q", tc.name, text)
		}
	}
}
