package analysis

import (
	"fmt"

	"github.com/ssmlab/ssmlab/filters"
)

// MapBank applies fn to every channel of b, in parallel across GOMAXPROCS goroutines, and
// returns the results in channel order. On error it returns the first failing channel's
// error, prefixed with "channel i: ", and no results. Every function of the package works
// on a bank this way; the functions below are the common cases.
func MapBank[T any](b *filters.Bank, fn func(f filters.Filter) (T, error)) ([]T, error) {
	out := make([]T, len(b.Channels))
	errs := make([]error, len(b.Channels))
	parallelFor(len(b.Channels), func(i int) {
		out[i], errs[i] = fn(b.Channels[i])
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("channel %d: %w", i, err)
		}
	}
	return out, nil
}

// ImpulseBank returns every channel's impulse response. Channels run in parallel; the scan
// method then uses one time chunk per channel.
func ImpulseBank(b *filters.Bank, length int, m Method) ([][]float64, error) {
	return MapBank(b, func(f filters.Filter) ([]float64, error) { return impulse(nil, f, length, m, 1) })
}

// StepBank returns every channel's step response.
func StepBank(b *filters.Bank, length int, m Method) ([][]float64, error) {
	return MapBank(b, func(f filters.Filter) ([]float64, error) { return step(nil, f, length, m, 1) })
}

// FreqResponseBank returns every channel's frequency response on omega.
func FreqResponseBank(b *filters.Bank, omega []float64) ([]*Response, error) {
	return MapBank(b, func(f filters.Filter) (*Response, error) { return FreqResponse(f, omega), nil })
}

// GroupDelayBank returns every channel's group delay on omega.
func GroupDelayBank(b *filters.Bank, omega []float64) ([]*GroupDelay, error) {
	return MapBank(b, func(f filters.Filter) (*GroupDelay, error) { return GroupDelayOf(f, omega) })
}

// AnalyzeBank returns every channel's Properties.
func AnalyzeBank(b *filters.Bank, tol float64) ([]*Properties, error) {
	return MapBank(b, func(f filters.Filter) (*Properties, error) { return Analyze(f, tol) })
}

// H2Bank returns every channel's H2 norm.
func H2Bank(b *filters.Bank) ([]float64, error) { return MapBank(b, H2) }

// HankelSVBank returns every channel's Hankel singular values.
func HankelSVBank(b *filters.Bank) ([]*HSV, error) { return MapBank(b, HankelSV) }

// BalancedTruncationBank reduces every channel to order r.
func BalancedTruncationBank(b *filters.Bank, r int) ([]*Reduced, error) {
	return MapBank(b, func(f filters.Filter) (*Reduced, error) { return BalancedTruncation(f, r) })
}

// MinimalBank returns a minimal realisation of every channel.
func MinimalBank(b *filters.Bank, tol float64) ([]*filters.Dense, []MinimalReport, error) {
	type res struct {
		d   *filters.Dense
		rep MinimalReport
	}
	rs, err := MapBank(b, func(f filters.Filter) (res, error) {
		d, rep, err := Minimal(f, tol)
		return res{d, rep}, err
	})
	if err != nil {
		return nil, nil, err
	}
	ds := make([]*filters.Dense, len(rs))
	reps := make([]MinimalReport, len(rs))
	for i, r := range rs {
		ds[i], reps[i] = r.d, r.rep
	}
	return ds, reps, nil
}
