package filters

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/numtest"
)

// checkHonest converts f into every form and checks that each result is either a clear error
// (wrapping ErrDefective or ErrIllConditioned, with a number in its message) or a filter whose
// impulse response is finite, matches f within what the report claims, and whose report
// warns whenever its error is large.
func checkHonest(t *testing.T, name string, f Filter) map[Form]Report {
	t.Helper()
	reports := map[Form]Report{}
	want := f.Impulse(512)
	for _, to := range Forms {
		out, rep, err := Convert(f, to)
		if err != nil {
			if !errors.Is(err, ErrDefective) && !errors.Is(err, ErrIllConditioned) {
				t.Errorf("%s → %s: unexpected error kind: %v", name, to, err)
			}
			if !strings.ContainsAny(err.Error(), "0123456789") {
				t.Errorf("%s → %s: error carries no number: %v", name, to, err)
			}
			continue
		}
		reports[to] = rep
		got := out.Impulse(512)
		for i, v := range got {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s → %s: impulse[%d] = %v", name, to, i, v)
			}
		}
		for _, v := range []float64{rep.Condition, rep.RelError} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s → %s: report has a non-finite number: %+v", name, to, rep)
			}
		}
		e := relErr(got, want)
		if e > 1e-9 && e > 10*rep.RelError {
			t.Errorf("%s → %s: error %.3g but the report claims %.3g", name, to, e, rep.RelError)
		}
		if rep.RelError > MaxRelError && len(rep.Warnings) == 0 {
			t.Errorf("%s → %s: error %.3g without a warning", name, to, rep.RelError)
		}
	}
	return reports
}

func mustDense(t *testing.T, a [][]float64, b, c []float64, d float64) *Dense {
	t.Helper()
	f, err := NewDense(a, b, c, d)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDefectiveSystems(t *testing.T) {
	jordan := mustDense(t, [][]float64{{0.5, 1}, {0, 0.5}}, []float64{0, 1}, []float64{1, 0}, 0.25)
	reps := checkHonest(t, "jordan", jordan)
	_, _, err := ToDiagonal(jordan)
	var ce *ConditionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrDefective) {
		t.Fatalf("diagonalising a Jordan block: got %v, want a ConditionError wrapping ErrDefective", err)
	}
	if ce.Condition <= DiagonalizeCondLimit {
		t.Errorf("condition %v should exceed the limit", ce.Condition)
	}
	// The forms that can hold a repeated pole must succeed exactly.
	for _, to := range []Form{FormTF, FormCompanion, FormZPK, FormDense} {
		if rep, ok := reps[to]; !ok || rep.RelError > 1e-12 {
			t.Errorf("jordan → %s: %+v (ok=%v)", to, rep, ok)
		}
	}
	z, _, _ := ToZPK(jordan)
	if len(z.Poles) != 2 || cmplxDist(z.Poles[0], 0.5) > 1e-7 || cmplxDist(z.Poles[1], 0.5) > 1e-7 {
		t.Errorf("jordan poles %v, want 0.5 twice", z.Poles)
	}
	checkHonest(t, "jordan zpk", z)

	// A pure delay of 3 samples: A nilpotent, every pole at 0.
	delay, _ := NewCompanion([]float64{0, 0, 0}, []float64{0, 0, 1}, 0, false)
	checkHonest(t, "delay", delay)
	dz, _, err := ToZPK(delay)
	if err != nil || len(dz.Zeros) != 0 || dz.Gain != 1 {
		t.Errorf("delay → zpk: %+v, %v; want no zeros and gain 1", dz, err)
	}
	if h := dz.Impulse(5); h[3] != 1 || h[2] != 0 || h[4] != 0 {
		t.Errorf("delay impulse %v", h)
	}
}

func cmplxDist(a complex128, b float64) float64 { return math.Hypot(real(a)-b, imag(a)) }

func TestUnstableAndMarginal(t *testing.T) {
	th := 0.3
	osc := mustDense(t, [][]float64{{math.Cos(th), -math.Sin(th)}, {math.Sin(th), math.Cos(th)}}, []float64{1, 0}, []float64{0, 1}, 0)
	for to, rep := range checkHonest(t, "marginal", osc) {
		if !hasWarning(rep, "not stable") {
			t.Errorf("marginal → %s: no stability warning in %v", to, rep.Warnings)
		}
	}
	rho, _ := SpectralRadius(osc)
	if math.Abs(rho-1) > 1e-15 {
		t.Errorf("spectral radius %v, want 1", rho)
	}
	// A^k·e₁ = (cos kθ, sin kθ), so h[t] = sin((t-1)θ).
	h := osc.Impulse(100)
	for i := 1; i < 100; i++ {
		if math.Abs(h[i]-math.Sin(float64(i-1)*th)) > 1e-13 {
			t.Fatalf("h[%d] = %v, want sin(%dθ)", i, h[i], i-1)
		}
	}

	unstable := mustDense(t, [][]float64{{1.05, 0.2, 0}, {0, 0.9, 0.1}, {0.1, 0, -0.5}}, []float64{1, 1, 1}, []float64{1, -1, 0.5}, 0.1)
	for to, rep := range checkHonest(t, "unstable", unstable) {
		if !hasWarning(rep, "not stable") {
			t.Errorf("unstable → %s: no stability warning", to)
		}
	}

	// An integrator: a pole exactly at z = 1, which the unit-circle sampling must not hit.
	integ, _ := NewTransferFunction([]float64{-1}, []float64{1}, 0)
	checkHonest(t, "integrator", integ)
	d, _, err := ToDense(integ)
	if err != nil {
		t.Fatal(err)
	}
	tf, rep, err := ToTF(d)
	if err != nil || tf.Den[0] != -1 && math.Abs(tf.Den[0]+1) > 1e-15 || rep.RelError > 1e-15 {
		t.Errorf("integrator round trip: %+v %+v %v", tf, rep, err)
	}
}

func hasWarning(r Report, s string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

func TestUncontrollableAndUnobservable(t *testing.T) {
	// The mode 0.6 is not reached by B; the mode -0.4 is not seen by C.
	f := mustDense(t, [][]float64{{0.6, 0, 0}, {0, -0.4, 0}, {0, 0, 0.8}}, []float64{0, 1, 1}, []float64{1, 0, 1}, 0)
	checkHonest(t, "uncontrollable", f)
	d, _, err := ToDiagonal(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range d.Poles {
		if real(p) != 0.8 && d.Residues[i] != 0 {
			t.Errorf("pole %v has residue %v, want 0 (uncontrollable or unobservable)", p, d.Residues[i])
		}
	}
	// The hidden modes are zeros too (they cancel in H).
	z, _ := Zeros(f)
	if numtest.RootsRelDist(z, []complex128{0.6, -0.4}) > 1e-12 {
		t.Errorf("zeros %v, want 0.6 and -0.4", z)
	}
}

func TestOrderZero(t *testing.T) {
	gain := 1.5
	forms := []Filter{
		&Dense{D: gain}, &Diagonal{H0: gain}, &Companion{H0: gain}, &TransferFunction{H0: gain},
		&ZPK{H0: gain}, &Rotation{D: gain},
	}
	for _, f := range forms {
		if err := f.Validate(); err != nil {
			t.Fatalf("%s: %v", f.Form(), err)
		}
		for _, to := range Forms {
			out, rep, err := Convert(f, to)
			if err != nil {
				t.Fatalf("%s → %s: %v", f.Form(), to, err)
			}
			h := out.Impulse(4)
			if h[0] != gain || h[1] != 0 || h[3] != 0 || out.Order() != 0 || rep.RelError != 0 {
				t.Errorf("%s → %s: h = %v, order %d, report %+v", f.Form(), to, h, out.Order(), rep)
			}
			if r := out.FreqResponse([]float64{0, 1}); r[0] != complex(gain, 0) || r[1] != complex(gain, 0) {
				t.Errorf("%s → %s: H = %v", f.Form(), to, r)
			}
		}
	}
	// ZPK of a pure gain keeps it exactly.
	z, _, _ := ToZPK(&Dense{D: gain})
	if h := z.Impulse(1); h[0] != gain {
		t.Errorf("zpk of a gain: %+v", z)
	}
}

func TestInvalidInput(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		make func() error
	}{
		{"NaN in A", func() error { _, err := NewDense([][]float64{{nan}}, []float64{1}, []float64{1}, 0); return err }},
		{"Inf in D", func() error { _, err := NewDense(nil, nil, nil, math.Inf(1)); return err }},
		{"ragged A", func() error {
			_, err := NewDense([][]float64{{1, 2}, {3}}, []float64{1, 1}, []float64{1, 1}, 0)
			return err
		}},
		{"short B", func() error { _, err := NewDense([][]float64{{1}}, nil, []float64{1}, 0); return err }},
		{"residue count", func() error { _, err := NewDiagonal([]complex128{0.5}, nil, 0); return err }},
		{"lonely complex pole", func() error {
			_, err := NewDiagonal([]complex128{0.5i}, []complex128{1}, 0)
			return err
		}},
		{"unpaired residues", func() error {
			_, err := NewDiagonal([]complex128{0.5i, -0.5i}, []complex128{1, 2}, 0)
			return err
		}},
		{"complex residue of a real pole", func() error {
			_, err := NewDiagonal([]complex128{0.5}, []complex128{1i}, 0)
			return err
		}},
		{"tf lengths", func() error { _, err := NewTransferFunction([]float64{1, 2}, []float64{1}, 0); return err }},
		{"improper zpk", func() error { _, err := NewZPK([]complex128{1, 2}, []complex128{0.5}, 1, 0); return err }},
		{"rotation size", func() error {
			_, err := NewRotation([][]float64{{1}}, []RotationBlock{{1, 1}}, nil, []float64{1, 1}, []float64{1, 1}, 0)
			return err
		}},
		{"singular P", func() error {
			_, err := NewRotation([][]float64{{1, 1}, {1, 1}}, []RotationBlock{{0.5, 1}}, nil, []float64{1, 1}, []float64{1, 1}, 0)
			return err
		}},
		{"order limit", func() error {
			_, err := NewTransferFunction(make([]float64, MaxOrder+1), make([]float64, MaxOrder+1), 0)
			return err
		}},
		{"negative dt", func() error {
			_, err := (&Continuous{System: &Dense{}, Dt: -1, Method: ZOH}).Discretize()
			return err
		}},
		{"unknown method", func() error {
			_, err := (&Continuous{System: &Dense{}, Dt: 1, Method: "rk4"}).Discretize()
			return err
		}},
		{"unknown form", func() error { _, err := ParseForm("ss"); return err }},
		{"mixed bank", func() error { _, err := NewBank([]Filter{&Dense{}, &Diagonal{}}); return err }},
		{"s4 tf", func() error { _, err := FromS4(&TransferFunction{}); return err }},
	}
	for _, c := range cases {
		err := c.make()
		if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrIllConditioned) {
			t.Errorf("%s: got %v, want an ErrInvalid", c.name, err)
		}
	}
}

// TestUnrepresentableTF: poles of a ring system with clustered angles cannot be held by
// float64 polynomial coefficients; the report must say so rather than pass silently.
func TestUnrepresentableTF(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1064))
	d := ringSystem(rng, 64, 0.9)
	_, rep, err := ToTF(d)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RelError < 1 || !hasWarning(rep, "cannot hold these poles") {
		t.Errorf("report %+v", rep)
	}
	// The modal forms hold the same filter exactly.
	if _, rep, err := ToDiagonal(d); err != nil || rep.RelError > 1e-13 {
		t.Errorf("diagonal: %+v %v", rep, err)
	}
}

// TestDiscretizeOverflow: an infinite ‖[A B]·dt‖ made the matrix exponential square forever
// (found by fuzzing the file reader); now it is a clear error.
func TestDiscretizeOverflow(t *testing.T) {
	sys := mustDense(t, [][]float64{{1e300, 1e300}, {1e300, 1e300}}, []float64{1, 0}, []float64{1, 1}, 0)
	_, err := (&Continuous{System: sys, Dt: 1e300, Method: ZOH}).Discretize()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("got %v", err)
	}
	// FromS4 of a system whose CA overflows is rejected, not returned with Inf inside.
	big := mustDense(t, [][]float64{{1e300}}, []float64{1}, []float64{1e300}, 0)
	if _, err := FromS4(big); !errors.Is(err, ErrInvalid) {
		t.Errorf("FromS4 overflow: got %v", err)
	}
}

// TestDiscretizeExpOverflow: a discretisation that float64 cannot hold says which number
// overflows, as a number, where it named the Inf and NaN it had made ("poles[0] is
// (+Inf+NaNi)", "A row[0] is +Inf"); a step just inside the range is discretised.
func TestDiscretizeExpOverflow(t *testing.T) {
	diag := func(poles, res []complex128) *Diagonal {
		d, err := NewDiagonal(poles, res, 0)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name string
		c    Continuous
		want string
	}{
		{"diagonal zoh", Continuous{System: diag([]complex128{1000}, []complex128{1}), Dt: 1, Method: ZOH}, "e^(Δt·λ) overflows float64 at Δt·λ = 1000"},
		{"dense zoh", Continuous{System: mustDense(t, [][]float64{{1000}}, []float64{1}, []float64{1}, 0), Dt: 1, Method: ZOH}, "Δt·Re λ reaches 1000"},
		{"residue", Continuous{System: diag([]complex128{700 + 5i, 700 - 5i}, []complex128{1e300, 1e300}), Dt: 1, Method: ZOH}, "residue of pole 700+5j overflows"},
		{"bilinear", Continuous{System: diag([]complex128{1e300}, []complex128{1}), Dt: 1e10, Method: Bilinear}, "Δt·λ overflows float64 at pole 1e+300"},
	} {
		_, err := c.c.Discretize()
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "NaN") || strings.Contains(err.Error(), "Inf") {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := (&Continuous{System: diag([]complex128{700}, []complex128{1}), Dt: 1, Method: ZOH}).Discretize(); err != nil {
		t.Errorf("Δt·λ = 700: %v", err)
	}
}

// TestZeroNumerator: the RTF zero init (a = b = 0, every pole at 0) is the constant h0 and
// converts to every form; repeated poles with non-zero residues still fail cleanly.
func TestZeroNumerator(t *testing.T) {
	f, _ := NewTransferFunction(make([]float64, 4), make([]float64, 4), 0.5)
	for _, to := range Forms {
		out, rep, err := Convert(f, to)
		if err != nil {
			t.Errorf("zero tf → %s: %v", to, err)
			continue
		}
		if h := out.Impulse(6); h[0] != 0.5 || h[1] != 0 || h[5] != 0 || rep.RelError != 0 {
			t.Errorf("zero tf → %s: h = %v, report %+v", to, h, rep)
		}
	}
	avg, _ := NewTransferFunction([]float64{0, 0, 0}, []float64{0.25, 0.25, 0.25}, 0.25)
	if _, _, err := ToDiagonal(avg); !errors.Is(err, ErrDefective) {
		t.Errorf("moving average → diagonal: %v", err)
	}
}

// TestZerosOfOffsetZPK: H = 1 + 1/(z - 0.5) = (z + 0.5)/(z - 0.5) has its zero at -0.5, not
// among the stored (empty) zeros.
func TestZerosOfOffsetZPK(t *testing.T) {
	f, _ := NewZPK(nil, []complex128{0.5}, 1, 1)
	z, err := Zeros(f)
	if err != nil || len(z) != 1 || cmplxDist(z[0], -0.5) > 1e-14 {
		t.Errorf("zeros %v, %v; want [-0.5]", z, err)
	}
}

// TestMarginalWording: a pole at 1 − 1e-12 reads as itself and as within 1e-10 of the unit
// circle (a conversion's warning said "spectral radius 1"); counts of one are singular
// ("only 1 poles" was printed).
func TestMarginalWording(t *testing.T) {
	for _, c := range []struct {
		r            float64
		modulus, say string
	}{
		{1 - 1e-12, "0.999999999999", "within 1e-10 of the unit circle"},
		{1 + 1e-12, "1.000000000001", "within 1e-10 of the unit circle"},
		{1, "1", "on the unit circle"},
		{0.5, "0.5", "inside the unit circle"},
		{0.99999, "0.99999", "inside the unit circle"},
		{1.5, "1.5", "outside the unit circle"},
	} {
		if got := FormatModulus(c.r); got != c.modulus {
			t.Errorf("FormatModulus(%v) = %q, want %q", c.r, got, c.modulus)
		}
		if got := CirclePlace(c.r); got != c.say {
			t.Errorf("CirclePlace(%v) = %q, want %q", c.r, got, c.say)
		}
	}
	_, rep, err := ToTF(&ZPK{Poles: []complex128{1 - 1e-12}, Gain: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(w, "spectral radius 0.999999999999, within 1e-10 of the unit circle") {
		t.Errorf("warnings %q", w)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{(&ZPK{Zeros: []complex128{0.5, 0.2}, Poles: []complex128{0.5}, Gain: 1}).Validate(), "2 zeros but only 1 pole:"},
		{func() error { _, err := NewDiagonalRealPart([]complex128{0.5}, []complex128{1, 2}, 0); return err }(), "1 pole and 2 residues"},
		{func() error {
			_, err := NewRotationFromRotRNN([]RotRNNHead{{M: [][]float64{{0, 1, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, Theta: []float64{0.1}}}, nil, nil, 0)
			return err
		}(), "head 0: 1 angle, want 2"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
}

// TestMaxStableStep: GBT(α < 1/2) keeps a stable pole λ inside the unit circle exactly for
// Δt < 2|Re λ|/((1 − 2α)|λ|²): the discretised filter's spectral radius is below 1 just under
// the step MaxStableStep gives and above 1 just over it; the A-stable methods give +Inf.
func TestMaxStableStep(t *testing.T) {
	sys, err := NewDiagonal([]complex128{complex(-0.5, 20), complex(-0.5, -20), -3}, []complex128{1, 1, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method Discretization
		alpha  float64
	}{{Euler, 0}, {GBT, 0.25}} {
		cont := &Continuous{System: sys, Method: c.method, Alpha: c.alpha}
		step, err := cont.MaxStableStep()
		if err != nil {
			t.Fatal(err)
		}
		want := 2 * 0.5 / ((1 - 2*c.alpha) * (0.25 + 400))
		if math.Abs(step-want) > 1e-12*want {
			t.Errorf("%s α = %g: step %v, want %v", c.method, c.alpha, step, want)
		}
		for _, k := range []float64{0.999, 1.001} {
			cont.Dt = k * step
			d, err := cont.Discretize()
			if err != nil {
				t.Fatal(err)
			}
			rho, err := SpectralRadius(d)
			if err != nil {
				t.Fatal(err)
			}
			if (rho < 1) != (k < 1) {
				t.Errorf("%s α = %g at %g × the step: ρ = %v", c.method, c.alpha, k, rho)
			}
		}
	}
	for _, m := range []Discretization{Bilinear, ZOH, BackwardEuler} {
		if s, err := (&Continuous{System: sys, Method: m}).MaxStableStep(); err != nil || !math.IsInf(s, 1) {
			t.Errorf("%s: %v, %v", m, s, err)
		}
	}
}
