package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"strings"
)

// ErrUnstable is wrapped by the errors of quantities that exist only for stable filters.
var ErrUnstable = errors.New("not stable")

// UnstableError reports that a quantity defined only for stable filters (the H2 norm, the
// Gramians) was asked of a filter with poles on or outside the unit circle. Poles lists them.
type UnstableError struct {
	What  string       // the quantity asked for, such as "H2 norm"
	Poles []complex128 // the poles with |p| ≥ 1 - filters.MarginalTol, largest modulus first
}

func (e *UnstableError) Error() string {
	return fmt.Sprintf("%s: %v: %s on or outside the unit circle", e.What, ErrUnstable, describePoles(e.Poles))
}

func (e *UnstableError) Unwrap() error { return ErrUnstable }

// describePoles names up to four poles with their moduli.
func describePoles(p []complex128) string {
	var b strings.Builder
	if len(p) == 1 {
		b.WriteString("pole ")
	} else {
		fmt.Fprintf(&b, "%d poles ", len(p))
	}
	for i, z := range p {
		if i == 4 {
			fmt.Fprintf(&b, ", … (%d more)", len(p)-4)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.6g%+.6gi (|p| = %.10g)", real(z), imag(z), cmplx.Abs(z))
	}
	if len(p) == 1 {
		b.WriteString(" lies")
	} else {
		b.WriteString(" lie")
	}
	return b.String()
}

// NonFiniteError reports a result that would hold NaN or ±Inf, such as the overflowing impulse
// response of an unstable filter. No function of the package returns a non-finite number;
// it returns this error instead.
type NonFiniteError struct {
	What  string  // the quantity: "impulse", "step", "kernel", "H", "H2 norm", …
	Index int     // the first offending index; -1 for a scalar or a whole matrix
	Value float64 // the offending value (NaN or ±Inf)
}

func (e *NonFiniteError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s is %v: beyond float64's range (the filter's gain is too large; scale B and C, or the numerator, down)", e.What, e.Value)
	}
	return fmt.Sprintf("%s[%d] is %v", e.What, e.Index, e.Value)
}

// checkFinite returns a *NonFiniteError for the first non-finite value of v. A sum screens
// the common all-finite case in one pass without a branch per element.
func checkFinite(what string, v []float64) error {
	s := 0.0
	for _, x := range v {
		s += x * 0
	}
	if s == 0 {
		return nil
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &NonFiniteError{What: what, Index: i, Value: x}
		}
	}
	return nil
}
