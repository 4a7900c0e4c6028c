package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
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
	return fmt.Sprintf("%s: %v: %s on or outside the unit circle%s", e.What, ErrUnstable, describePoles(e.Poles), marginNote(e.Poles))
}

// marginNote explains poles inside the circle that count as on it.
func marginNote(p []complex128) string {
	for _, z := range p {
		if cmplx.Abs(z) < 1 {
			return fmt.Sprintf(" (within %g of it counts as on it)", filters.MarginalTol)
		}
	}
	return ""
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
		fmt.Fprintf(&b, "%.6g%+.6gi (|p| = %s)", real(z), imag(z), filters.FormatModulus(cmplx.Abs(z)))
	}
	if len(p) == 1 {
		b.WriteString(" lies")
	} else {
		b.WriteString(" lie")
	}
	return b.String()
}

// AccuracyError reports a result whose estimated error is above filters.MaxRelError, the
// accuracy the package's results are documented to: the Gramians of a filter whose A had to be
// brought to Schur form, when the rounding of that form (a change of A by ε·‖A‖) moves them
// further. Repeated or clustered poles near the unit circle do that (a rotated Jordan block, a
// transfer function with a repeated pole); the modal forms and an A already in Schur form
// (upper triangular, say) are used as given, without that rounding. It wraps
// filters.ErrIllConditioned.
type AccuracyError struct {
	What      string  // the result: "the H2 norm", "the Hankel singular values", …
	Rel       float64 // the estimated relative error
	OfLargest bool    // Rel is relative to the largest value (σ₁), not to each
	// Result is the result refused, as computed, for a caller that accepts it with its error
	// (ssmlab analyze --force): a float64 (H2), an *HSV (HankelSV) or a *Reduced
	// (BalancedTruncation); nil where none could be computed (the error then says why only
	// in part: the accuracy refusal comes first).
	Result any
}

func (e *AccuracyError) Error() string {
	of := "relative"
	if e.OfLargest {
		of = "of σ₁"
	}
	return fmt.Sprintf("%s: %v: estimated error %.1e %s, above the documented %g: rounding A to its Schur form moves the result that much "+
		"(repeated or clustered poles near the unit circle); the modal forms (diagonal, rotation, zpk with distinct poles) and an A already upper triangular are used as given",
		e.What, filters.ErrIllConditioned, e.Rel, of, filters.MaxRelError)
}

func (e *AccuracyError) Unwrap() error { return filters.ErrIllConditioned }

// NonFiniteError reports a result that would hold NaN or ±Inf, such as the overflowing impulse
// response of an unstable filter, or a scalar beyond float64's range. No function of the
// package returns a non-finite number; it returns this error instead.
type NonFiniteError struct {
	What  string  // the quantity: "impulse", "step", "kernel", "H", "the H2 norm", …
	Index int     // the first offending index; -1 for a scalar or a whole matrix
	Value float64 // the offending value (NaN or ±Inf), or 0 for a scalar below the range
	// Log10 is log₁₀ of a scalar's true magnitude (Index -1), which lies above float64's
	// largest number (Log10 > 308) or below smallestAccurate (Log10 < -317); 0 when only the
	// overflow is known.
	Log10 float64
}

func (e *NonFiniteError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("%s[%d] is %v", e.What, e.Index, e.Value)
	}
	if e.Log10 == 0 {
		return fmt.Sprintf("%s overflows float64 (the filter's gain is too large: scale B and C, or the numerator, down)", e.What)
	}
	if e.Log10 < 0 {
		return fmt.Sprintf("%s is about %s: below float64's range (the smallest number it holds to %g is %.2g; the filter's gain is too small: scale B and C, or the numerator, up)", e.What, pow10(e.Log10), filters.MaxRelError, smallestAccurate)
	}
	return fmt.Sprintf("%s is about %s: beyond float64's range (the filter's gain is too large: scale B and C, or the numerator, down)", e.What, pow10(e.Log10))
}

// OverflowWithinError reports that the fft method overflows float64 on an unstable filter
// within the samples asked, and cannot say at which sample the response does: its
// correction for the length L (RTF paper, eq. 13) holds A^L, which overflows first. Near
// estimates the response's first sample that overflows from the spectral radius, where a
// response of the numerator's scale growing as Radius^t reaches float64's largest number;
// the recurrence method finds it exactly.
type OverflowWithinError struct {
	What   string  // "impulse" or "step"
	Length int     // the samples asked
	Radius float64 // the filter's spectral radius (> 1), or 0 where it is not known
	Near   int     // the estimate, or -1 with Radius 0
}

func (e *OverflowWithinError) Error() string {
	msg := fmt.Sprintf("the fft method overflows float64 within the %d samples asked: its correction for the length (RTF paper, eq. 13) grows with the response", e.Length)
	if e.Radius == 0 {
		return msg
	}
	msg = fmt.Sprintf("the fft method overflows float64 within the %d samples asked: the filter is unstable (spectral radius %.6g), and its correction for the length (RTF paper, eq. 13) grows as %.6g^%d", e.Length, e.Radius, e.Radius, e.Length)
	if e.Near >= e.Length {
		return fmt.Sprintf("%s; the %s response itself reaches float64's largest number only near sample %d", msg, e.What, e.Near)
	}
	return fmt.Sprintf("%s; the %s response itself reaches float64's largest number near sample %d", msg, e.What, e.Near)
}

// overflowWithin is the *OverflowWithinError of f's response over length samples, whose
// numerator's largest coefficient is scale: t ≈ log(MaxFloat64/scale)/log r.
func overflowWithin(f filters.Filter, length int, scale float64) *OverflowWithinError {
	e := &OverflowWithinError{What: "impulse", Length: length, Near: -1}
	r, err := SpectralRadius(f)
	if err != nil || !(r > 1) || math.IsInf(r, 0) {
		return e
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		scale = 1
	}
	e.Radius = r
	e.Near = max(0, int(math.Floor((math.Log(math.MaxFloat64)-math.Log(scale))/math.Log(r))))
	return e
}

// pow10 writes 10^l as a number with three significant digits, such as 7.75e+400.
func pow10(l float64) string {
	e := math.Floor(l)
	m := math.Pow(10, l-e)
	if m >= 9.995 {
		m, e = 1, e+1
	}
	return fmt.Sprintf("%.3ge%+03d", m, int(e))
}

// inRange returns x·a·b for x, a, b ≥ 0 without intermediate overflow or underflow, or a
// *NonFiniteError (what, index -1) when the product lies beyond float64's range or, being
// nonzero, below smallestAccurate.
func inRange(what string, x, a, b float64) (float64, error) {
	if x == 0 || a == 0 || b == 0 {
		return 0, nil
	}
	fx, ex := math.Frexp(x)
	fa, ea := math.Frexp(a)
	fb, eb := math.Frexp(b)
	m, e := fx*fa*fb, ex+ea+eb // m in [1/8, 1)
	if v := math.Ldexp(m, e); !math.IsInf(v, 0) && v >= smallestAccurate {
		return v, nil
	}
	l := math.Log10(m) + float64(e)*math.Log10(2)
	if l > 0 {
		return 0, &NonFiniteError{What: what, Index: -1, Value: math.Inf(1), Log10: l}
	}
	return 0, &NonFiniteError{What: what, Index: -1, Log10: l}
}

// smallestAccurate is the smallest number float64 holds to filters.MaxRelError: below 2^-1022
// the subnormal numbers keep a fixed spacing of 2^-1074, so about 4.9e-318.
const smallestAccurate = math.SmallestNonzeroFloat64 / filters.MaxRelError

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
