package analysis

import (
	"fmt"

	"github.com/ssmlab/ssmlab/filters"
)

// MaxCubicOrder is the largest order of the analyses that cost O(n³): the eigenvalues of a
// dense A (its poles, its spectral radius), the zeros of every form but tf, companion and zpk
// (the zero dynamics), Schur-based Gramians (the H2 norm of a form other than diagonal,
// Hankel singular values, balanced truncation) and minimal realisations. Measured on a
// shared 2-core machine (CPU time): the Hankel singular values of an order-512 tf take 3.4 s,
// of order 1024 26 s and of order 2048 290 s; those of a dense HiPPO-LegS A 3.4 s and 22 s,
// an LRU's (diagonal) 0.5 s, 4 s and 22 s; the poles of that dense A 1 s and 5 s. Above
// MaxCubicOrder they fail at once with an *OrderLimitError. Poles and zeros of tf and
// companion filters, and poles of modal forms, have no such limit: polynomial roots cost
// O(n²) a sweep (an order-4096 tf's poles in 2 s).
const MaxCubicOrder = 1024

// cubicCost says what an O(n³) analysis at MaxCubicOrder costs, for OrderLimitError.
const cubicCost = "half a minute at order 1024 on a 2-core machine, and 8–11× longer per doubling of the order"

// OrderLimitError says that an O(n³) analysis was refused for a filter above MaxCubicOrder.
type OrderLimitError struct {
	What   string // the analysis: "Hankel singular values", "poles of a dense filter", …
	Order  int
	Limit  int
	Advice string // what avoids the limit for the filter's form
}

func (e *OrderLimitError) Error() string {
	return fmt.Sprintf("%s of a filter of order %d: refused above order %d, where this O(n³) computation takes up to %s; %s",
		e.What, e.Order, e.Limit, cubicCost, e.Advice)
}

// The advice of an OrderLimitError, by what the analysis needs.
const (
	advicePoles   = "the tf, companion and modal forms (diagonal, rotation, zpk) hold their poles without an eigenvalue problem: convert the filter to one of them"
	adviceZeros   = "the tf, companion and zpk (without h0) forms hold their zeros without an eigenvalue problem: convert the filter to one of them"
	adviceRoots   = "the tf and zpk (without h0) forms hold their poles and zeros without an eigenvalue problem: convert the filter to one of them"
	adviceH2      = "the diagonal form's H2 norm has a closed form in O(n²): convert the filter to it"
	adviceGramian = "every form needs it: distill the filter to a lower order first (ssmlab distill)"
)

// checkCubic refuses an O(n³) analysis of f above MaxCubicOrder, with advice for its form.
func checkCubic(what, advice string, f filters.Filter) error {
	if n := f.Order(); n > MaxCubicOrder {
		return &OrderLimitError{What: what, Order: n, Limit: MaxCubicOrder, Advice: advice}
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
		if err := checkCubic("the spectral radius", advicePoles, f); err != nil {
			return 0, err
		}
	}
	return filters.SpectralRadius(f)
}

// Poles returns the poles of f (filters.Poles), refusing a dense filter above MaxCubicOrder
// with an *OrderLimitError.
func Poles(f filters.Filter) ([]complex128, error) {
	if cubicPoles(f) {
		if err := checkCubic("the poles", advicePoles, f); err != nil {
			return nil, err
		}
	}
	return filters.Poles(f)
}
