package sessions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The RTF layout's numerics (tensor roles, the truncation correction, the l1_montel
// constraint) are in package rtf; this file maps its layers to named arrays.

// Tensor names of the RTF layout.
const (
	RTFCoefficients = rtf.NameAB
	RTFDirect       = rtf.NameH0
	RTFScalar       = rtf.NameScalar
)

// MaxTruncLen is the largest RTFOptions.TruncLen accepted.
const MaxTruncLen = rtf.MaxTruncLen

// RTFOptions choose how a bank maps to the RTF layout.
type RTFOptions struct {
	// Prefix is put before the tensor names: "layers.0.filter." gives
	// "layers.0.filter.ab" and "layers.0.filter.h_0", as in a model's state_dict.
	Prefix string
	// TruncLen is the layer's trunc_len L. When it is positive, numerators are stored (and
	// read) as the module trains them, with the truncation correction of the RTF paper's
	// eq. 13 (see rtf.FromBank); when it is 0, as they are.
	TruncLen int
}

// ExportRTF returns the RTF tensors of a filter or bank (a single filter is a bank of one
// channel): Prefix+"ab" and Prefix+"h_0", as rtf.FromBank lays them out, with the reports
// of the channels it converted to the tf form (nil when none was).
func ExportRTF(doc filters.Document, o RTFOptions) ([]arrays.Named, []filters.Report, error) {
	chans := doc.Bank
	if doc.Filter != nil {
		chans = &filters.Bank{Channels: []filters.Filter{doc.Filter}}
	}
	l, reports, err := rtf.FromBank(chans, o.TruncLen)
	if err != nil {
		return nil, nil, invalidRTF(err)
	}
	abArr, err := arrays.New([]int{l.NumA + l.Channels(), l.Order}, l.AB)
	if err != nil {
		return nil, nil, err
	}
	h0Arr, err := arrays.New([]int{l.Channels()}, l.H0)
	if err != nil {
		return nil, nil, err
	}
	return []arrays.Named{{Name: o.Prefix + RTFCoefficients, Array: abArr}, {Name: o.Prefix + RTFDirect, Array: h0Arr}}, reports, nil
}

// invalidRTF marks an error of package rtf as one of ErrInvalid, keeping its chain.
func invalidRTF(err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

// ImportRTF returns the bank of transfer functions an RTF layer's tensors describe: ab of
// shape (num_a + D, N) and h_0 of shape (D), with num_a dividing D, and, for a layer built
// with the "l1_montel" constraint, its scalar of shape (num_a) (nil otherwise); see
// rtf.Layer.
func ImportRTF(ab, h0, scalar *arrays.Array, o RTFOptions) (*filters.Bank, error) {
	if len(ab.Shape) != 2 {
		return nil, invalidf("%q has shape %s, want (num_a + D, N)", RTFCoefficients, arrays.ShapeString(ab.Shape))
	}
	if len(h0.Shape) != 1 {
		return nil, invalidf("%q has shape %s, want (D)", RTFDirect, arrays.ShapeString(h0.Shape))
	}
	l := &rtf.Layer{AB: ab.Data, H0: h0.Data, NumA: ab.Shape[0] - h0.Shape[0], Order: ab.Shape[1]}
	if scalar != nil {
		if len(scalar.Shape) != 1 || scalar.Shape[0] != l.NumA {
			return nil, invalidf("%q has shape %s, want (%d): one per denominator", RTFScalar, arrays.ShapeString(scalar.Shape), max(l.NumA, 0))
		}
		l.Scalar = scalar.Data
	}
	bank, err := l.Bank(o.TruncLen)
	if err != nil {
		return nil, invalidRTF(err)
	}
	return bank, nil
}

// FindRTF returns the prefix of the RTF layer among the array names: the P such that P+"ab"
// and P+"h_0" are both present, P being empty or ending in "." (as in a state_dict). want
// selects one: a prefix ("layers.0.filter." or "layers.0.filter") or one of the layer's
// tensor names. With no want, the layer must be the only one. It reports false when there
// is no layer (or none matching want), and an error when the choice is ambiguous.
func FindRTF(names []string, want string) (string, bool, error) {
	prefixes := rtf.Prefixes(names)
	if want != "" {
		for _, p := range prefixes {
			if rtf.Names(p, want) {
				return p, true, nil
			}
		}
		return "", false, nil
	}
	switch len(prefixes) {
	case 0:
		return "", false, nil
	case 1:
		return prefixes[0], true, nil
	}
	return "", false, &ChoiceError{What: "RTF layers", Names: prefixes}
}

// ChoiceError is returned when a file holds several things to import and none was chosen.
type ChoiceError struct {
	What  string   // "arrays" or "RTF layers"
	Names []string // the choices
}

func (e *ChoiceError) Error() string {
	const shown = 10
	quoted := make([]string, 0, shown)
	for _, n := range e.Names[:min(len(e.Names), shown)] {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	more := ""
	if len(e.Names) > shown {
		more = fmt.Sprintf(" and %d more", len(e.Names)-shown)
	}
	return fmt.Sprintf("the file holds %d %s; choose one: %s%s", len(e.Names), e.What, strings.Join(quoted, ", "), more)
}

// ReadBack measures what a training module gets from RTF tensors written by ExportRTF: the
// tensors are rounded to dt and measured by rtf.ReadBack against doc's filters. It returns
// the worst channel's relative L2 error, that channel and the samples compared; an error
// when the tensors cannot be read back.
func ReadBack(doc filters.Document, tensors []arrays.Named, dt arrays.DType, o RTFOptions) (worst float64, channel, n int, err error) {
	chans := []filters.Filter{doc.Filter}
	if doc.Bank != nil {
		chans = doc.Bank.Channels
	}
	var ab, h0 *arrays.Array
	for _, t := range tensors {
		switch t.Name {
		case o.Prefix + RTFCoefficients:
			ab = rounded(t.Array, dt)
		case o.Prefix + RTFDirect:
			h0 = rounded(t.Array, dt)
		}
	}
	if ab == nil || h0 == nil || len(ab.Shape) != 2 {
		return 0, 0, 0, invalidf("the tensors lack %q or %q", o.Prefix+RTFCoefficients, o.Prefix+RTFDirect)
	}
	l := &rtf.Layer{AB: ab.Data, H0: h0.Data, NumA: ab.Shape[0] - h0.Shape[0], Order: ab.Shape[1]}
	worst, channel, n, err = rtf.ReadBack(chans, l, o.TruncLen)
	if err != nil {
		return 0, 0, 0, invalidRTF(err)
	}
	return worst, channel, n, nil
}

// rounded returns a with its values rounded to dt (a itself for float64).
func rounded(a *arrays.Array, dt arrays.DType) *arrays.Array {
	if dt != arrays.Float32 {
		return a
	}
	r := a.Clone()
	for i, v := range r.Data {
		r.Data[i] = float64(float32(v))
	}
	return r
}
