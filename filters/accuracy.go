package filters

import (
	"errors"
	"fmt"
	"math"
)

// ErrInaccurate is wrapped by the errors of results outside their documented accuracy.
var ErrInaccurate = errors.New("outside the documented accuracy")

// AccuracyError says that a conversion (of one filter, or of the channels of a bank) lost
// more than MaxRelError or made a stable filter unstable. It wraps ErrInaccurate.
type AccuracyError struct {
	Channel  int // the worst channel; -1 for a single filter
	Channels int // how many channels are outside the documented accuracy
	Report   Report
}

func (e *AccuracyError) Error() string {
	r := e.Report
	where := ""
	if e.Channel >= 0 {
		where = fmt.Sprintf("channel %d: ", e.Channel)
	}
	var what string
	switch {
	case r.BecameUnstable && r.RelError >= math.MaxFloat64:
		what = fmt.Sprintf("the %s form of this stable filter is unstable (its impulse response overflows)", r.To)
	case r.BecameUnstable:
		what = fmt.Sprintf("the %s form of this stable filter is unstable (relative error %.3g)", r.To, r.RelError)
	case r.RelError >= math.MaxFloat64:
		what = fmt.Sprintf("the %s form's impulse response overflows", r.To)
	default:
		what = fmt.Sprintf("relative error %.3g is above the documented %.0e", r.RelError, MaxRelError)
	}
	more := ""
	if e.Channels > 1 {
		more = fmt.Sprintf(" (and %d more channels)", e.Channels-1)
	}
	return fmt.Sprintf("%s → %s: %s%s%s", r.From, r.To, where, what, more)
}

func (e *AccuracyError) Unwrap() error { return ErrInaccurate }

// RelErrorText prints a relative error in two digits, or "overflow" for one saturated at
// math.MaxFloat64 (Convert's mark of a response that overflowed: no error was measured).
func RelErrorText(e float64) string {
	if e >= math.MaxFloat64 {
		return "overflow"
	}
	return fmt.Sprintf("%.2g", e)
}

// Inaccurate reports whether the conversion r describes is outside the documented accuracy:
// a relative error above MaxRelError, or a stable filter made unstable.
func (r Report) Inaccurate() bool { return r.RelError > MaxRelError || r.BecameUnstable }

// CheckAccuracy returns an *AccuracyError when any of reports (one per channel of a bank; one
// for a single filter, reported as channel -1) is Inaccurate, naming the worst: an unstable
// result before the largest error. It returns nil when all are within.
func CheckAccuracy(reports []Report) error {
	worst, count := -1, 0
	for i, r := range reports {
		if !r.Inaccurate() {
			continue
		}
		count++
		if worst < 0 || worse(r, reports[worst]) {
			worst = i
		}
	}
	if worst < 0 {
		return nil
	}
	ch := worst
	if len(reports) == 1 {
		ch = -1
	}
	return &AccuracyError{Channel: ch, Channels: count, Report: reports[worst]}
}

func worse(a, b Report) bool {
	if a.BecameUnstable != b.BecameUnstable {
		return a.BecameUnstable
	}
	return a.RelError > b.RelError
}
