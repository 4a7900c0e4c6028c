package rtf

import (
	"fmt"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/fft"
)

// Tensor names of the layout, as in the reference module's state_dict (after a module
// prefix such as "layers.0.filter.").
const (
	NameAB = "ab"  // (num_a + D, N): denominators, then numerators
	NameH0 = "h_0" // (D): direct terms
	// NameScalar is the extra parameter of the "l1_montel" constraint, (num_a).
	NameScalar = "scalar"
)

// MaxTruncLen is the largest trunc_len accepted (the correction costs O(trunc_len · N) per
// channel).
const MaxTruncLen = 1 << 22

// maxCorrectionWork caps trunc_len · N · D, the multiply-adds of one truncation correction
// of a layer (2^34: about a minute), so that a mistyped trunc_len fails at once.
const maxCorrectionWork = 1 << 34

// Layer is one RTF layer's parameters in the reference module's layout (see the package
// documentation): AB holds (NumA + D) rows of Order values, row-major, H0 the D direct
// terms, Scalar the NumA values of the l1_montel constraint or nil.
type Layer struct {
	AB          []float64
	H0          []float64
	Scalar      []float64
	NumA, Order int
}

// Channels returns D, the number of channels.
func (l *Layer) Channels() int { return len(l.H0) }

func checkTruncLen(truncLen int) error {
	if truncLen < 0 || truncLen > MaxTruncLen {
		return invalidf("trunc_len %d is outside [0, %d]", truncLen, MaxTruncLen)
	}
	return nil
}

func checkWork(truncLen, channels, order int) error {
	if work := float64(truncLen) * float64(order) * float64(channels); work > maxCorrectionWork {
		return invalidf("the truncation correction for trunc_len %d of %d channels of order %d would take %.2g operations, more than the limit of %.2g", truncLen, channels, order, work, float64(maxCorrectionWork))
	}
	return nil
}

// FromBank returns the layer of a bank (num_a = D, no scalar). Channels not in the tf form
// are converted to it first (companion coefficients are taken as they are); the conversion
// reports are returned, nil when nothing was converted. Channels of lower order are padded
// with zero coefficients, which leaves their transfer functions unchanged. With truncLen > 0
// the numerators are stored as the module trains them, b̃ = b(I − Aᴹ) with M = FFTLen(truncLen),
// and h_0 as h0 − h[M]: the module's FFT kernel (ModuleKernels, what its forward pass uses)
// folds h[M] onto t = 0, so it is then exactly h[t] for 0 ≤ t < truncLen. Its recurrent step
// (get_C) then gives h0 − h[M] at t = 0, as for any module trained with trunc_len. With
// truncLen 0, b and h0 are stored as they are and every sample of the module's kernel
// carries the aliased tail Σⱼ≥₁ h[t + jM], negligible once the response has decayed within
// truncLen.
func FromBank(bank *filters.Bank, truncLen int) (*Layer, []filters.Report, error) {
	if err := checkTruncLen(truncLen); err != nil {
		return nil, nil, err
	}
	if bank == nil || len(bank.Channels) == 0 {
		return nil, nil, invalidf("nothing to export: no filter")
	}
	var reports []filters.Report
	switch bank.Form() {
	case filters.FormTF, filters.FormCompanion:
	default:
		var err error
		if bank, reports, err = filters.ConvertBank(bank, filters.FormTF); err != nil {
			return nil, nil, err
		}
	}
	d := len(bank.Channels)
	den, num := make([][]float64, d), make([][]float64, d)
	l := &Layer{H0: make([]float64, d), NumA: d}
	for c, f := range bank.Channels {
		switch f := f.(type) {
		case *filters.TransferFunction:
			den[c], num[c], l.H0[c] = f.Den, f.Num, f.H0
		case *filters.Companion:
			den[c], num[c], l.H0[c] = f.Den, f.Num, f.H0
		default:
			return nil, nil, invalidf("channel %d is %s after conversion to tf", c, f.Form())
		}
		l.Order = max(l.Order, len(den[c]))
	}
	n := l.Order
	if err := checkWork(truncLen, d, n); err != nil {
		return nil, nil, err
	}
	l.AB = make([]float64, 2*d*n)
	errs := make([]error, d)
	filters.ForEachChannel(d, func(c int) {
		b := num[c]
		if truncLen > 0 {
			var fold float64
			b, fold, errs[c] = TruncateFold(den[c], b, FFTLen(truncLen))
			l.H0[c] -= fold
		}
		copy(l.AB[c*n:], den[c])
		copy(l.AB[(d+c)*n:], b)
	})
	for c, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("channel %d: %w", c, err)
		}
	}
	return l, reports, nil
}

// Bank returns the bank of transfer functions the layer describes, with the l1_montel
// constraint applied when the layer has a scalar and, with truncLen > 0, the truncation
// correction undone (Untruncate) and h0 = h_0 + h[M] (Fold): the filter whose first truncLen
// samples are the module's FFT kernel (ModuleKernels), t = 0 included, the inverse of
// FromBank. Errors name the channel.
func (l *Layer) Bank(truncLen int) (*filters.Bank, error) {
	if err := checkTruncLen(truncLen); err != nil {
		return nil, err
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	d, n, numA := l.Channels(), l.Order, l.NumA
	if err := checkWork(truncLen, d, n); err != nil {
		return nil, err
	}
	row := func(i int) []float64 { return l.AB[i*n : (i+1)*n : (i+1)*n] }
	dens := make([][]float64, numA)
	for i := range dens {
		dens[i] = row(i)
		if l.Scalar != nil {
			dens[i] = L1Montel(nil, dens[i], l.Scalar[i])
		}
	}
	chans := make([]filters.Filter, d)
	errs := make([]error, d)
	share := d / numA
	work := maxCorrectionWork / d // each channel's share of the limit
	filters.ForEachChannel(d, func(c int) {
		a, b, h0 := dens[c/share], row(numA+c), l.H0[c]
		if truncLen > 0 {
			m := FFTLen(truncLen)
			if b, errs[c] = untruncate(a, b, m, work); errs[c] != nil {
				return
			}
			var fold float64
			if fold, errs[c] = Fold(a, b, m); errs[c] != nil {
				return
			}
			h0 += fold
		}
		chans[c], errs[c] = filters.NewTransferFunction(a, b, h0)
	})
	for c, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("channel %d: %w", c, err)
		}
	}
	return filters.NewBank(chans)
}

// ModuleKernels returns the first length samples of each channel's convolution kernel as the
// reference module's get_k computes it for trunc_len truncLen (rtf.py lines 78–95; RTF paper,
// Algorithm 1): irfft(rfft(b̃)/rfft(a) + h_0) over M = FFTLen(truncLen) points of the
// zero-padded coefficients (Spectra, SpectraAny), the l1_montel constraint applied where the
// layer has a scalar. That is the M-periodic sum of the response of (a, b̃, h_0): b̃'s h[t]
// for 1 ≤ t < M and h_0 + h[M] at t = 0. It fails unless 1 ≤ length ≤ truncLen (get_k's
// assertion).
func (l *Layer) ModuleKernels(truncLen, length int) ([][]float64, error) {
	if err := checkTruncLen(truncLen); err != nil {
		return nil, err
	}
	if length < 1 || length > truncLen {
		return nil, invalidf("a kernel of %d samples of a module of trunc_len %d: want 1 to trunc_len", length, truncLen)
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	d, n, numA := l.Channels(), l.Order, l.NumA
	if err := checkWork(truncLen, d, n); err != nil {
		return nil, err
	}
	m := FFTLen(truncLen)
	share := d / numA
	out := make([][]float64, d)
	filters.ForEachChannel(d, func(c int) {
		a := l.AB[c/share*n : (c/share+1)*n]
		if l.Scalar != nil {
			a = L1Montel(nil, a, l.Scalar[c/share])
		}
		h := m/2 + 1
		g, fb := make([]complex128, h), make([]complex128, h)
		pa, pb := make([]float64, m), make([]float64, m)
		r := fft.NewReal(m)
		SpectraAny(r, g, nil, a, l.AB[(numA+c)*n:(numA+c+1)*n], 1/float64(m), pa, pb, fb)
		k := r.Sequence(pa, g)
		k[0] += l.H0[c]
		out[c] = k[:length:length]
	})
	return out, nil
}

// check reports a layer whose sizes do not fit together.
func (l *Layer) check() error {
	d, n, numA := l.Channels(), l.Order, l.NumA
	switch {
	case d == 0:
		return invalidf("%q is empty: a layer has at least one channel", NameH0)
	case d > filters.MaxChannels:
		return invalidf("%d channels exceed the limit of %d", d, filters.MaxChannels)
	case n < 0 || n > filters.MaxOrder:
		return invalidf("state size %d is outside [0, %d]", n, filters.MaxOrder)
	case numA < 1 || numA > d || d%numA != 0:
		return invalidf("%q has %d rows and %q %d entries: want %s of shape (num_a + D, N) with num_a dividing D (2·D rows without shared denominators)", NameAB, numA+d, NameH0, d, NameAB)
	case len(l.AB) != (numA+d)*n:
		return invalidf("%q holds %d values, want (%d + %d)·%d", NameAB, len(l.AB), numA, d, n)
	case l.Scalar != nil && len(l.Scalar) != numA:
		return invalidf("%q has %d values, want (%d): one per denominator", NameScalar, len(l.Scalar), numA)
	}
	return nil
}
