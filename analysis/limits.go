package analysis

import (
	"fmt"

	"github.com/ssmlab/ssmlab/filters"
)

// MaxCubicOrder is the largest order of the analyses that cost O(n³): the eigenvalues of a
// dense A (its poles, its spectral radius), the zeros of every form but a transfer function's
// (the zero dynamics), Schur-based Gramians (the H2 norm of a form other than diagonal,
// Hankel singular values, balanced truncation) and minimal realisations. At 512 they take
// seconds (the H2 norm of an order-512 tf 4.5 s, its Hankel singular values 11 s on a shared
// 2-core machine); at filters.MaxOrder they would take about an hour. Above it they fail at
// once with an *OrderLimitError. Poles and zeros of tf and companion filters, and poles of
// modal forms, have no such limit: polynomial roots cost O(n²) a sweep (an order-4096 tf's
// poles in 2 s).
const MaxCubicOrder = 512

// OrderLimitError says that an O(n³) analysis was refused for a filter above MaxCubicOrder.
type OrderLimitError struct {
	What  string // the analysis: "Hankel singular values", "poles of a dense filter", …
	Order int
	Limit int
}

func (e *OrderLimitError) Error() string {
	return fmt.Sprintf("%s of a filter of order %d: refused above order %d, where this O(n³) computation would take minutes to hours (reduce the order first, or use a tf, companion or modal form)", e.What, e.Order, e.Limit)
}

// checkCubic refuses an O(n³) analysis of f above MaxCubicOrder.
func checkCubic(what string, f filters.Filter) error {
	if n := f.Order(); n > MaxCubicOrder {
		return &OrderLimitError{What: what, Order: n, Limit: MaxCubicOrder}
	}
	return nil
}

// cubicPoles reports whether f's poles take an eigenvalue problem: a dense A.
func cubicPoles(f filters.Filter) bool {
	_, dense := f.(*filters.Dense)
	return dense
}

// cubicZeros reports whether f's zeros take an eigenvalue problem (the zero dynamics): every
// form but a transfer function's and a ZPK filter's without offset, whose zeros are stored.
func cubicZeros(f filters.Filter) bool {
	switch s := f.(type) {
	case *filters.TransferFunction, *filters.Companion:
		return false
	case *filters.ZPK:
		return s.H0 != 0
	}
	return true
}

// SpectralRadius returns filters.SpectralRadius(f), refusing a dense filter above
// MaxCubicOrder with an *OrderLimitError.
func SpectralRadius(f filters.Filter) (float64, error) {
	if cubicPoles(f) {
		if err := checkCubic("the spectral radius", f); err != nil {
			return 0, err
		}
	}
	return filters.SpectralRadius(f)
}

// Poles returns the poles of f (filters.Poles), refusing a dense filter above MaxCubicOrder
// with an *OrderLimitError.
func Poles(f filters.Filter) ([]complex128, error) {
	if cubicPoles(f) {
		if err := checkCubic("the poles", f); err != nil {
			return nil, err
		}
	}
	return filters.Poles(f)
}
