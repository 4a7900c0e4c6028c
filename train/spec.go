package train

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/strictjson"
)

// ErrInvalid marks a job that cannot run as specified.
var ErrInvalid = errors.New("invalid job")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// FieldError is a setting of a job that CheckSettings refuses (an ErrInvalid), named by its
// key in the job file ("order", "max_radius", "optimizer.lr"), so that a front end can name
// its own field or flag: the value given, why it is refused, and With, the other settings
// whose values make it wrong (init montel beside model modal: "model").
type FieldError struct {
	Field, Value, Why string
	With              []string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: %s %s %s", ErrInvalid, e.Field, e.Value, e.Why)
}

// Is makes a FieldError an ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func fieldErrorf(field string, value any, with []string, why string, args ...any) error {
	return &FieldError{Field: field, Value: fmt.Sprint(value), Why: fmt.Sprintf(why, args...), With: with}
}

// Limits on what one job may ask for (its order is at most filters.MaxOrder).
const (
	MaxLength   = 1 << 20
	MaxChannels = 1 << 14
	MaxSteps    = 10_000_000
)

// A kernel's energy Σh² lies in [MinEnergy, MaxEnergy], or is 0: the fits' sums over samples
// and their products stay within float64 there (kernels of 1e160 made them Inf and NaN, and
// at Σh² ≈ 1e308 the fits already lost accuracy); larger or smaller kernels are scaled first.
const (
	MinEnergy = 1e-300
	MaxEnergy = 1e300
)

// Spec describes a job; it is also the job file format (JSON), so runs are reproducible.
type Spec struct {
	// Target names the kernels to fit; the caller resolves it (see Target).
	Target Target `json:"target"`
	// Model is one of Models.
	Model Model `json:"model"`
	// Order is the state size n, in [0, filters.MaxOrder]; a distillation's starts at
	// MinDistillOrder.
	Order int `json:"order"`
	// Init is one of Inits (montel: rtf only).
	Init Init `json:"init"`
	// Constraint is one of Constraints (l1_montel: rtf only; radius with MaxRadius), or
	// empty for none. MaxRadius 0 under the radius constraint is auto: the job bounds its
	// poles by AutoRadius of its kernels' length.
	Constraint Constraint `json:"constraint"`
	MaxRadius  float64    `json:"max_radius"`
	// Optimizer is left out of the JSON where it is zero, which no job that trains has
	// (CheckSettings refuses its lr 0): a spec as fitted by variable projection (AsFitted).
	Optimizer Optim `json:"optimizer,omitzero"`
	// Loss is one of Losses (freq balances the bands).
	Loss  Loss `json:"loss"`
	Steps int  `json:"steps"`
	// Refine is the number of Levenberg–Marquardt iterations that polish each channel after
	// the optimiser (mse or relative loss; rtf up to MaxRefineOrder, modal and rotation
	// while modalRefinable; 0: none).
	Refine int `json:"refine"`
	// Tol stops early once every channel's relative L2 error is at most Tol (0: never).
	Tol  float64 `json:"tol,omitempty"`
	Seed uint64  `json:"seed"`
	// Backend is one of BackendNames, or empty for the CPU.
	Backend BackendName `json:"backend"`
	// Form, when diagonal, writes an rtf fit by variable projection as poles and residues even
	// where float64 tf coefficients would hold it: for a deployment that stores modes (the
	// s4d and stripedhyena layouts) or forms its coefficients at its own dtype. Empty: the
	// model's form (an rtf as a tf where its coefficients hold the fit).
	Form filters.Form `json:"form,omitempty"`
	// Poles, when real or positive, makes a fit by variable projection place real poles only
	// (positive: in (0, 1)), for a deployment that holds no others: an S4D layer with
	// is_real, whose poles are e^{Δ·A} with A real and negative. Empty or any: conjugate
	// pairs too.
	Poles Poles `json:"poles,omitempty"`
}

// DefaultKernelLength is the kernel length a distillation takes from a filter target when
// none is given (Target.Length): the length of the quality tables and the RTF paper's
// long-range benchmarks' scale.
const DefaultKernelLength = 1024

// Target is either inline kernels or a file that the caller loads (a filter file, whose
// impulse responses of Length samples are the kernels, or a kernel file).
type Target struct {
	File    string      `json:"file,omitempty"`
	Length  int         `json:"length,omitempty"`
	Kernels [][]float64 `json:"kernels,omitempty"`
}

// Optim configures Adam or AdamW and the learning-rate schedule.
type Optim struct {
	Name        string  `json:"name"` // "adam" or "adamw"
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay,omitempty"`
	// Schedule is "constant" or "cosine" (decay to LR/100), with Warmup steps of linear ramp.
	Schedule string `json:"schedule"`
	Warmup   int    `json:"warmup"`
}

// DefaultSpec returns a distillation job with the settings ssmlab recommends: an RTF from the
// stabilised Hankel realisation, 100 Adam steps with a cosine schedule, then the
// Levenberg–Marquardt refinement from several starts, the poles within the radius bound of
// the kernels' length (AutoRadius).
func DefaultSpec() Spec {
	return Spec{
		Model: "rtf", Order: 16, Init: "hankel", Constraint: "radius", MaxRadius: 0,
		Optimizer: Optim{Name: "adam", LR: 3e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Schedule: "cosine", Warmup: 20},
		Loss:      "mse", Steps: 100, Refine: 50, Backend: "cpu",
	}
}

// PaperSpec is the RTF paper's recipe (RTF paper, §3.4: zero init, Adam, lr 1e-3, 2000 steps),
// the baseline the distillation quality is measured against.
func PaperSpec() Spec {
	s := DefaultSpec()
	s.Init, s.Constraint, s.MaxRadius = "zeros", "none", 0
	s.Optimizer.LR, s.Optimizer.Schedule, s.Optimizer.Warmup = 1e-3, "constant", 0
	s.Steps, s.Refine = 2000, 0
	return s
}

// AutoRadiusRule says in words what AutoRadius picks, for help texts and errors.
const AutoRadiusRule = "max(0.9999, 1 − 1/L) for kernels of L samples"

// ParseMaxRadius reads a MaxRadius as the front ends take it (distill --max-radius, the
// workbench's radius): auto (0, AutoRadius for the kernels' length) or a number, which
// CheckMaxRadius checks. MaxRadiusText writes it back.
func ParseMaxRadius(s string) (float64, error) {
	if s == "auto" {
		return 0, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.New("want a number or auto")
	}
	return r, nil
}

// MaxRadiusText writes a MaxRadius as ParseMaxRadius reads it: auto for 0, else the number.
func MaxRadiusText(r float64) string {
	if r == 0 {
		return "auto"
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// MinAutoRadius is the least bound AutoRadius picks: that of every kernel of 10000 samples
// or fewer, with the radius constraint or without it (Spec.poleBound).
const MinAutoRadius = 0.9999

// AutoRadius is the radius bound of the radius constraint where a spec leaves MaxRadius at
// 0, and of the hankel init and the variable projection without the constraint, for
// kernels of length samples: max(0.9999, 1 − 1/length), at most 1 − filters.MarginalTol.
// A mode at 1 − 1/L decays by a factor e over the kernel; a long kernel's slowest modes lie
// beyond 0.9999 (Hyena's implicit filters decay as exp(−δ·t/L) with δ down to about 3, poles
// near 1 − 3/L: 0.99991 at L = 32768), which a constant bound clipped. Up to L = 10000 it is
// 0.9999, the bound a spec held before it was automatic (the quality tables' L = 1024).
func AutoRadius(length int) float64 {
	return math.Min(math.Max(MinAutoRadius, 1-1/float64(length)), 1-filters.MarginalTol)
}

// resolveRadius sets an automatic MaxRadius (0 under the radius constraint) to AutoRadius of
// the kernels' length, and returns the automatic bound the job's fits keep every pole within
// (poleBound): the one so set, or AutoRadius(length) without the radius constraint where the
// fit bounds its poles all the same (variable projection, and the modal and rotation models,
// whose parametrisation holds them within it); 0 where the spec gave a bound, and where none
// applies (an rtf the optimiser trains without the radius constraint). task says the job is
// a training task (projectable).
func (s *Spec) resolveRadius(length int, task bool) float64 {
	switch {
	case s.Constraint == ConstraintRadius && s.MaxRadius == 0:
		s.MaxRadius = AutoRadius(length)
		return s.MaxRadius
	case s.Constraint != ConstraintRadius && (s.Model != ModelRTF || s.projectable(task)):
		return s.poleBound(length)
	}
	return 0
}

// MinDistillOrder is the lowest order of a distillation: an order-0 filter is a gain, which
// fits only the kernels' first sample. A training task may ask for order 0, where a gain can
// fit it (a delay of 0).
const MinDistillOrder = 1

// ValidateDistillation is Validate for a distillation (kernels as the target), whose order
// lies in [MinDistillOrder, filters.MaxOrder] (CheckDistillOrder).
func (s *Spec) ValidateDistillation(channels, length int) error {
	if err := CheckDistillOrder(s.Order); err != nil {
		return err
	}
	return s.Validate(channels, length)
}

// CheckDistillOrder checks a distillation's order alone (for a form that points at the field);
// its error is a *FieldError.
func CheckDistillOrder(n int) error {
	if n >= MinDistillOrder && n <= filters.MaxOrder {
		return nil
	}
	return fieldErrorf("order", n, nil, "%s", distillOrderFault(n))
}

// CheckLadderOrders checks the orders of a ladder (FitLadder, ssmlab distill --orders, the
// workbench's orders): at least one, each a distillation's order, the first out of range
// named in CheckDistillOrder's words ("ladder order 0 outside [1, 4096]: …").
func CheckLadderOrders(orders []int) error {
	if len(orders) == 0 {
		return invalidf("a ladder needs at least one order")
	}
	for _, n := range orders {
		if CheckDistillOrder(n) != nil {
			return invalidf("ladder order %d %s", n, distillOrderFault(n))
		}
	}
	return nil
}

// CheckOrderOrOrders refuses a distillation given both one order and a ladder's orders
// (ssmlab distill --order with --orders, the workbench's order= with orders=): the orders fit
// a ladder, the order one filter, and taking one would drop the other without a word. order
// and orders name the two as the front end spells them.
func CheckOrderOrOrders(orderGiven, ordersGiven bool, order, orders string) error {
	if orderGiven && ordersGiven {
		return fmt.Errorf("%s and %s both give the order: %s fits a ladder of orders, %s one", orders, order, orders, order)
	}
	return nil
}

// distillOrderFault says what is wrong with n, out of range, as a distillation's order.
func distillOrderFault(n int) string {
	why := ""
	if n == 0 {
		why = ": a distillation's order starts at 1 (order 0 is a gain, which fits only the kernels' first sample)"
	}
	return fmt.Sprintf("outside [%d, %d]%s", MinDistillOrder, filters.MaxOrder, why)
}

// CheckMaxRadius checks the radius constraint's bound alone (for a form that points at the
// field): 0 (auto) or in (0, 1 − filters.MarginalTol]. Its error is a *FieldError.
func CheckMaxRadius(r float64) error {
	if r == 0 || r > 0 && r <= 1-filters.MarginalTol {
		return nil
	}
	return fieldErrorf("max_radius", r, []string{"constraint"}, "is outside (0, 1 - %g]: the radius constraint keeps every pole within it, and a pole closer than %g to the unit circle is not stable (0: auto, %s)", filters.MarginalTol, filters.MarginalTol, AutoRadiusRule)
}

// CheckSteps checks a job's optimiser steps alone (for a form that points at the field).
// 0 is allowed: the init and its refinement (Refine) alone, and a fit by variable
// projection (the hankel init with the rtf or modal model) takes no steps anyway.
func CheckSteps(n int) error {
	if n < 0 || n > MaxSteps {
		return fieldErrorf("steps", n, nil, "outside [0, %d]", MaxSteps)
	}
	return nil
}

// CheckLength checks a kernel length alone (for a form that points at the field, and distill
// --length): at least 2 samples, as a distillation's order starts at 1 and lies below the
// length; at most MaxLength.
func CheckLength(n int) error {
	if n < 2 || n > MaxLength {
		return invalidf("kernel length %d outside [2, %d]", n, MaxLength)
	}
	return nil
}

// Validate checks the settings (CheckSettings), then the spec against the target's shape (a
// distillation: ValidateDistillation).
func (s *Spec) Validate(channels, length int) error {
	if err := s.CheckSettings(); err != nil {
		return err
	}
	if channels == 0 {
		return invalidf("the target has no kernels")
	}
	if channels > MaxChannels {
		return invalidf("%d channels exceed the limit %d", channels, MaxChannels)
	}
	if err := CheckLength(length); err != nil {
		return err
	}
	return s.CheckOrderFits(length)
}

// CheckOrderFits refuses an order whose parameters a kernel of length samples cannot
// determine.
func (s *Spec) CheckOrderFits(length int) error {
	if s.Model == ModelRTF && 2*s.Order+1 >= length {
		return invalidf("order %d needs kernels longer than %d samples (an RTF of order n has 2n+1 parameters), got %d", s.Order, 2*s.Order+1, length)
	}
	if s.Model != ModelRTF && s.Order >= length {
		return invalidf("order %d must be below the kernel length %d", s.Order, length)
	}
	return nil
}

// CheckSettings checks what Validate checks without the target: each setting alone and
// against the others, for a front end to check its fields or flags before it reads the
// target. A fault of a setting it names is a *FieldError.
func (s *Spec) CheckSettings() error {
	if _, err := ParseModel(string(s.Model)); err != nil {
		return err
	}
	if s.Order < 0 || s.Order > filters.MaxOrder {
		return fieldErrorf("order", s.Order, nil, "outside [0, %d]", filters.MaxOrder)
	}
	if _, err := ParseInit(string(s.Init)); err != nil {
		return err
	}
	if s.Init == InitMontel && s.Model != ModelRTF {
		return fieldErrorf("init", s.Init, []string{"model"}, "applies to the rtf model only")
	}
	if s.Constraint != "" {
		if _, err := ParseConstraint(string(s.Constraint)); err != nil {
			return err
		}
	}
	switch {
	case s.Constraint == ConstraintL1Montel && s.Model != ModelRTF:
		return fieldErrorf("constraint", s.Constraint, []string{"model"}, "applies to the rtf model only")
	case s.Constraint == ConstraintRadius:
		if err := CheckMaxRadius(s.MaxRadius); err != nil {
			return err
		}
	}
	if err := s.validateOptimizer(); err != nil {
		return err
	}
	if _, err := ParseLoss(string(s.Loss)); err != nil {
		return err
	}
	if err := CheckSteps(s.Steps); err != nil {
		return err
	}
	if s.Refine < 0 || s.Refine > MaxSteps {
		return fieldErrorf("refine", s.Refine, nil, "outside [0, %d]", MaxSteps)
	}
	if s.Backend != "" {
		if _, err := ParseBackend(string(s.Backend)); err != nil {
			return err
		}
	}
	if s.Poles != "" {
		if _, err := ParsePoles(string(s.Poles)); err != nil {
			return err
		}
		if s.Poles.realOnly() && !s.projectable(false) {
			return fieldErrorf("poles", s.Poles, []string{"model", "init", "loss", "constraint"}, "applies to the fits by variable projection: %s", ProjectionRecipe)
		}
	}
	switch {
	case s.Form == "":
	case s.Form != filters.FormDiagonal:
		return invalidf("form %q: a fit is written as diagonal on request, or in its model's form", s.Form)
	case !s.projectable(false):
		return invalidf("form diagonal applies to the fits by variable projection: %s", ProjectionRecipe)
	}
	return nil
}

// validateOptimizer checks the optimiser's settings and the early-stopping tolerance, a
// relative error: at 1 the zero filter meets it, so it lies below.
func (s *Spec) validateOptimizer() error {
	o := s.Optimizer
	switch o.Name {
	case "adam", "adamw":
	default:
		return fieldErrorf("optimizer.name", fmt.Sprintf("%q", o.Name), nil, "is not an optimizer: want adam or adamw")
	}
	for _, v := range []struct {
		field, want string
		x           float64
		ok          bool
	}{
		{"optimizer.lr", "above 0", o.LR, o.LR > 0},
		{"optimizer.beta1", "in [0, 1)", o.Beta1, o.Beta1 >= 0 && o.Beta1 < 1},
		{"optimizer.beta2", "in [0, 1)", o.Beta2, o.Beta2 >= 0 && o.Beta2 < 1},
		{"optimizer.eps", "above 0", o.Eps, o.Eps > 0},
		{"optimizer.weight_decay", "0 or more", o.WeightDecay, o.WeightDecay >= 0},
		{"tol", "a relative error in [0, 1) (0: no early stop)", s.Tol, s.Tol >= 0 && s.Tol < 1},
	} {
		if !v.ok || math.IsNaN(v.x) || math.IsInf(v.x, 0) {
			return fieldErrorf(v.field, v.x, nil, "is out of range: want %s", v.want)
		}
	}
	switch o.Schedule {
	case "constant", "cosine":
	default:
		return fieldErrorf("optimizer.schedule", fmt.Sprintf("%q", o.Schedule), nil, "is not a schedule: want constant or cosine")
	}
	if o.Warmup < 0 {
		return fieldErrorf("optimizer.warmup", o.Warmup, nil, "is negative")
	}
	return nil
}

// ParseSpec reads a job file, filling what it leaves out from DefaultSpec. The file is
// strict JSON (internal/strictjson: no key twice, errors with line and column, one object),
// and every key must name a field of Spec.
func ParseSpec(data []byte) (Spec, error) {
	s := DefaultSpec()
	if err := strictjson.UnmarshalKnown(data, &s); err != nil {
		return Spec{}, invalidf("job file: %v", err)
	}
	return s, nil
}
