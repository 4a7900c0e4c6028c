package layouts

import (
	"fmt"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The sos layout: second-order sections in cascade, as scipy.signal.sosfilt and MATLAB's sos
// run a filter. One tensor, sos, of shape (sections, 6) for one filter or (channels,
// sections, 6) for a bank; each row [b0 b1 b2 a0 a1 a2] is (b0 + b1z⁻¹ + b2z⁻²)/(a0 + a1z⁻¹ +
// a2z⁻²). filters.Sections and filters.FromSections hold the numerics; no model's module
// loads it, so a distilled checkpoint's layers are not written in it.

// NameSOS is the tensor of the sos layout.
const NameSOS = "sos"

func init() { impls[SOS] = sosLayout{} }

type sosLayout struct{}

func (sosLayout) params() []string { return []string{NameSOS} }

func (sosLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	info, ok := in[p+NameSOS]
	s := shapeOf(in, p+NameSOS, 3)
	if !ok || len(info.Shape) < 2 || s == nil || s[2] != 6 {
		return Layer{}, false
	}
	return Layer{Channels: s[0], Order: 2 * s[1], DType: info.DType}, true
}

func (sosLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	full := t.prefix + NameSOS
	single := len(t.infos[full].Shape) <= 2 // (sections, 6): one filter
	shape := []int{-1, -1, 6}
	a, err := t.get(NameSOS, "(sections, 6) or (channels, sections, 6)", shape)
	if err != nil {
		return Result{}, err
	}
	chans, width := shape[0], shape[1]
	if chans == 0 || width == 0 {
		return Result{}, invalidf("the tensor %q has shape %s: want at least one channel of one section", full, arrays.ShapeString(shape))
	}
	bank := &filters.Bank{Channels: make([]filters.Filter, chans)}
	normalised := false
	for c := range chans {
		sos := make([]filters.Section, width)
		for i := range sos {
			copy(sos[i][:], a.Data[(c*width+i)*6:])
			normalised = normalised || sos[i][3] != 1
		}
		f, err := filters.FromSections(sos)
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), filters.ErrInvalid.Error()+": ")
			if single {
				return Result{}, invalidf("%s", msg)
			}
			return Result{}, invalidf("channel %d: %s", c, msg)
		}
		bank.Channels[c] = f
	}
	what := fmt.Sprintf("bank of %s of %s (%d sections each)", plural.Count(chans, "zpk channel"), orderText(bank), width)
	if single {
		what = fmt.Sprintf("zpk filter of order %d (%d sections)", bank.Channels[0].Order(), width)
	}
	if normalised {
		what += " (sections with a0 ≠ 1 divided by a0)"
	}
	return Result{Bank: bank, Single: single, Note: t.note(what)}, nil
}

func maxOrder(b *filters.Bank) int {
	n := 0
	for _, f := range b.Channels {
		n = max(n, f.Order())
	}
	return n
}

// orderText says the orders of a bank's channels, for a note: "order 6" where they are
// equal, else "order up to 8" (an s4d layer's channels differ where modes of residue 0 are
// left out: modes.filter).
func orderText(b *filters.Bank) string {
	n := maxOrder(b)
	for _, f := range b.Channels {
		if f.Order() != n {
			return fmt.Sprintf("order up to %d", n)
		}
	}
	return fmt.Sprintf("order %d", n)
}

// exportSOS writes the bank's channels as sections (filters.Sections: scipy's zpk2sos with
// pairing 'nearest'), converted to the zpk form first; a channel whose zpk form keeps an
// offset h0 (a direct term ToZPK found negligible, or a zpk filter's own) goes through the
// dense form, whose zeros then include it, and an offset still left is negligible beside
// the response: it is dropped, and the read-back check measures what that costs. Channels
// of fewer sections are padded with filters.Identity. single writes one filter as
// (sections, 6).
func exportSOS(bank *filters.Bank, single bool, prefix string) ([]arrays.Named, []filters.Report, error) {
	var reports []filters.Report
	if bank.Form() != filters.FormZPK {
		var err error
		if bank, reports, err = filters.ConvertBank(bank, filters.FormZPK); err != nil {
			return nil, nil, fmt.Errorf("the sos layout holds zeros and poles: %w", err)
		}
	}
	secs := make([][]filters.Section, len(bank.Channels))
	width := 0
	for c, f := range bank.Channels {
		z, ok := f.(*filters.ZPK)
		if !ok {
			return nil, nil, invalidf("channel %d is %s after conversion to zpk", c, f.Form())
		}
		if z.H0 != 0 {
			d, rep, err := filters.ToDense(z)
			if err != nil {
				return nil, nil, fmt.Errorf("channel %d: folding h0 into the zeros: %w", c, err)
			}
			folded, rep2, err := filters.ToZPK(d)
			if err != nil {
				return nil, nil, fmt.Errorf("channel %d: folding h0 into the zeros: %w", c, err)
			}
			reports = append(reports, rep, rep2)
			z = &filters.ZPK{Zeros: folded.Zeros, Poles: folded.Poles, Gain: folded.Gain}
		}
		s, err := filters.Sections(z)
		if err != nil {
			return nil, nil, fmt.Errorf("channel %d: %w", c, err)
		}
		secs[c] = s
		width = max(width, len(s))
	}
	data := make([]float64, 0, len(secs)*width*6)
	for _, s := range secs {
		for i := range width {
			row := filters.Identity
			if i < len(s) {
				row = s[i]
			}
			data = append(data, row[:]...)
		}
	}
	shape := []int{len(secs), width, 6}
	if single {
		shape = shape[1:]
	}
	out, err := named(prefix, []string{NameSOS}, [][]int{shape}, data)
	return out, reports, err
}
