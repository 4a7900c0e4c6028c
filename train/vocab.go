package train

import (
	"fmt"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
)

// The closed sets of names a job is made of. Each is a string type with the list of its
// values, in the order the command line and the workbench show them, and a Parse function;
// Spec.Validate checks a spec against these lists, and the front ends read their choices
// and help from them.

// Model names what a job fits.
type Model string

// The models.
const (
	ModelRTF      Model = "rtf"      // rational transfer function (a, b̃, h0)
	ModelModal    Model = "modal"    // diagonal: conjugate pole pairs and residues
	ModelRotation Model = "rotation" // rotation blocks ρR(θ), as a RotRNN layer
)

// Models lists the models.
var Models = []Model{ModelRTF, ModelModal, ModelRotation}

// ParseModel returns the Model named s.
func ParseModel(s string) (Model, error) { return parse(Models, "model", s) }

// Form is the form a fit of the model is written in: an rtf as a tf, a modal fit as
// diagonal, a rotation fit as rotation. An rtf fitted by variable projection is written
// diagonal instead where float64 tf coefficients lose it, or when Spec.Form asks
// (Report.Form says which).
func (m Model) Form() filters.Form {
	switch m {
	case ModelRTF:
		return filters.FormTF
	case ModelModal:
		return filters.FormDiagonal
	case ModelRotation:
		return filters.FormRotation
	}
	return ""
}

// Init names how a job's parameters start.
type Init string

// The initialisations.
const (
	InitHankel Init = "hankel" // the stabilised ERA realisation of the target
	InitZeros  Init = "zeros"  // the RTF paper's zero init (eq. 18)
	InitXavier Init = "xavier" // the reference implementation's xavier_init
	InitMontel Init = "montel" // the reference implementation's montel_init (rtf only)
)

// Inits lists the initialisations, the recommended one first.
var Inits = []Init{InitHankel, InitZeros, InitXavier, InitMontel}

// ParseInit returns the Init named s.
func ParseInit(s string) (Init, error) { return parse(Inits, "init", s) }

// Constraint names what keeps a job's poles inside the unit circle.
type Constraint string

// The constraints; the empty string means ConstraintNone.
const (
	ConstraintNone     Constraint = "none"
	ConstraintL1Montel Constraint = "l1_montel" // Σ|aᵢ| ≤ 1 (RTF paper, eq. 17; rtf only)
	ConstraintRadius   Constraint = "radius"    // every pole within Spec.MaxRadius
)

// Constraints lists the constraints.
var Constraints = []Constraint{ConstraintNone, ConstraintL1Montel, ConstraintRadius}

// ParseConstraint returns the Constraint named s.
func ParseConstraint(s string) (Constraint, error) { return parse(Constraints, "constraint", s) }

// Poles names the poles a fit by variable projection places.
type Poles string

// The pole sets; the empty string means PolesAny.
const (
	PolesAny      Poles = "any"      // conjugate pairs and real poles
	PolesReal     Poles = "real"     // real poles only, in (−max_radius, max_radius)
	PolesPositive Poles = "positive" // real poles in (0, max_radius): e^{Δ·A} with A real, negative
)

// PoleSets lists the pole sets.
var PoleSets = []Poles{PolesAny, PolesReal, PolesPositive}

// ParsePoles returns the Poles named s.
func ParsePoles(s string) (Poles, error) { return parse(PoleSets, "poles", s) }

// realOnly reports whether the fit places real poles only.
func (p Poles) realOnly() bool { return p == PolesReal || p == PolesPositive }

// Loss names what a distillation minimises.
type Loss string

// The losses.
const (
	LossMSE      Loss = "mse"      // mean squared error
	LossRelative Loss = "relative" // ‖k − y‖²/‖y‖²
	LossFreq     Loss = "freq"     // squared spectral error weighted by 1/(|Y|² + ε)
)

// Losses lists the losses.
var Losses = []Loss{LossMSE, LossRelative, LossFreq}

// ParseLoss returns the Loss named s.
func ParseLoss(s string) (Loss, error) { return parse(Losses, "loss", s) }

// BackendName names where a job runs (SelectBackend returns the Backend it names); the
// empty string means BackendCPU.
type BackendName string

// The backends.
const (
	BackendAuto BackendName = "auto" // the GPU when there is one for the jobs it runs faster, else the CPU
	BackendCPU  BackendName = "cpu"
	BackendGPU  BackendName = "gpu"
	// BackendGPU64 is the GPU with the Adam recipe's transforms and L-long arrays in float64
	// (GPU.Float64): the CPU's results to rounding (1e-11 in the parity tests) where gpu's
	// float32 agrees to about 1e-7 times the denominator's condition, at 1.3–2.3× its step
	// time on an H200. Variable projection is float64 on every backend.
	BackendGPU64 BackendName = "gpu64"
)

// BackendNames lists the backends.
var BackendNames = []BackendName{BackendAuto, BackendCPU, BackendGPU, BackendGPU64}

// ParseBackend returns the BackendName s.
func ParseBackend(s string) (BackendName, error) { return parse(BackendNames, "backend", s) }

// Choices returns the names of a list as a sentence: "rtf, modal or rotation".
func Choices[T ~string](list []T) string {
	names := Names(list)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Names returns the names of a list, for a form's choices.
func Names[T ~string](list []T) []string {
	names := make([]string, len(list))
	for i, v := range list {
		names[i] = string(v)
	}
	return names
}

// parse returns the value of list named s, or a *FieldError for the setting what listing them.
func parse[T ~string](list []T, what, s string) (T, error) {
	for _, v := range list {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fieldErrorf(what, fmt.Sprintf("%q", s), nil, "is unknown: want %s", Choices(list))
}
