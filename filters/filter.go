package filters

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"strings"
)

// Form names a representation.
type Form string

// The representations a filter can take.
const (
	FormDense     Form = "dense"
	FormDiagonal  Form = "diagonal"
	FormCompanion Form = "companion"
	FormRotation  Form = "rotation"
	FormTF        Form = "tf"
	FormZPK       Form = "zpk"
)

// Forms lists every discrete-time form, in the order the CLI and the TUI show them.
var Forms = []Form{FormDense, FormDiagonal, FormCompanion, FormRotation, FormTF, FormZPK}

// ParseForm returns the Form named s.
func ParseForm(s string) (Form, error) {
	for _, f := range Forms {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: unknown form %q (want one of %s)", ErrInvalid, s, FormNames())
}

// FormNames lists Forms for messages: "dense, diagonal, companion, rotation, tf, zpk".
func FormNames() string {
	names := make([]string, len(Forms))
	for i, f := range Forms {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// MaxOrder is the largest state dimension accepted anywhere in the package. Dense conversions
// cost O(n³) time and O(n²) memory; 4096 keeps both within a workstation's reach.
const MaxOrder = 4096

// Filter is a SISO discrete-time filter in one representation.
type Filter interface {
	// Form names the representation.
	Form() Form
	// Order is the state dimension n (the degree of the denominator).
	Order() int
	// Validate reports whether the filter is well formed (dimensions, finite values).
	Validate() error
	// Impulse returns h[0..length-1], computed in the representation's own algorithm.
	Impulse(length int) []float64
	// FreqResponse returns H(e^{jω}) at each ω (rad/sample).
	FreqResponse(omega []float64) []complex128
}

// FreqPreparer is a form whose FreqResponse does work of its own before it evaluates any
// frequency (Dense: A's Hessenberg reduction, O(n³); Rotation: the orthogonality of P and B
// in its basis), for a caller that asks for H a few frequencies at a time, as a peak search's
// golden-section steps do, each of which paid that work for an O(n²) or O(n) evaluation.
type FreqPreparer interface {
	Filter
	// PrepareFreqResponse does that work once and returns FreqResponse without it: the same
	// values bit for bit. The function holds the filter's numbers as they are now and is not
	// safe for concurrent use.
	PrepareFreqResponse() func(omega []float64) []complex128
}

// RoundingEstimator is a form whose impulse response comes with an estimate of its relative
// error from rounding, of its stored numbers and of its own algorithm (ZPK, whose cascade of
// first-order sections can lose digits where its partial products cancel). Conversion
// reports find it by type assertion and warn where the estimate is above MaxRelError; the
// other forms make none.
type RoundingEstimator interface {
	Filter
	// ImpulseError returns Impulse(length) with the estimate of ‖δh‖₂/‖h‖₂ over those
	// samples; ok is false where the form makes none (a response that grows), and the
	// estimate is then 0.
	ImpulseError(length int) (h []float64, relErr float64, ok bool)
}

// Errors wrapped by the package's failures.
var (
	// ErrInvalid marks malformed input: dimensions, NaN/Inf, unknown names, limits.
	ErrInvalid = errors.New("invalid filter")
	// ErrDefective marks a conversion that needs distinct poles or a diagonalisable A.
	ErrDefective = errors.New("defective system")
	// ErrIllConditioned marks a conversion whose result would carry no accurate digits.
	ErrIllConditioned = errors.New("ill-conditioned")
)

// ConditionError is returned when a condition number exceeds what a conversion accepts.
type ConditionError struct {
	What      string  // the matrix or problem whose condition was measured
	Condition float64 // the estimate
	Limit     float64 // the largest accepted value
	Kind      error   // ErrDefective or ErrIllConditioned
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("%v: condition number of %s is %s (limit %.3g)", e.Kind, e.What, formatCond(e.Condition), e.Limit)
}

// formatCond prints a condition number; an infinite one means exactly singular.
func formatCond(c float64) string {
	if math.IsInf(c, 0) || math.IsNaN(c) {
		return "infinite (singular)"
	}
	return fmt.Sprintf("%.3g", c)
}

func (e *ConditionError) Unwrap() error { return e.Kind }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func checkOrder(n int) error {
	if n > MaxOrder {
		return invalidf("order %d exceeds the limit %d", n, MaxOrder)
	}
	return nil
}

// checkSquare checks that rows form a square matrix before anything n×n is allocated.

// NonFiniteCoefficientError is a filter coefficient that is ±Inf or NaN, named as the filter
// file names it ("b[0]"). It matches ErrInvalid under errors.Is. Where the filter is a
// conversion's result, the input having been finite, it is an overflow (Convert says so).
type NonFiniteCoefficientError struct {
	Name  string // the coefficient's array: "b", "poles", "A row[2]"
	Index int
	Value string // "+Inf", "NaN", "(+Inf+NaNi)"
}

func (e *NonFiniteCoefficientError) Error() string {
	return fmt.Sprintf("%v: %s[%d] is %s", ErrInvalid, e.Name, e.Index, e.Value)
}

func (e *NonFiniteCoefficientError) Unwrap() error { return ErrInvalid }

func checkFinite(name string, v ...float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &NonFiniteCoefficientError{Name: name, Index: i, Value: fmt.Sprint(x)}
		}
	}
	return nil
}

func checkFiniteC(name string, v ...complex128) error {
	for i, x := range v {
		if cmplx.IsNaN(x) || cmplx.IsInf(x) {
			return &NonFiniteCoefficientError{Name: name, Index: i, Value: fmt.Sprint(x)}
		}
	}
	return nil
}

// checkIO checks the input and output vectors and the feedthrough of an order-n state space.
func checkIO(n int, b, c []float64, d float64) error {
	if err := checkLen("B", len(b), n); err != nil {
		return err
	}
	if err := checkLen("C", len(c), n); err != nil {
		return err
	}
	if err := checkFinite("B", b...); err != nil {
		return err
	}
	if err := checkFinite("C", c...); err != nil {
		return err
	}
	return checkFinite("D", d)
}

func checkLen(name string, got, want int) error {
	if got != want {
		return invalidf("%s has length %d, want %d", name, got, want)
	}
	return nil
}

// unitCircle returns e^{jω}.
func unitCircle(w float64) complex128 {
	s, c := math.Sincos(w)
	return complex(c, s)
}
