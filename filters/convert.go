package filters

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Report describes how exact a conversion was. Its numbers are always finite: an infinite
// condition number or an overflowing response saturates at math.MaxFloat64 with a warning.
type Report struct {
	From Form `json:"from"`
	To   Form `json:"to"`
	// Condition estimates how strongly rounding errors can grow in this conversion;
	// ConditionOf says of what it is the condition number. Conditioned is set where the
	// conversion has a step that can lose digits; without one, Condition is 1 and
	// ConditionOf says why ("none (orthogonal P = I)").
	Condition   float64 `json:"condition"`
	ConditionOf string  `json:"condition_of"`
	Conditioned bool    `json:"conditioned"`
	// RelError is the measured ‖h_in - h_out‖₂/‖h_in‖₂ over the first Length samples of the
	// impulse responses (absolute when h_in is zero), 0 when they agree bit for bit and at
	// least RelErrorFloor otherwise. Length is ReportLength of the filter's
	// spectral radius and the larger order n; for a stable filter it starts from at least
	// 2(n + 1) and is doubled, up to MaxReportLength, until both responses have decayed to
	// 1e-12 of their peak over t ≥ 1 and stayed there over the window's second half
	// (MeasureDecay). For a filter that is not stable, whose growing response's error over
	// the window is its last samples', it is the larger of that and the error over the first
	// 2(n + 1) samples, which decide a filter of order n (a dropped tap at t = 1 is lost in
	// the rounding of samples grown to 1e90). Responses whose peak lies below 2^-960, where float64 holds fewer
	// digits or none (B = C = 1e-200), are compared with both filters scaled by one power of
	// two, from the input's coefficients, and a warning says so.
	RelError float64 `json:"rel_error"`
	Length   int     `json:"length"`
	// BecameUnstable is set when the filter was stable and its new form is not (a
	// high-order polynomial cannot hold clustered poles in float64).
	BecameUnstable bool     `json:"became_unstable,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
}

// UnmarshalJSON reads a report as encoding/json writes it. A report written before
// "conditioned" was a field (sessions' saved reports, convert --report files) lacks it: it
// is then read from ConditionOf, as it was derived before, conditioned unless the message
// begins "none (", so that an old conditioned conversion does not lose its condition number.
func (r *Report) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil // as encoding/json does: nothing to read
	}
	type plain Report // without this method
	v := struct {
		*plain
		Conditioned *bool `json:"conditioned"` // shadows plain's: nil when absent
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.Conditioned != nil {
		r.Conditioned = *v.Conditioned
	} else {
		r.Conditioned = !strings.HasPrefix(r.ConditionOf, noCondition)
	}
	return nil
}

// MaxRelError is the documented accuracy of conversions and exports: a result whose
// measured relative error is above it carries a warning and, where a front end writes it
// (ssmlab convert and export, the workbench), fails unless the user forces it (CheckAccuracy).
const MaxRelError = 1e-6

// WarnCondition is the condition number above which a Report carries a warning.
const WarnCondition = 1e8

// MarginalTol is how close to the unit circle a pole counts as on it: poles computed as
// eigenvalues carry errors of a few eps·‖A‖, so |p| ≥ 1 - MarginalTol is not called stable.
const MarginalTol = 1e-10

// Stable reports whether a spectral radius is safely inside the unit circle.
func Stable(rho float64) bool { return rho < 1-MarginalTol }

// ReportLength is the number of impulse samples a comparison starts from for a filter of
// order n and spectral radius rho: enough for a simple mode of radius rho to decay to 1e-16
// of its start, between 64 and MaxReportLength, or 512 for a marginal or unstable filter,
// whose response never decays; and at least n + 1, since the first n + 1 samples of a
// response of order n decide it (zero there, zero throughout), however late it starts.
// A pole of multiplicity k decays as t^(k−1)·ρ^t, which peaks near t = (k−1)/ln(1/ρ): a
// conversion's report starts a stable filter's window from at least 2(n + 1) samples and
// extends it until the responses have decayed (Report.Length, comparisonWindow).
func ReportLength(rho float64, n int) int {
	l := 512
	switch {
	case math.IsNaN(rho) || !Stable(rho):
	case rho < 1e-3:
		l = 64
	default:
		l = int(math.Min(math.Max(math.Ceil(math.Log(1e-16)/math.Log(rho))+1, 64), MaxReportLength))
	}
	return max(l, n+1)
}

// MaxReportLength is the longest window a report compares for a stable filter of order
// below it: a response that has not decayed there (a pole within about 1e-2 of the unit
// circle) is compared over its first MaxReportLength samples only.
const MaxReportLength = 4096

// comparisonWindow is the window over which responses of filters of order up to n and
// spectral radius rho are compared, Report's and CompareBanks's: the first window and the
// longest MeasureDecay may double it to. A multiple or clustered pole's response can still
// be rising at the end of the first window: a stable filter's doubles until the responses
// have decayed, from at least 2(n + 1) samples, as analysis's effective memory starts
// (2·LengthForRadius): the order + 1 samples that decide a response and as many again to
// see it stay down. A response that dips and rises again may meet MeasureDecay's rule over
// n + 1 samples (a mode at 0.5 plus 1e-20 times a Jordan block of 80 at 0.3 is below 1e-12
// of its peak from t = 41 to 91, above it again until t = 144). An unstable or marginal
// response never decays, and is measured over ReportLength samples.
func comparisonWindow(rho float64, n int) (start, limit int) {
	start = ReportLength(rho, n)
	if !Stable(rho) {
		return start, start
	}
	start = max(start, 2*(n+1))
	return start, max(start, MaxReportLength)
}

// decayTol is how far both responses must have fallen, against their peak over t ≥ 1, for
// good within a report's window (MeasureDecay). A simple mode falls to it after three
// quarters of a ReportLength set by its radius (16 digits against 12), which is therefore
// doubled once.
const decayTol = 1e-12

// conditioned is what each conversion path knows about its own accuracy.
type conditioned struct {
	value    float64
	of       string
	none     bool // no step that can lose digits (unconditioned)
	warnings []string
}

// noCondition begins the ConditionOf of a conversion without a step that can lose digits,
// followed by why: "none (coefficients copied exactly)". Reports written before Conditioned
// was a field are read by it (Report.UnmarshalJSON).
const noCondition = "none ("

// unconditioned is the conditioned of a conversion without a step that can lose digits:
// value 1, of "none (why)".
func unconditioned(why string) conditioned {
	return conditioned{value: 1, of: noCondition + why + ")", none: true}
}

var exact = unconditioned("coefficients copied exactly")

// Convert returns f in the form to, with a report of the conversion's accuracy.
func Convert(f Filter, to Form) (Filter, Report, error) {
	if err := f.Validate(); err != nil {
		return nil, Report{}, err
	}
	var (
		out Filter
		c   conditioned
		err error
	)
	switch to {
	case FormDense:
		out, c, err = toDense(f)
	case FormDiagonal:
		out, c, err = toDiagonal(f)
	case FormCompanion:
		var tf *TransferFunction
		tf, c, err = toTF(f)
		if err == nil {
			out = &Companion{Den: tf.Den, Num: tf.Num, H0: tf.H0}
		}
	case FormRotation:
		out, c, err = toRotation(f)
	case FormTF:
		out, c, err = toTF(f)
	case FormZPK:
		out, c, err = toZPK(f)
	default:
		_, err = ParseForm(string(to))
	}
	if err != nil {
		return nil, Report{}, fmt.Errorf("%s → %s: %w", f.Form(), to, err)
	}
	if err := out.Validate(); err != nil {
		// The input was finite, so a coefficient that is not is an overflow; the condition says
		// whether the conversion amplified it or the filter's own scale is beyond float64.
		var nf *NonFiniteCoefficientError
		if errors.As(err, &nf) {
			why := "the conversion amplifies it"
			if c.value < 1e8 {
				why = "the filter's own scale is beyond float64 in this form: scale B and C (or the gain) down"
			}
			return nil, Report{}, fmt.Errorf("%s → %s: %w: the result is not representable: its coefficient %s[%d] overflows float64's range (condition of %s %.3g: %s)", f.Form(), to, ErrIllConditioned, nf.Name, nf.Index, c.of, c.value, why)
		}
		return nil, Report{}, fmt.Errorf("%s → %s: %w: the result is not representable: %v (condition of %s %.3g)", f.Form(), to, ErrIllConditioned, err, c.of, c.value)
	}
	return out, measure(f, out, c), nil
}

// ToDense converts f to the dense form.
func ToDense(f Filter) (*Dense, Report, error) { return convertTo[*Dense](f, FormDense) }

// ToDiagonal converts f to the modal form; it fails with ErrDefective for repeated poles or
// a (nearly) defective A.
func ToDiagonal(f Filter) (*Diagonal, Report, error) { return convertTo[*Diagonal](f, FormDiagonal) }

// ToCompanion converts f to the controllable companion form of the RTF paper, eq. 16.
func ToCompanion(f Filter) (*Companion, Report, error) {
	return convertTo[*Companion](f, FormCompanion)
}

// ToRotation converts f to the rotation form (orthogonal P when A is normal).
func ToRotation(f Filter) (*Rotation, Report, error) { return convertTo[*Rotation](f, FormRotation) }

// ToTF converts f to the rational transfer function of the RTF paper, eq. 4.
func ToTF(f Filter) (*TransferFunction, Report, error) {
	return convertTo[*TransferFunction](f, FormTF)
}

// ToZPK converts f to the zero-pole-gain form (zeros of H, H0 = 0 unless D is negligible).
func ToZPK(f Filter) (*ZPK, Report, error) { return convertTo[*ZPK](f, FormZPK) }

func convertTo[T Filter](f Filter, to Form) (T, Report, error) {
	var zero T
	out, rep, err := Convert(f, to)
	if err != nil {
		return zero, rep, err
	}
	return out.(T), rep, nil
}

func measure(in, out Filter, c conditioned) Report {
	rep := Report{From: in.Form(), To: out.Form(), Condition: c.value, ConditionOf: c.of, Conditioned: !c.none, Warnings: c.warnings}
	rho, err := cheapRadius(out)
	if err != nil {
		rho, err = SpectralRadius(in)
	}
	if err != nil {
		rho = math.NaN()
	}
	start, limit := comparisonWindow(rho, max(in.Order(), out.Order()))
	// Responses in or below the subnormal range (B = C = 1e-200: every sample 0) are
	// compared rescaled: a zero filter written for such a filter measured 0.
	cmp := compareResponses(in, out, start, limit, true)
	rep.Length = cmp.decay.Length
	rep.RelError = cmp.relError(Stable(rho))
	if cmp.scaled {
		rep.Warnings = append(rep.Warnings, tinyWarning(cmp.exp))
	}
	estIn, estOut := cmp.estWant, cmp.estGot
	if est, form := max(estIn, estOut), in.Form(); est > MaxRelError {
		if estOut > estIn {
			form = out.Form()
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the %s form's stored numbers and its evaluation fix this response only to about %.3g relative (its rounding-error estimate): the error measured is the form's own as much as the conversion's", form, est))
	}
	switch {
	case math.IsNaN(rho):
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the spectral radius could not be computed: the error is measured over %d samples, and over the first %d on their own", rep.Length, cmp.head()))
	case !Stable(rho):
		// Within MarginalTol inside, the response decays by at most 5e-8 over 512 samples.
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("not stable (spectral radius %s, %s): the error is measured over %d samples of a response that does not decay over them, and over its first %d on their own, which its growth would hide", FormatModulus(rho), CirclePlace(rho), rep.Length, cmp.head()))
	}
	if math.IsNaN(rep.RelError) || math.IsInf(rep.RelError, 0) {
		rep.RelError = math.MaxFloat64
		rep.Warnings = append(rep.Warnings, "the impulse responses overflowed: no accurate digits can be claimed")
	} else if rep.RelError > MaxRelError {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("impulse responses differ by %.3g relative over %d samples", rep.RelError, rep.Length))
	}
	inaccurate := rep.RelError > MaxRelError
	if Stable(rho) && (inaccurate || out.Form() == FormTF || out.Form() == FormCompanion) {
		// Say why when the target form could not hold the poles: typically the coefficients
		// of a high-order polynomial whose roots cluster, where even correctly rounded
		// coefficients put roots outside the unit circle. A polynomial's roots cost O(n²)
		// a sweep, so they are checked even when the responses agree over the samples
		// compared: a pole just outside the circle shows only later.
		if out, err := SpectralRadius(out); err == nil && (out >= 1 || inaccurate && !Stable(out)) {
			rep.BecameUnstable = true
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the %s form of this stable filter is unstable (spectral radius %s → %s): it cannot hold these poles in float64; keep a modal form (diagonal, rotation, zpk)", rep.To, FormatModulus(rho), FormatModulus(out)))
		}
	}
	switch {
	case math.IsNaN(rep.Condition) || math.IsInf(rep.Condition, 0):
		// Reports are printed as JSON, which has no Inf: saturate and say so.
		rep.Condition = math.MaxFloat64
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("condition number of %s is infinite (singular)", rep.ConditionOf))
	case rep.Condition > WarnCondition:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("condition number of %s is %.3g", rep.ConditionOf, rep.Condition))
	}
	return rep
}

// impulseEstimate is f's impulse response with the estimate of its relative rounding error
// where the form makes one (RoundingEstimator), 0 elsewhere.
func impulseEstimate(f Filter, length int) ([]float64, float64) {
	if r, ok := f.(RoundingEstimator); ok {
		h, est, _ := r.ImpulseError(length)
		return h, est
	}
	return f.Impulse(length), 0
}

// RelErrorFloor is the smallest nonzero relative error a conversion's report or CompareBanks
// claims: each response is rounded sample by sample to about this, so a smaller nonzero
// difference between two of them measures only how they happened to round (an unstable tf
// with poles 4 and 1 and its rotation form, bit for bit equal where they reach 1e307,
// measured 2.7e-307; the two filters' exact responses differ by 1.8e-16). 0 still means that
// the two float64 responses agree bit for bit.
const RelErrorFloor = 0x1p-52

// measuredError is RelDiff(want, got) as reports give it: at least RelErrorFloor unless 0.
func measuredError(want, got []float64) float64 {
	if e := RelDiff(want, got); e == 0 || e >= RelErrorFloor || math.IsNaN(e) {
		return e
	}
	return RelErrorFloor
}

// RelDiff is ‖a − b‖₂/‖a‖₂ (absolute when a is zero), computed without overflow: by sums of
// squares (a fitting loop measures it every step), and, where those overflow or may have
// lost digits to underflow (zero included), by running hypotenuses.
func RelDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		d := a[i] - b[i]
		num += d * d
		den += a[i] * a[i]
	}
	if !(num <= math.MaxFloat64 && den <= math.MaxFloat64) || num < 0x1p-960 || den < 0x1p-960 {
		num, den = 0, 0
		for i := range a {
			num = math.Hypot(num, a[i]-b[i])
			den = math.Hypot(den, a[i])
		}
		if den == 0 {
			return num
		}
		return num / den
	}
	if r := num / den; r <= math.MaxFloat64 {
		return math.Sqrt(r)
	}
	return math.Sqrt(num) / math.Sqrt(den)
}

// ---- dense ----

func toDense(f Filter) (*Dense, conditioned, error) {
	switch s := f.(type) {
	case *Dense:
		return newDenseMat(cloneMat(s.A), clone(s.B), clone(s.C), s.D), exact, nil
	case *Diagonal:
		r, err := diagonalToRotation(s)
		if err != nil {
			return nil, conditioned{}, err
		}
		return r.Dense(), unconditioned("real block-diagonal realisation"), nil
	case *Companion:
		return s.Dense(), exact, nil
	case *TransferFunction:
		return (&Companion{Den: s.Den, Num: s.Num, H0: s.H0}).Dense(), exact, nil
	case *Rotation:
		c := conditioned{value: s.Condition(), of: "the rotation basis P"}
		return s.Dense(), c, nil
	case *ZPK:
		d, c, err := toDiagonal(s)
		if err == nil {
			out, _, err := toDense(d)
			return out, c, err
		}
		if !errors.Is(err, ErrDefective) {
			return nil, c, err
		}
		// Repeated or clustered poles: the modal form cannot hold them, nor can the companion
		// form's coefficients (they put a Butterworth filter of order 12 at ωc = 0.01 outside
		// the unit circle); a cascade of real sections keeps each pole in its own block.
		out, err := s.realCascade()
		return out, unconditioned("a cascade of real first- and second-order sections, each holding its own poles"), err
	}
	return nil, conditioned{}, invalidf("unsupported filter type %T", f)
}

// ---- diagonal ----

func toDiagonal(f Filter) (*Diagonal, conditioned, error) {
	switch s := f.(type) {
	case *Dense:
		if s.Order() == 0 {
			return &Diagonal{H0: s.D}, exact, nil
		}
		mb, err := realModal(s.A)
		if err != nil {
			return nil, conditioned{}, err
		}
		bt, ct := modalVectors(mb.w, s.B, s.C)
		return diagonalFromModes(modesFromBlocks(mb.pairs, mb.reals, bt, ct), s.D),
			conditioned{value: mb.cond, of: "the eigenvector basis of A"}, nil
	case *Diagonal:
		return &Diagonal{Poles: cloneC(s.Poles), Residues: cloneC(s.Residues), H0: s.H0}, exact, nil
	case *Companion:
		return tfToDiagonal(s.Den, s.Num, s.H0, f)
	case *TransferFunction:
		return tfToDiagonal(s.Den, s.Num, s.H0, f)
	case *Rotation:
		bt, ct := s.modal()
		pairs := make([]complex128, len(s.Blocks))
		for i, b := range s.Blocks {
			pairs[i] = cmplx.Rect(b.Radius, math.Abs(b.Angle))
			if b.Angle < 0 {
				// ρR(-θ) is ρR(θ) with the second coordinate negated.
				bt[2*i+1], ct[2*i+1] = -bt[2*i+1], -ct[2*i+1]
			}
		}
		modes := modesFromBlocks(pairs, s.Real, bt, ct)
		return diagonalFromModes(modes, s.D), conditioned{value: s.Condition(), of: "the rotation basis P"}, nil
	case *ZPK:
		return zpkToDiagonal(s, f)
	}
	return nil, conditioned{}, invalidf("unsupported filter type %T", f)
}

// modalVectors returns W⁻¹B and CW.
func modalVectors(w *mat.Dense, b, c []float64) (bt, ct []float64) {
	n := len(b)
	bt, ct = make([]float64, n), make([]float64, n)
	var lu mat.LU
	lu.Factorize(w)
	_ = lu.SolveVecTo(mat.NewVecDense(n, bt), false, mat.NewVecDense(n, clone(b)))
	mat.NewVecDense(n, ct).MulVec(w.T(), mat.NewVecDense(n, clone(c)))
	return bt, ct
}

// modesFromBlocks turns block coordinates into residues. A block [[σ, -ω], [ω, σ]] has the
// eigenvector (1, -i) for λ = σ + iω, and the matching row of the inverse basis is (1, i)/2,
// so r = (c₁ - ic₂)·(b₁ + ib₂)/2.
func modesFromBlocks(pairs []complex128, reals []float64, bt, ct []float64) []mode {
	modes := make([]mode, 0, len(pairs)+len(reals))
	for k, l := range pairs {
		c := complex(ct[2*k], -ct[2*k+1])
		b := complex(bt[2*k], bt[2*k+1])
		modes = append(modes, mode{pole: l, residue: c * b / 2, pair: true})
	}
	off := 2 * len(pairs)
	for k, r := range reals {
		modes = append(modes, mode{pole: complex(r, 0), residue: complex(ct[off+k]*bt[off+k], 0)})
	}
	return modes
}

// diagonalToRotation realises the modes in real block-diagonal form (P = I), with the input
// and output vectors of each block balanced in norm.
func diagonalToRotation(d *Diagonal) (*Rotation, error) {
	modes, err := pairModes(d.Poles, d.Residues)
	if err != nil {
		return nil, err
	}
	sortModes(modes)
	r := &Rotation{D: d.H0}
	var bs, cs, rb, rc []float64
	for _, m := range modes {
		if m.pair {
			// (c₁ - ic₂)(b₁ + ib₂)/2 = r with b = (β, 0): c = 2(Re r, -Im r)/β, β = √(2|r|).
			beta := math.Sqrt(2 * cmplx.Abs(m.residue))
			if beta == 0 {
				beta = 1
			}
			r.Blocks = append(r.Blocks, RotationBlock{Radius: cmplx.Abs(m.pole), Angle: cmplx.Phase(m.pole)})
			bs = append(bs, beta, 0)
			cs = append(cs, 2*real(m.residue)/beta, -2*imag(m.residue)/beta)
			continue
		}
		v := real(m.residue)
		s := math.Sqrt(math.Abs(v))
		if s == 0 {
			rb, rc = append(rb, 1), append(rc, 0)
		} else {
			rb, rc = append(rb, s), append(rc, math.Copysign(s, v))
		}
		r.Real = append(r.Real, real(m.pole))
	}
	r.B = append(bs, rb...)
	r.C = append(cs, rc...)
	if n := r.Order(); n > 0 {
		r.P = mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			r.P.Set(i, i, 1)
		}
	}
	return r, nil
}

// CancellationLimit is the largest residue cancellation Σ|rᵢ|·‖λᵢ^t‖ / ‖h‖ accepted by
// the conversions to the modal form that start from a polynomial (repeated or nearly
// repeated poles make the residues blow up and cancel).
const CancellationLimit = 1e10

func tfToDiagonal(a, b []float64, h0 float64, src Filter) (*Diagonal, conditioned, error) {
	poles, err := rootsMonic(a)
	if err != nil {
		return nil, conditioned{}, err
	}
	res := make([]complex128, len(poles))
	if allZero(b) {
		// H = h0: every residue is zero, whatever the poles (repeated ones included).
		return diagonalFromModes(mustModes(poles, res), h0), exact, nil
	}
	for i, p := range poles {
		// b(p) = b₁pⁿ⁻¹ + … + bₙ over Π_{j≠i}(p - p_j): the residue of b/a at a simple root.
		var bz complex128
		for _, v := range b {
			bz = bz*p + complex(v, 0)
		}
		den := scaledComplex{m: 1}
		for j, q := range poles {
			if j != i {
				den.mul(p - q)
			}
		}
		res[i] = bz / den.value()
	}
	return residuesChecked(poles, res, h0, src)
}

func zpkToDiagonal(s *ZPK, src Filter) (*Diagonal, conditioned, error) {
	res := make([]complex128, len(s.Poles))
	for i, p := range s.Poles {
		num := scaledComplex{m: complex(s.Gain, 0)}
		for _, z := range s.Zeros {
			num.mul(p - z)
		}
		for j, q := range s.Poles {
			if j != i {
				num.mul(1 / (p - q))
			}
		}
		res[i] = num.value()
	}
	h0 := s.H0
	if len(s.Zeros) == len(s.Poles) {
		h0 += s.Gain
	}
	return residuesChecked(s.Poles, res, h0, src)
}

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func mustModes(poles, res []complex128) []mode {
	modes, err := pairModes(poles, res)
	if err != nil {
		panic("filters: roots of a real polynomial are not conjugate-closed: " + err.Error())
	}
	return modes
}

// powerNorm is ‖λ^t‖₂ over t = 0 … T−1 for |λ| = l: the square root of the geometric sum
// Σ l^(2t) (GeomSum at w = 2 ln l: T at l = 1, 1 at l = 0).
func powerNorm(l float64, T int) float64 {
	return math.Sqrt(real(GeomSum(complex(2*math.Log(l), 0), T)))
}

// residuesChecked builds the modal form and measures how much its modes cancel: the
// condition Σ|rᵢ|·‖λᵢᵗ‖ / ‖h‖, both norms over the same first samples, is 1 for one pole
// and the ratio by which the modes' terms cancel in h otherwise.
func residuesChecked(poles, res []complex128, h0 float64, src Filter) (*Diagonal, conditioned, error) {
	for _, r := range res {
		if cmplx.IsNaN(r) || cmplx.IsInf(r) {
			// 0/0 or x/0 at a repeated pole.
			c := conditioned{value: math.Inf(1), of: "the modal sum (repeated poles)"}
			return nil, c, &ConditionError{What: "the modal sum (repeated poles)", Condition: math.Inf(1), Limit: CancellationLimit, Kind: ErrDefective}
		}
	}
	// Both norms over the same first T samples h[1..T]: 64, fewer where the largest pole
	// would overflow them (|λ|^(2T) < 1e300).
	horizon := 64
	if l := maxAbs(poles); l > 1 {
		horizon = max(1, min(horizon, int(345/math.Log(l))))
	}
	total := 0.0
	for i, r := range res {
		total += cmplx.Abs(r) * powerNorm(cmplx.Abs(poles[i]), horizon)
	}
	h := src.Impulse(horizon + 1)
	hn := floats.Norm(h[1:], 2)
	cancel := 1.0
	switch {
	case hn > math.MaxFloat64:
		// The response overflows within the horizon: nothing to hold the modes against
		// (the conversion's report says so).
	case hn > 0:
		cancel = math.Max(total/hn, 1)
	}
	c := conditioned{value: cancel, of: "the modal sum (Σ|rᵢ|·‖λᵢᵗ‖ / ‖h‖: repeated or close poles cancel)"}
	if math.IsNaN(cancel) || math.IsInf(cancel, 0) || cancel > CancellationLimit {
		return nil, c, &ConditionError{What: c.of, Condition: cancel, Limit: CancellationLimit, Kind: ErrDefective}
	}
	d, err := NewDiagonal(poles, res, h0)
	if err != nil {
		return nil, c, err
	}
	modes, _ := pairModes(d.Poles, d.Residues)
	return diagonalFromModes(modes, h0), c, nil
}

// ---- rotation ----

func toRotation(f Filter) (*Rotation, conditioned, error) {
	switch s := f.(type) {
	case *Dense:
		n := s.Order()
		if n == 0 {
			return &Rotation{D: s.D}, exact, nil
		}
		if p, blocks, reals, ok := schurRotation(s.A); ok {
			return &Rotation{P: p, Blocks: blocks, Real: reals, B: clone(s.B), C: clone(s.C), D: s.D},
				conditioned{value: 1, of: "the orthogonal Schur basis P (A is normal)"}, nil
		}
		mb, err := realModal(s.A)
		if err != nil {
			return nil, conditioned{}, err
		}
		c := conditioned{value: mb.cond, of: "the eigenvector basis P (A is not normal)"}
		return &Rotation{P: mb.w, Blocks: mb.blocks(), Real: mb.reals, B: clone(s.B), C: clone(s.C), D: s.D}, c, nil
	case *Rotation:
		return &Rotation{P: cloneMat(s.P), Blocks: append([]RotationBlock(nil), s.Blocks...), Real: clone(s.Real),
			B: clone(s.B), C: clone(s.C), D: s.D}, exact, nil
	case *Diagonal:
		r, err := diagonalToRotation(s)
		return r, unconditioned("orthogonal P = I"), err
	}
	d, c, err := toDiagonal(f)
	if err != nil {
		return nil, c, err
	}
	r, err := diagonalToRotation(d)
	return r, c, err
}

// ---- transfer function ----

func toTF(f Filter) (*TransferFunction, conditioned, error) {
	n := f.Order()
	var eval circleEval
	h0 := 0.0
	switch s := f.(type) {
	case *Companion:
		return &TransferFunction{Den: clone(s.Den), Num: clone(s.Num), H0: s.H0}, exact, nil
	case *TransferFunction:
		return &TransferFunction{Den: clone(s.Den), Num: clone(s.Num), H0: s.H0}, exact, nil
	case *Dense:
		h0 = s.D
		r := newResolvent(s)
		eval = r.eval
	case *Diagonal:
		h0 = s.H0
		eval = func(z complex128) (complex128, scaledComplex) {
			var g complex128
			for i, p := range s.Poles {
				g += s.Residues[i] / (z - p)
			}
			return g, denFromRoots(z, s.Poles)
		}
	case *Rotation:
		h0 = s.D
		bt, ct := s.modal()
		nb := len(s.Blocks)
		eval = func(z complex128) (complex128, scaledComplex) {
			var g complex128
			den := scaledComplex{m: 1}
			for k, b := range s.Blocks {
				sn, cs := math.Sincos(b.Angle)
				a00, a01 := z-complex(b.Radius*cs, 0), complex(b.Radius*sn, 0)
				a10, a11 := complex(-b.Radius*sn, 0), z-complex(b.Radius*cs, 0)
				det := a00*a11 - a01*a10
				den.mul(det)
				b0, b1 := complex(bt[2*k], 0), complex(bt[2*k+1], 0)
				x0 := (a11*b0 - a01*b1) / det
				x1 := (-a10*b0 + a00*b1) / det
				g += complex(ct[2*k], 0)*x0 + complex(ct[2*k+1], 0)*x1
			}
			for k, r := range s.Real {
				den.mul(z - complex(r, 0))
				g += complex(ct[2*nb+k]*bt[2*nb+k], 0) / (z - complex(r, 0))
			}
			return g, den
		}
	case *ZPK:
		h0 = s.H0
		direct := 0.0
		if len(s.Zeros) == len(s.Poles) {
			direct = s.Gain
			h0 += s.Gain
		}
		eval = func(z complex128) (complex128, scaledComplex) {
			g := complex(s.Gain, 0)
			for i, p := range s.Poles {
				if i < len(s.Zeros) {
					g *= z - s.Zeros[i]
				}
				g /= z - p
			}
			return g - complex(direct, 0), denFromRoots(z, s.Poles)
		}
	default:
		return nil, conditioned{}, invalidf("unsupported filter type %T", f)
	}
	a, b, cond := tfFromCircle(n, eval)
	c := conditioned{value: cond, of: "the denominator on the unit circle (max|a(e^jω)| / min|a(e^jω)|)"}
	return &TransferFunction{Den: a, Num: b, H0: h0}, c, nil
}

// ---- zero-pole-gain ----

func toZPK(f Filter) (*ZPK, conditioned, error) {
	if s, ok := f.(*ZPK); ok {
		return &ZPK{Zeros: cloneC(s.Zeros), Poles: cloneC(s.Poles), Gain: s.Gain, H0: s.H0}, exact, nil
	}
	var (
		d     *Dense
		poles []complex128
		err   error
	)
	c := unconditioned("poles and zeros from eigenvalues")
	switch s := f.(type) {
	case *Dense:
		d = s
		if s.Order() == 0 {
			break
		}
		// One eigen-decomposition gives the poles and their condition (Bauer–Fike).
		if mb, err := realModal(s.A); err == nil {
			c = conditioned{value: mb.cond, of: "the eigenvector basis of A (Bauer–Fike bound on the poles)"}
			for _, p := range mb.pairs {
				poles = append(poles, p, cmplx.Conj(p))
			}
			for _, r := range mb.reals {
				poles = append(poles, complex(r, 0))
			}
			poles = SortRoots(poles)
		} else {
			var ce *ConditionError
			if !errors.As(err, &ce) {
				return nil, c, err
			}
			c = conditioned{value: ce.Condition, of: "the eigenvector basis of A", warnings: []string{"A is defective or nearly so: its repeated poles are sensitive to rounding"}}
		}
	case *Rotation:
		d = s.Dense()
		c = conditioned{value: s.Condition(), of: "the rotation basis P"}
	case *TransferFunction:
		return polyZPK(s.Den, s.Num, s.H0, c)
	case *Companion:
		return polyZPK(s.Den, s.Num, s.H0, c)
	default:
		d, _, err = toDense(f)
		if err != nil {
			return nil, conditioned{}, err
		}
	}
	if poles == nil {
		if poles, err = Poles(f); err != nil {
			return nil, c, err
		}
	}
	zeros, gain, h0, err := zeroDynamics(d)
	if err != nil {
		return nil, c, err
	}
	out := &ZPK{Zeros: SortRoots(zeros), Poles: poles, Gain: gain, H0: h0}
	return out, c, nil
}

// polyZPK is toZPK for a transfer function: the roots of its denominator and numerator,
// with the condition of the response to the root finder's backward error (rootsCondition).
func polyZPK(a, b []float64, h0 float64, c conditioned) (*ZPK, conditioned, error) {
	poles, err := rootsMonic(a)
	if err != nil {
		return nil, c, err
	}
	zeros, num, off, err := polyZeros(a, b, h0)
	if err != nil {
		return nil, c, err
	}
	gain := 0.0
	if len(num) > 0 {
		gain = num[0]
	}
	c = conditioned{value: rootsCondition(a, num, off), of: "the poles and zeros as roots of the polynomials (‖(‖a‖₁|H| + ‖b‖₁)/|a|‖₂ / ‖H‖₂ on the unit circle: what a componentwise backward error ε in the coefficients does to the response)", warnings: c.warnings}
	return &ZPK{Zeros: SortRoots(zeros), Poles: SortRoots(poles), Gain: gain, H0: off}, c, nil
}

func clone(v []float64) []float64 {
	if v == nil {
		return nil
	}
	return append([]float64(nil), v...)
}

func cloneC(v []complex128) []complex128 {
	if v == nil {
		return nil
	}
	return append([]complex128(nil), v...)
}

func cloneMat(m *mat.Dense) *mat.Dense {
	if m == nil {
		return nil
	}
	return mat.DenseCopyOf(m)
}
