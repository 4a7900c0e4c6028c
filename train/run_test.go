package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/presets"
)

func quickSpec(model Model, n int) Spec {
	s := DefaultSpec()
	s.Model, s.Order, s.Steps = model, n, 60
	return s
}

func iirTargets(length, channels int) [][]float64 { return targetFamilies(length, channels, 3)["iir"] }

func TestDeterministic(t *testing.T) {
	targets := targetFamilies(256, 3, 5)["hyena"]
	for _, model := range Models {
		s := quickSpec(model, 6)
		s.Init = "xavier"
		a, err := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ch := range targets {
			if !reflect.DeepEqual(a.Filters[ch].Impulse(64), b.Filters[ch].Impulse(64)) {
				t.Errorf("%s: channel %d differs between two runs with one seed", model, ch)
			}
		}
		s.Seed++
		c, _ := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil)
		if reflect.DeepEqual(a.Filters[0].Impulse(64), c.Filters[0].Impulse(64)) {
			t.Errorf("%s: another seed gave the same result", model)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := quickSpec("rtf", 8)
	s.Steps = 100000
	events := 0
	res, err := Run(ctx, Job{Spec: s, Targets: iirTargets(512, 2)}, CPU{}, func(p Progress) {
		events++
		cancel() // the first event cancels the job
	})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v; want context.Canceled and no result", res, err)
	}
	if events != 1 {
		t.Errorf("%d progress events after cancelling", events)
	}
}

func TestProgress(t *testing.T) {
	s := quickSpec("modal", 4)
	s.Init, s.Steps = "xavier", 40
	var got []Progress
	_, err := Run(context.Background(), Job{Spec: s, Targets: iirTargets(256, 1)}, CPU{}, func(p Progress) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || len(got) > s.Steps {
		t.Fatalf("%d progress events for %d steps", len(got), s.Steps)
	}
	last := got[len(got)-1]
	if last.Step != s.Steps || last.Steps != s.Steps || last.ETA != 0 || math.IsNaN(last.Loss) {
		t.Errorf("last event %+v", last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Step <= got[i-1].Step {
			t.Errorf("steps not increasing: %d then %d", got[i-1].Step, got[i].Step)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := iirTargets(128, 1)
	cases := map[string]Job{
		"empty target":  {Spec: quickSpec("rtf", 4)},
		"NaN":           {Spec: quickSpec("rtf", 4), Targets: [][]float64{{1, math.NaN(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
		"order ≥ L":     {Spec: quickSpec("modal", 200), Targets: good},
		"rtf too long":  {Spec: quickSpec("rtf", 64), Targets: good},
		"unknown model": {Spec: quickSpec("lstm", 4), Targets: good},
		"ragged bank":   {Spec: quickSpec("rtf", 4), Targets: [][]float64{good[0], good[0][:100]}},
		"bad lr": func() Job {
			s := quickSpec("rtf", 4)
			s.Optimizer.LR = -1
			return Job{Spec: s, Targets: good}
		}(),
		"montel on modal": func() Job {
			s := quickSpec("modal", 4)
			s.Constraint = "l1_montel"
			return Job{Spec: s, Targets: good}
		}(),
	}
	for name, job := range cases {
		if _, err := Run(context.Background(), job, CPU{}, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
}

// TestDistillRecoversIIR: a target that is exactly an order-6 filter is recovered to high
// accuracy by every model, and every result is stable.
func TestDistillRecoversIIR(t *testing.T) {
	targets := iirTargets(1024, 2)
	for _, model := range Models {
		s := DefaultSpec()
		s.Model, s.Order, s.Steps = model, 6, 100
		res, err := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// ERA recovers an exact order-6 response to rounding; training must not lose it.
		if res.Report.MaxRelError > 1e-8 || !res.Report.Stable {
			t.Errorf("%s: %+v", model, res.Report)
		}
		for ch, f := range res.Filters {
			want := map[Model]filters.Form{"rtf": filters.FormTF, "modal": filters.FormDiagonal, "rotation": filters.FormRotation}[model]
			if f.Form() != want {
				t.Errorf("%s: channel %d is %s", model, ch, f.Form())
			}
		}
	}
}

// TestMontelStaysInside: the l1 Montel parametrisation keeps Σ|aᵢ| ≤ 1, hence stability.
func TestMontelStaysInside(t *testing.T) {
	s := quickSpec("rtf", 8)
	s.Init, s.Constraint, s.Steps = "montel", "l1_montel", 200
	s.Optimizer.LR = 1e-2
	res, err := Run(context.Background(), Job{Spec: s, Targets: targetFamilies(512, 2, 9)["windowed-sinc"]}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for ch, f := range res.Filters {
		l1 := 0.0
		for _, a := range f.(*filters.TransferFunction).Den {
			l1 += math.Abs(a)
		}
		if l1 > 1+1e-12 || !res.Report.Channels[ch].Stable {
			t.Errorf("channel %d: Σ|a| = %v, report %+v", ch, l1, res.Report.Channels[ch])
		}
	}
}

func TestDelayTask(t *testing.T) {
	task, err := DelayTask(2048, 16, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSpec()
	s.Model, s.Order, s.Steps = "rtf", 16, 300
	s.Target.Length = 64
	res, err := Run(context.Background(), Job{Spec: s, Task: task}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A delay of 16 is exact for an order-16 RTF (b = e₁₆): the fit must get most of the way.
	if res.Report.MaxRelError > 0.3 {
		t.Errorf("delay: relative prediction error %.3g", res.Report.MaxRelError)
	}
	if _, err := DelayTask(100, 100, 0.5, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("delay ≥ length: %v", err)
	}
}

// TestCheckTargetsEnergy: kernels whose Σh² leaves [MinEnergy, MaxEnergy] are refused (at
// 1e160 the fit's losses were NaN, the report +Inf and the deployed filter's residues 4e304);
// a zero kernel and the bounds' neighbourhood inside are fitted.
func TestCheckTargetsEnergy(t *testing.T) {
	kernel := func(scale float64) []float64 {
		k := make([]float64, 16)
		for i := range k {
			k[i] = scale * math.Pow(0.5, float64(i))
		}
		return k
	}
	for _, tc := range []struct {
		k  []float64
		ok bool
	}{
		{kernel(1e160), false},
		{kernel(1e-160), false},
		{[]float64{1e-300, 1e-310, 0, 0}, false}, // Σh² underflows to 0
		{kernel(1e149), true},
		{kernel(1e-149), true},
		{make([]float64, 16), true},
	} {
		err := CheckTargets([][]float64{tc.k})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("h[0] = %g: %v, want ok %v", tc.k[0], err, tc.ok)
		}
		// The refusal gives the kernel's norm (Σh² itself would read 0 or +Inf here).
		if want := fmt.Sprintf("‖h‖₂ = %.3g", floats.Norm(tc.k, 2)); err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("h[0] = %g: %v, want it to say %s", tc.k[0], err, want)
		}
	}
	if _, err := Run(t.Context(), Job{Spec: withOrder(DefaultSpec(), 2), Targets: [][]float64{kernel(1e160)}}, CPU{}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Run on kernels of 1e160: %v, want ErrInvalid", err)
	}
}

// TestImpulseTargetsOverflow: the impulse response of an unstable filter that overflows within
// the distillation's length is refused with the distillation's advice, its length (the
// workbench gave its plots' "shorten L with <", QA finding 6 of the workbench; ssmlab
// distill "kernel 0 sample 237 is +Inf"): the first sample that overflows, counted here.
func TestImpulseTargetsOverflow(t *testing.T) {
	grow, err := filters.NewDiagonal([]complex128{20}, []complex128{1}, 0) // h[t] = 20^(t-1)
	if err != nil {
		t.Fatal(err)
	}
	decay, err := filters.NewDiagonal([]complex128{0.5}, []complex128{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := 1 + int(math.Floor(math.Log(math.MaxFloat64)/math.Log(20))) + 1 // 20^(t-1) > MaxFloat64
	if h := grow.Impulse(first + 1); math.IsInf(h[first-1], 0) || !math.IsInf(h[first], 0) {
		t.Fatalf("h[%d] = %g, h[%d] = %g: the first overflow is elsewhere", first-1, h[first-1], first, h[first])
	}
	for _, tc := range []struct {
		chans []filters.Filter
		want  string
	}{
		{[]filters.Filter{grow}, fmt.Sprintf("invalid job: the impulse response overflows at sample %d: the filter is unstable (spectral radius 20); distil it over a length of at most %d, or first move the poles outside the unit circle inside it", first, first)},
		{[]filters.Filter{decay, grow}, fmt.Sprintf("invalid job: channel 1's impulse response overflows at sample %d:", first)},
	} {
		_, err := ImpulseTargets(tc.chans, 1024)
		var oe *OverflowError
		if !errors.As(err, &oe) || !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%d channels: %v, want an OverflowError %q", len(tc.chans), err, tc.want)
		}
	}
	// an overflow at sample 1: before any length a distillation may have, where the poles
	// alone can be fixed; and a stable filter's, whose gain is what is wrong
	for _, tc := range []struct {
		a    float64
		want string
	}{
		{2, "overflows at sample 1: the filter is unstable (spectral radius 2); first move the poles outside the unit circle inside it"},
		{0.5, "overflows at sample 1: the filter's gain is too large (its spectral radius is 0.5); scale it down"},
	} {
		huge, err := filters.NewDense([][]float64{{tc.a}}, []float64{1e200}, []float64{1e200}, 0) // h[1] = 1e400
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ImpulseTargets([]filters.Filter{huge}, 64); err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("A = %g: %v, want %q", tc.a, err, tc.want)
		}
	}
	// within the length that stops before it, the responses themselves
	got, err := ImpulseTargets([]filters.Filter{decay, grow}, first)
	if err != nil || !reflect.DeepEqual(got, [][]float64{decay.Impulse(first), grow.Impulse(first)}) {
		t.Errorf("at length %d: %v", first, err)
	}
}

// TestTaskErrorsNameTheCause: a bad task names what is wrong, not what follows from it: a
// delay task of length 0 said "delay 64 outside [0, 0)", input and output sequences of
// different lengths (or none) "kernel length 256 must be in [2, 3]".
func TestTaskErrorsNameTheCause(t *testing.T) {
	if _, err := DelayTask(0, 64, 0.5, 1); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "length 0 outside") {
		t.Errorf("length 0: %v", err)
	}
	s := DefaultSpec()
	s.Target.Length = 256
	for _, tc := range []struct {
		u, y []float64
		want string
	}{
		{[]float64{1, 2, 3}, []float64{1, 2}, "3 input samples and 2 output samples"},
		{[]float64{}, []float64{}, "sequences of 0 samples"},
		// It fitted, and reported the start's error as the fit's.
		{make([]float64, 300), make([]float64, 300), "sequence 0's input is all zero"},
	} {
		job := Job{Spec: s, Task: &Task{Name: "sysid", U: [][]float64{tc.u}, Y: [][]float64{tc.y}}}
		if _, err := Run(t.Context(), job, CPU{}, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d/%d samples: %v, want %q", len(tc.u), len(tc.y), err, tc.want)
		}
	}
}

func TestSysID(t *testing.T) {
	truth, _ := filters.NewTransferFunction([]float64{-1.2, 0.5}, []float64{0.3, 0.1}, 0.2)
	rng := channelRNG(3, 0)
	u := make([]float64, 2000)
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	h := truth.Impulse(len(u))
	y := make([]float64, len(u))
	for t := range y {
		for s := 0; s <= t; s++ {
			y[t] += h[s] * u[t-s]
		}
	}
	s := DefaultSpec()
	s.Model, s.Order, s.Steps = "modal", 2, 200
	s.Target.Length = 128
	res, err := Run(context.Background(), Job{Spec: s, Task: &Task{Name: "sysid", U: [][]float64{u}, Y: [][]float64{y}}}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.MaxRelError > 1e-3 {
		t.Errorf("sysid: relative prediction error %.3g", res.Report.MaxRelError)
	}
}

func TestSuggestOrder(t *testing.T) {
	// The iir family is exactly order 6: its Hankel singular values vanish past the sixth.
	if s := SuggestOrder(iirTargets(1024, 3), 1e-8, 64); !s.OK || s.Order != 6 {
		t.Errorf("suggested %v, want 6", s)
	}
	if s := SuggestOrder(targetFamilies(1024, 1, 1)["decaying-noise"], 1e-8, 8); s.OK || s.Order != 8 || !(s.Bound > 1e-8/SuggestMargin) {
		t.Errorf("decaying noise at 1e-8 up to order 8: %v; want not ok, tried up to 8, its bound there", s)
	}
	// The search ends at half the bound's Hankel size (24 for 100 samples) and says how far it
	// looked; one kernel that does not reduce settles it for a bank of kernels that do.
	bank := append(iirTargets(100, 3), targetFamilies(100, 1, 1)["decaying-noise"]...)
	if s := SuggestOrder(bank, 1e-8, MaxSuggestOrder); s.OK || s.Order != 24 || s.Kernel != 3 {
		t.Errorf("iir and noise kernels of 100 samples: %v; want not ok, tried up to 24, on kernel 3", s)
	}
}

// TestSuggestOrderTrained checks issue 23 item 5's suggestion on the committed trained
// targets (16 channels of layer 0 of each model) at relative error 1e-2: a finite order,
// the smallest at which every kernel's lower bound is at most tol/SuggestMargin, at most 64
// on the drawn-lag layer (whose mean bound is 1.0e-4 at n = 64) — ERA's truncations, which
// the suggestion rested on before, gave "above 511" on both; the fixed-lag layer needs more
// (bound 0.0026 at n = 64 on average, 0.0079 on its hardest channel, so no order-64 filter
// is within 3× of 1e-2 there). The fit at that order meets the tolerance on average; a channel
// above it is more than SuggestMargin× its bound (logged), which the suggestion's line says
// can happen and a checkpoint's --order auto warning names.
func TestSuggestOrderTrained(t *testing.T) {
	const tol = 1e-2
	for _, c := range []struct {
		task string
		most int // the largest order the suggestion may be
	}{{"drawn", 64}, {"fixed", 128}} {
		targets, err := trainedFilters("../testdata/trained/copy-"+c.task+"-layer0.npy", 16)
		if err != nil {
			t.Fatal(err)
		}
		s := SuggestOrder(targets, tol, MaxSuggestOrder)
		if !s.OK || s.Order < 1 || s.Order > c.most {
			t.Fatalf("%s: %v; want an order up to %d", c.task, s, c.most)
		}
		if !(s.Bound > 0 && s.Bound <= tol/SuggestMargin) {
			t.Errorf("%s: the bound at the suggested order %d is %.3g, not in (0, tol/%d]", c.task, s.Order, s.Bound, SuggestMargin)
		}
		if testing.Short() {
			continue
		}
		res, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), s.Order), Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Report
		if r.MeanRelError > tol {
			t.Errorf("%s: the fit at the suggested order %d has mean error %.3g > %g", c.task, s.Order, r.MeanRelError, tol)
		}
		missed := 0
		for ch, cr := range r.Channels {
			if cr.RelError > tol {
				missed++
				t.Logf("%s channel %d: %.3g at order %d, %.1f× its bound %.3g", c.task, ch, cr.RelError, s.Order, cr.RelError/cr.LowerBound, cr.LowerBound)
			}
		}
		t.Logf("%s, tol %g: suggested %v; fit mean %.3g, worst %.3g, %d of %d channels above tol", c.task, tol, s, r.MeanRelError, r.MaxRelError, missed, len(r.Channels))
	}
}

// TestProjectionForm checks the form an rtf fitted by variable projection is deployed in:
// Hyena kernels whose slow poles cluster near z = 1 (the tutorial's, w = 4) fit far better as
// poles and residues than an order-8 transfer function's float64 coefficients allow, so the
// bank is diagonal and the note says why with the numbers; an exactly representable order-6
// target is a transfer function.
func TestProjectionForm(t *testing.T) {
	spec := presets.DefaultHyena(1024, 4)
	spec.W = 4
	hy, err := spec.Kernels(presets.NewRand(1))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 8), Targets: hy}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hyena: %s; mean error %.3g", res.Report.FormNote, res.Report.MeanRelError)
	if res.Report.Form != "diagonal" || !strings.Contains(res.Report.FormNote, "lose the fit") {
		t.Errorf("hyena: form %q, note %q", res.Report.Form, res.Report.FormNote)
	}
	for ch, f := range res.Filters {
		if f.Form() != filters.FormDiagonal {
			t.Errorf("hyena channel %d: %s", ch, f.Form())
		}
	}
	res, err = Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 8), Targets: iirTargets(512, 2)}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iir: %s; mean error %.3g", res.Report.FormNote, res.Report.MeanRelError)
	if res.Report.Form != "tf" || !(res.Report.MaxRelError < 1e-9) {
		t.Errorf("iir: form %q, note %q, worst error %.3g", res.Report.Form, res.Report.FormNote, res.Report.MaxRelError)
	}
	for ch, f := range res.Filters {
		if f.Form() != filters.FormTF {
			t.Errorf("iir channel %d: %s", ch, f.Form())
		}
	}
}

// TestDistillOrderStartsAtOne: a distillation of order 0 is refused, saying that its orders
// start at 1 (it wrote a gain h0 = h[0] and exited as a fit); a training task of order 0
// still runs, since a gain can fit it (a delay of 0).
func TestDistillOrderStartsAtOne(t *testing.T) {
	_, err := Run(t.Context(), Job{Spec: withOrder(DefaultSpec(), 0), Targets: iirTargets(64, 1)}, CPU{}, nil)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "starts at 1") {
		t.Errorf("a distillation of order 0: %v, want ErrInvalid saying orders start at 1", err)
	}
	task, err := DelayTask(256, 0, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := withOrder(DefaultSpec(), 0)
	s.Target.Length = 16
	res, err := Run(t.Context(), Job{Spec: s, Task: task}, CPU{}, nil)
	if err != nil {
		t.Fatalf("a delay task of order 0: %v", err)
	}
	if res.Report.MaxRelError > 1e-6 {
		t.Errorf("a delay of 0 at order 0: relative error %.3g, want a gain's exact fit", res.Report.MaxRelError)
	}
}

// TestLadderOrdersChecked: FitLadder refuses a ladder order outside [1, filters.MaxOrder]
// with CheckLadderOrders' words, which distill --orders and the workbench say too.
func TestLadderOrdersChecked(t *testing.T) {
	targets := iirTargets(64, 1)
	for _, orders := range [][]int{{0, 4}, {4, filters.MaxOrder + 1}, {-1}, nil} {
		want := CheckLadderOrders(orders)
		if want == nil || !errors.Is(want, ErrInvalid) {
			t.Fatalf("CheckLadderOrders(%v) = %v, want ErrInvalid", orders, want)
		}
		if _, err := FitLadder(t.Context(), Job{Spec: DefaultSpec(), Targets: targets}, orders, CPU{}, nil); err == nil || err.Error() != want.Error() {
			t.Errorf("FitLadder(%v): %v, want %v", orders, err, want)
		}
	}
	if err := CheckLadderOrders([]int{1, 4, filters.MaxOrder}); err != nil {
		t.Errorf("orders 1, 4, %d: %v", filters.MaxOrder, err)
	}
}

// TestLengthChecked: a kernel length outside [2, MaxLength] is refused with CheckLength's
// words by Spec.Validate and, for kernels of that length, by Run (CheckTargets), which
// distill --length and the workbench's length say too; CheckTargets said "kernels of 1
// samples are too short to fit".
func TestLengthChecked(t *testing.T) {
	for _, n := range []int{-1, 0, 1, MaxLength + 1} {
		want := CheckLength(n)
		if want == nil || !errors.Is(want, ErrInvalid) {
			t.Fatalf("CheckLength(%d) = %v, want ErrInvalid", n, want)
		}
		s := quickSpec("rtf", 1)
		if err := s.Validate(1, n); err == nil || err.Error() != want.Error() {
			t.Errorf("Validate(1, %d): %v, want %v", n, err, want)
		}
	}
	want := CheckLength(1)
	if _, err := Run(t.Context(), Job{Spec: quickSpec("modal", 1), Targets: [][]float64{{1}}}, CPU{}, nil); err == nil || err.Error() != want.Error() {
		t.Errorf("kernels of 1 sample: %v, want %v", err, want)
	}
	for _, n := range []int{2, MaxLength} {
		if err := CheckLength(n); err != nil {
			t.Errorf("CheckLength(%d): %v", n, err)
		}
	}
}

// TestLastProgressIsResult: the last progress event of an optimiser's job reports the
// filters it returns, after the refinement: RelError is the report's worst error and Loss
// the mean loss (mse: the channels' MSE) of the deployed filters. The zero init with Adam
// (the RTF paper's recipe, refined) ended on best_rel_error 0.72 with a report of 3e-14.
func TestLastProgressIsResult(t *testing.T) {
	for _, tc := range []struct {
		model Model
		init  Init
		steps int
	}{{"rtf", InitZeros, 100}, {"modal", "xavier", 40}} {
		s := quickSpec(tc.model, 4)
		s.Init, s.Steps = tc.init, tc.steps
		var got []Progress
		res, err := Run(context.Background(), Job{Spec: s, Targets: iirTargets(256, 2)}, CPU{}, func(p Progress) { got = append(got, p) })
		if err != nil {
			t.Fatal(err)
		}
		mse := 0.0
		for _, c := range res.Report.Channels {
			mse += c.MSE / float64(len(res.Report.Channels))
		}
		last := got[len(got)-1]
		// the same figures, summed in another order
		if last.Step != s.Steps || last.RelError != res.Report.MaxRelError || math.Abs(last.Loss-mse) > 1e-12*mse {
			t.Errorf("%s %s: last event %+v, report worst %.3g, mean MSE %.3g", tc.model, tc.init, last, res.Report.MaxRelError, mse)
		}
	}
}

// TestMissedWarning checks the warning --order auto adds when channels end above the
// tolerance at their suggested order: none when every channel meets it, else the channels,
// the worst one's error, order and ratio to its bound.
func TestMissedWarning(t *testing.T) {
	if w := missedWarning([]autoFit{{0, 8, 1e-3, 3e-4}, {1, 9, 9e-3, 3e-3}}, 1e-2); w != "" {
		t.Errorf("every channel meets 1e-2, yet: %q", w)
	}
	w := missedWarning([]autoFit{{4, 50, 0.0184, 0.0029}, {5, 50, 0.004, 0.001}, {6, 40, 0.012, 0}}, 1e-2)
	want := "2 channel(s) end above relative error 0.01 at their order (channels [4 6]; channel 4: 0.0184 at order 50, 6.3× its lower bound 0.0029, where the suggestion counts on 3×)"
	if w != want {
		t.Errorf("got  %q\nwant %q", w, want)
	}
}

// TestOptimiserReportBounds: a distillation trained by the optimiser (the paper's recipe:
// zero init, Adam) reports the lower bound of every channel and its ratio, as a fit by
// variable projection does: its report said lower_bound 0 on every channel, which reads as
// "no bound known", and gave no ratio or mean (trained drawn-lag layer 0 at n = 8: the bound
// is 0.26 on average). A training task has no target kernels, and no bound.
func TestOptimiserReportBounds(t *testing.T) {
	targets := targetFamilies(256, 3, 5)["decaying-noise"]
	s := quickSpec("rtf", 4)
	s.Init, s.Steps = "zeros", 20
	res, err := Run(context.Background(), Job{Spec: s, Targets: targets}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	want := 0.0
	for ch, c := range r.Channels {
		lb := LowerBounds(targets[ch], []int{s.Order})[0]
		if !(lb > 0) || c.LowerBound != lb || c.BoundRatio != c.RelError/lb {
			t.Errorf("channel %d: lower bound %g, ratio %g; want %g and %g", ch, c.LowerBound, c.BoundRatio, lb, c.RelError/lb)
		}
		want += lb / float64(len(targets))
	}
	if math.Abs(r.MeanLowerBound-want) > 1e-15*want {
		t.Errorf("mean lower bound %g, want %g", r.MeanLowerBound, want)
	}

	task, err := DelayTask(256, 4, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.Target.Length = 16
	res, err = Run(context.Background(), Job{Spec: s, Task: task}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Report; r.MeanLowerBound != 0 || r.Channels[0].LowerBound != 0 || r.Channels[0].BoundRatio != 0 {
		t.Errorf("a training task's report has a bound: %+v", r)
	}
}

// TestReportKeepsZeroMeanBound: a report whose channels' bounds are all 0 (an exact target)
// still carries mean_lower_bound, as each channel carries lower_bound: the key was left out
// (omitempty), and a script reading it failed on the targets that fit best.
func TestReportKeepsZeroMeanBound(t *testing.T) {
	res, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 8), Targets: iirTargets(256, 1)}, CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.MeanLowerBound != 0 {
		t.Fatalf("mean lower bound %g on an exact target, want 0", res.Report.MeanLowerBound)
	}
	data, err := json.Marshal(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"mean_lower_bound":0`) {
		t.Errorf("the report has no mean_lower_bound: %s", data)
	}
}
