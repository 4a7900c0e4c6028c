package sessions

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The parameter layout of the RTF reference implementation's layer (ruke1ire/RTF, rtf.py,
// class RTF; seed 004 eq. 4 and Alg. 1), for D channels of state size N:
//
//	ab   (num_a + D, N)  rows 0 … num_a-1: the denominators a₁…a_N (the monic a₀ = 1 is not
//	                     stored: the module sets it after padding); rows num_a … num_a+D-1:
//	                     the numerators b₁…b_N (b₀ = 0 is not stored either)
//	h_0  (D)             the direct terms
//
// so that channel c is H(z) = h_0[c] + (b₁z⁻¹+…+b_Nz⁻ᴺ)/(1 + a₁z⁻¹+…+a_Nz⁻ᴺ), with a taken
// from row c / (D/num_a) and b from row num_a + c. num_a = D unless the layer shares
// denominators (num_a divides D). ssmlab writes num_a = D: ab is (2·D, N), as
// `RTF(d_model=D, state_size=N, trunc_len=L)` creates it.
//
// The module computes its kernel by FFTs of length M = L + L mod 2 (L = trunc_len) of the
// zero-padded coefficients, which yields the M-periodic sum of the impulse response,
// Σⱼ h[t + jM], not h[t]. It therefore trains the corrected numerator b̃ = C(I − A^L) of
// seed 004 eq. 13 (C = b in the companion form of eq. 16), and its get_C undoes it for
// recurrent inference. RTFOptions.TruncLen makes the export store b̃ and the import undo it
// (C·A^M by M steps of the companion recurrence, O(M·N); its inverse by the Neumann series
// Σₖ b̃·A^{kM}, which converges for stable filters).

// Tensor names of the RTF layout.
const (
	RTFCoefficients = "ab"
	RTFDirect       = "h_0"
	// RTFScalar is the extra parameter of the layer's "l1_montel" constraint: the
	// denominators it uses are a / (Σ|aₖ| + |scalar| + 1e-6), one scalar per denominator row.
	RTFScalar = "scalar"
)

// MaxTruncLen is the largest RTFOptions.TruncLen accepted (the correction costs
// O(TruncLen · N) per channel).
const MaxTruncLen = 1 << 22

// maxCorrectionWork caps TruncLen · N · D, the multiply-adds of one truncation correction
// of a layer (2^34: about a minute), so that a mistyped trunc_len fails at once.
const maxCorrectionWork = 1 << 34

// montelEps is the 1e-6 of the reference implementation's l1_montel constraint.
const montelEps = 1e-6

// RTFOptions choose how a bank maps to the RTF layout.
type RTFOptions struct {
	// Prefix is put before the tensor names: "layers.0.filter." gives
	// "layers.0.filter.ab" and "layers.0.filter.h_0", as in a model's state_dict.
	Prefix string
	// TruncLen is the layer's trunc_len L. When it is positive, numerators are stored (and
	// read) as the module trains them, b̃ = b(I − A^M) (seed 004 eq. 13) with M = L + L mod 2,
	// the module's FFT length. The module's convolution kernel is then the filter's impulse
	// response h[t] for 1 ≤ t < L, and h[0] + h[M] at t = 0 (its algorithm folds the sample
	// at M onto 0); for even L its get_C returns b. When TruncLen is 0, b is stored as it is
	// and every sample of the module's kernel carries the aliased tail Σⱼ≥₁ h[t + jM]. Both
	// differences vanish once the response has decayed within L samples.
	TruncLen int
}

func (o RTFOptions) fftLen() int { return o.TruncLen + o.TruncLen%2 }

func (o RTFOptions) checkWork(channels, order int) error {
	if work := float64(o.TruncLen) * float64(order) * float64(channels); work > maxCorrectionWork {
		return invalidf("the truncation correction for trunc_len %d of %d channels of order %d would take %.2g operations, more than the limit of %.2g", o.TruncLen, channels, order, work, float64(maxCorrectionWork))
	}
	return nil
}

func (o RTFOptions) check() error {
	if o.TruncLen < 0 || o.TruncLen > MaxTruncLen {
		return invalidf("trunc_len %d is outside [0, %d]", o.TruncLen, MaxTruncLen)
	}
	return nil
}

// ExportRTF returns the RTF tensors of a filter or bank (a single filter is a bank of one
// channel): Prefix+"ab" and Prefix+"h_0". Channels not in the tf form are converted to it
// first (companion coefficients are taken as they are); the conversion reports are
// returned, nil when nothing was converted. Channels of lower order are padded with zero
// coefficients, which leaves their transfer function unchanged.
func ExportRTF(doc filters.Document, o RTFOptions) ([]arrays.Named, []filters.Report, error) {
	if err := o.check(); err != nil {
		return nil, nil, err
	}
	chans := doc.Bank
	if doc.Filter != nil {
		chans = &filters.Bank{Channels: []filters.Filter{doc.Filter}}
	}
	if chans == nil || len(chans.Channels) == 0 {
		return nil, nil, invalidf("nothing to export: the document holds no filter")
	}
	den := make([][]float64, len(chans.Channels))
	num := make([][]float64, len(chans.Channels))
	h0 := make([]float64, len(chans.Channels))
	var reports []filters.Report
	switch chans.Form() {
	case filters.FormTF, filters.FormCompanion:
	default:
		var err error
		if chans, reports, err = filters.ConvertBank(chans, filters.FormTF); err != nil {
			return nil, nil, err
		}
	}
	n := 0
	for c, f := range chans.Channels {
		switch f := f.(type) {
		case *filters.TransferFunction:
			den[c], num[c], h0[c] = f.Den, f.Num, f.H0
		case *filters.Companion:
			den[c], num[c], h0[c] = f.Den, f.Num, f.H0
		default:
			return nil, nil, invalidf("channel %d is %s after conversion to tf", c, f.Form())
		}
		n = max(n, len(den[c]))
	}
	d := len(den)
	if err := o.checkWork(d, n); err != nil {
		return nil, nil, err
	}
	ab := make([]float64, 2*d*n)
	errs := make([]error, d)
	filters.ForEachChannel(d, func(c int) {
		b := num[c]
		if o.TruncLen > 0 {
			b, errs[c] = truncateNum(den[c], b, o.fftLen())
		}
		copy(ab[c*n:], den[c])
		copy(ab[(d+c)*n:], b)
	})
	for c, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("channel %d: %w", c, err)
		}
	}
	abArr, err := arrays.New([]int{2 * d, n}, ab)
	if err != nil {
		return nil, nil, err
	}
	h0Arr, err := arrays.New([]int{d}, h0)
	if err != nil {
		return nil, nil, err
	}
	return []arrays.Named{{Name: o.Prefix + RTFCoefficients, Array: abArr}, {Name: o.Prefix + RTFDirect, Array: h0Arr}}, reports, nil
}

// ImportRTF returns the bank of transfer functions an RTF layer's tensors describe: ab of
// shape (num_a + D, N) and h_0 of shape (D), with num_a dividing D, and, for a layer built
// with the "l1_montel" constraint, its scalar of shape (num_a) (nil otherwise). A
// bidirectional layer's tensors read as 2·D channels, the last D of which the module
// applies backwards in time.
func ImportRTF(ab, h0, scalar *arrays.Array, o RTFOptions) (*filters.Bank, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if len(ab.Shape) != 2 {
		return nil, invalidf("%q has shape %s, want (num_a + D, N)", RTFCoefficients, arrays.ShapeString(ab.Shape))
	}
	if len(h0.Shape) != 1 {
		return nil, invalidf("%q has shape %s, want (D)", RTFDirect, arrays.ShapeString(h0.Shape))
	}
	rows, n, d := ab.Shape[0], ab.Shape[1], h0.Shape[0]
	numA := rows - d
	switch {
	case d == 0:
		return nil, invalidf("%q is empty: a layer has at least one channel", RTFDirect)
	case d > filters.MaxChannels:
		return nil, invalidf("%d channels exceed the limit of %d", d, filters.MaxChannels)
	case n > filters.MaxOrder:
		return nil, invalidf("state size %d exceeds the limit of %d", n, filters.MaxOrder)
	case numA < 1 || numA > d || d%numA != 0:
		return nil, invalidf("%q has %d rows and %q %d entries: want ab of shape (num_a + D, N) with num_a dividing D (2·D rows without shared denominators)", RTFCoefficients, rows, RTFDirect, d)
	}
	if err := o.checkWork(d, n); err != nil {
		return nil, err
	}
	rowsOf := ab.Rows()
	dens := make([][]float64, numA)
	for i := range dens {
		dens[i] = slices.Clone(rowsOf[i])
	}
	if scalar != nil {
		if len(scalar.Shape) != 1 || scalar.Shape[0] != numA {
			return nil, invalidf("%q has shape %s, want (%d): one per denominator", RTFScalar, arrays.ShapeString(scalar.Shape), numA)
		}
		for i, a := range dens {
			l1 := 0.0
			for _, x := range a {
				l1 += math.Abs(x)
			}
			norm := l1 + math.Abs(scalar.Data[i]) + montelEps
			for k := range a {
				a[k] /= norm
			}
		}
	}
	chans := make([]filters.Filter, d)
	errs := make([]error, d)
	share := d / numA
	filters.ForEachChannel(d, func(c int) {
		a, b := dens[c/share], rowsOf[numA+c]
		if o.TruncLen > 0 {
			if b, errs[c] = untruncateNum(a, b, o.fftLen()); errs[c] != nil {
				return
			}
		}
		chans[c], errs[c] = filters.NewTransferFunction(a, b, h0.Data[c])
	})
	for c, err := range errs {
		if err != nil {
			return nil, within(fmt.Sprintf("channel %d", c), err)
		}
	}
	return filters.NewBank(chans)
}

// companionStep sets w = v·A for the companion matrix of eq. 16 (first row -a, ones on the
// subdiagonal): w_j = -v₀a_j + v_{j+1}.
func companionStep(w, v, a []float64) {
	n := len(a)
	for j := range n {
		w[j] = -v[0] * a[j]
		if j+1 < n {
			w[j] += v[j+1]
		}
	}
}

// powerTimes returns v·A^m in O(m·n), failing if it overflows.
func powerTimes(v, a []float64, m int) ([]float64, error) {
	cur, next := slices.Clone(v), make([]float64, len(v))
	for range m {
		companionStep(next, cur, a)
		cur, next = next, cur
	}
	for _, x := range cur {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, invalidf("the truncation correction overflows: C·A^%d is not finite (the filter is unstable)", m)
		}
	}
	return cur, nil
}

// truncateNum returns b̃ = b(I − A^m) in the companion coordinates.
func truncateNum(a, b []float64, m int) ([]float64, error) {
	if len(a) == 0 {
		return []float64{}, nil
	}
	tail, err := powerTimes(b, a, m)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(b))
	for i := range b {
		out[i] = b[i] - tail[i]
	}
	return out, nil
}

// maxNeumann bounds the terms of the series untruncateNum sums.
const maxNeumann = 400

// untruncateNum solves b(I − A^m) = b̃ for b by the Neumann series b = Σₖ b̃·A^{km}, which
// converges when every pole lies inside the unit circle (its terms shrink like ρ^{km}). It
// stops once a term is below the rounding of the sum.
func untruncateNum(a, bt []float64, m int) ([]float64, error) {
	if len(a) == 0 {
		return []float64{}, nil
	}
	sum, term := slices.Clone(bt), slices.Clone(bt)
	for range maxNeumann {
		var err error
		if term, err = powerTimes(term, a, m); err != nil {
			return nil, err
		}
		tn, sn := 0.0, 0.0
		for i := range sum {
			sum[i] += term[i]
			tn = max(tn, math.Abs(term[i]))
			sn = max(sn, math.Abs(sum[i]))
		}
		if tn <= 0x1p-53*sn {
			return sum, nil
		}
	}
	return nil, invalidf("undoing the truncation correction does not converge in %d terms: a pole lies on or too near the unit circle for trunc_len", maxNeumann)
}

// FindRTF returns the prefix of the RTF layer among the array names: the P such that P+"ab"
// and P+"h_0" are both present, P being empty or ending in "." (as in a state_dict). want
// selects one: a prefix ("layers.0.filter." or "layers.0.filter") or one of the layer's
// tensor names. With no want, the layer must be the only one. It reports false when there
// is no layer (or none matching want), and an error when the choice is ambiguous.
func FindRTF(names []string, want string) (string, bool, error) {
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	var prefixes []string
	for _, n := range names {
		p, ok := strings.CutSuffix(n, RTFCoefficients)
		if ok && (p == "" || strings.HasSuffix(p, ".")) && have[p+RTFDirect] {
			prefixes = append(prefixes, p)
		}
	}
	sort.Strings(prefixes)
	if want != "" {
		for _, p := range prefixes {
			if want == p || want+"." == p || want == p+RTFCoefficients || want == p+RTFDirect || want == p+RTFScalar {
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
// tensors are rounded to dt, read back as ImportRTF reads them (the truncation correction
// undone, as the module's get_C does), and every channel's impulse response is compared with
// doc's over n samples: trunc_len, or filters.ReportLength of doc's spectral radius when it
// is 0. It returns the worst channel's relative L2 error, that channel and n; an error when
// the tensors cannot be read back.
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
	if ab == nil || h0 == nil {
		return 0, 0, 0, invalidf("the tensors lack %q or %q", o.Prefix+RTFCoefficients, o.Prefix+RTFDirect)
	}
	back, err := ImportRTF(ab, h0, nil, o)
	if err != nil {
		return 0, 0, 0, err
	}
	n = o.TruncLen
	if n == 0 {
		rho := 0.0
		for _, f := range chans {
			r, err := filters.SpectralRadius(f)
			if err != nil {
				r = math.NaN()
			}
			rho = max(rho, r)
		}
		n = filters.ReportLength(rho)
	}
	for c, f := range chans {
		e := filters.RelDiff(f.Impulse(n), back.Channels[c].Impulse(n))
		if math.IsNaN(e) || math.IsInf(e, 0) {
			e = math.MaxFloat64
		}
		if e > worst {
			worst, channel = e, c
		}
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
