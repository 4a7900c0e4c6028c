package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/underflow"
)

// Method names an algorithm for the impulse response. All four compute the same h[t] for
// t < L; they differ in the representation they need and in cost.
type Method string

// The impulse-response algorithms.
const (
	// Recurrence runs the filter's own recurrence: the state recurrence x[t+1] = Ax[t] of a
	// dense or rotation filter, the difference equation of a transfer function, the cascade
	// of first-order sections of a ZPK filter and the diagonal recurrence xᵢ ← λᵢxᵢ of a
	// modal filter. O(nL) (O(n²L) dense).
	Recurrence Method = "recurrence"
	// FFT is the state-free kernel of the RTF paper, Alg. 1 on the transfer-function coefficients,
	// with the truncation correction of eq. 13 so that the result is exact rather than
	// aliased. O(n² log L + L log L) after a conversion to the tf form when f is not one. A
	// pole on the unit circle at a point of its L-point grid (an integrator's z = 1) is an
	// error wrapping filters.ErrIllConditioned: the kernel divides by zero there.
	FFT Method = "fft"
	// Vandermonde sums the modes, h[t] = Σ rᵢλᵢ^(t-1), a Vandermonde matrix times the residues,
	// with powers built in chunks from anchors computed in polar form. O(nL) after a
	// conversion to the modal form when f is not one.
	Vandermonde Method = "vandermonde"
	// Scan runs the diagonal recurrence as a parallel prefix scan (LDStack paper, Prop. 2): each
	// time chunk is reduced, the chunk carries are combined, and each chunk is scanned from
	// its carry by a work-efficient tree. O(nL) work, O(n(L/p + log p)) depth on p cores.
	Scan Method = "scan"
)

// Methods lists the algorithms in the order the CLI documents them.
var Methods = []Method{Recurrence, FFT, Vandermonde, Scan}

// ParseMethod returns the Method named s.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%w: unknown method %q (want one of recurrence, fft, vandermonde, scan)", filters.ErrInvalid, s)
}

// Impulse writes h[0], …, h[length-1] of f, computed by method m, to dst and returns it. A
// nil dst allocates; a non-nil dst must have the given length. f must be valid (as the
// filters constructors and Unmarshal return it). Errors: a conversion the method needs
// failed (filters.ErrDefective for repeated poles with the modal methods,
// filters.ErrIllConditioned), or the response overflowed (*NonFiniteError; the fft method's
// *OverflowWithinError, which cannot name the sample), or the fft method's rounding would
// cost an unstable filter's first samples more than filters.MaxRelError
// (filters.ErrIllConditioned, fftGrowth).
func Impulse(dst []float64, f filters.Filter, length int, m Method) ([]float64, error) {
	dst = useDst(dst, length)
	if length == 0 {
		return dst, nil
	}
	switch m {
	case Recurrence:
		if d, ok := f.(*filters.Diagonal); ok {
			modalRecurrence(dst, modal{h0: d.H0, modes: pairModes(d.Poles, d.Residues)})
		} else {
			copy(dst, f.Impulse(length))
		}
	case FFT:
		if err := fftImpulse(dst, f); err != nil {
			return nil, err
		}
	case Vandermonde, Scan:
		md, err := modalOf(f)
		if err != nil {
			return nil, err
		}
		if m == Vandermonde {
			vandermonde(dst, md)
		} else {
			scanImpulse(dst, md)
		}
	default:
		panic(fmt.Sprintf("analysis: unknown method %q", m))
	}
	return dst, checkFinite("impulse", dst)
}

func useDst(dst []float64, length int) []float64 {
	if length < 0 {
		panic("analysis: negative length")
	}
	if dst == nil {
		return make([]float64, length)
	}
	if len(dst) != length {
		panic("analysis: dst length mismatch")
	}
	return dst
}

// Step writes the step response s[t] = Σ_{k≤t} h[k], t < length, to dst and returns it; the
// impulse response comes from method m and is summed with compensated (Neumaier) summation,
// so the running sum carries no more than a few roundings. Errors as Impulse.
func Step(dst []float64, f filters.Filter, length int, m Method) ([]float64, error) {
	dst, err := Impulse(dst, f, length, m)
	if err != nil {
		// The running sum is not finite from the first sample the impulse response is not.
		var nf *NonFiniteError
		if errors.As(err, &nf) && nf.What == "impulse" {
			return nil, &NonFiniteError{What: "step", Index: nf.Index, Value: nf.Value}
		}
		if ow := (*OverflowWithinError)(nil); errors.As(err, &ow) {
			s := *ow
			s.What = "step"
			return nil, &s
		}
		return nil, err
	}
	var sum, comp float64
	for i, h := range dst {
		t := sum + h
		if math.Abs(sum) >= math.Abs(h) {
			comp += (sum - t) + h
		} else {
			comp += (h - t) + sum
		}
		sum = t
		dst[i] = sum + comp
	}
	return dst, checkFinite("step", dst)
}

// modalRecurrence runs xᵢ[t+1] = λᵢxᵢ[t] from xᵢ[1] = rᵢ: one complex multiplication per mode
// and sample, with a rounding error that grows like t·eps.
func modalRecurrence(h []float64, md modal) {
	clear(h)
	h[0] = md.h0
	for _, m := range md.modes {
		x, l, w := m.residue, m.pole, m.weight
		scale := underflow.Scale(x)
		for t := 1; t < len(h); t++ {
			h[t] += w * real(x)
			x *= l
			if t%underflow.Every == 0 { // package underflow
				x = underflow.Complex(x, scale)
			}
		}
	}
}

// vandermondeChunk is the number of consecutive powers built by multiplication from one
// anchor: the rounding error of λ^t is at most about (vandermondeChunk + t·|log|λ||)·eps.
const vandermondeChunk = 64

// vandermonde computes h[t] = h0·δ[t] + Σᵢ wᵢ·Re(rᵢλᵢ^(t-1)). The powers λ^(jK+k) are the
// product of an anchor λ^(jK), from the polar form |λ|^(jK)·e^{ijKθ} (exp and sincos, accurate
// to a few ulps however large jK is, unlike a running product), and a table of λ^k, k < K,
// built by K multiplications. For |λ| near 1 this keeps the error near eps·(K + t·|log|λ||)
// instead of t·eps, and costs one exp and one sincos per K samples instead of per sample.
func vandermonde(h []float64, md modal) {
	clear(h)
	h[0] = md.h0
	const K = vandermondeChunk
	var pw [K]complex128
	out := h[1:]
	for _, m := range md.modes {
		l := m.pole
		pw[0] = 1
		for k := 1; k < K; k++ {
			pw[k] = pw[k-1] * l
		}
		logr, theta := math.Log(cmplx.Abs(l)), cmplx.Phase(l)
		scale := underflow.Scale(m.residue)
		for start := 0; start < len(out); start += K {
			var anchor complex128
			switch {
			case start == 0:
				anchor = m.residue
			case l == 0:
				anchor = 0
			default:
				s, c := math.Sincos(theta * float64(start))
				anchor = m.residue * complex(math.Exp(logr*float64(start))*c, math.Exp(logr*float64(start))*s)
				anchor = underflow.Complex(anchor, scale) // package underflow
			}
			if anchor == 0 {
				continue
			}
			seg := out[start:min(start+K, len(out))]
			ar, ai := m.weight*real(anchor), m.weight*imag(anchor)
			p := pw[:len(seg)]
			for k := range seg {
				seg[k] += ar*real(p[k]) - ai*imag(p[k])
			}
		}
	}
}

// fftImpulse computes h by Algorithm 1 of the RTF paper on the tf form of f, with the FFT length
// N = len(h) and the numerator corrected for that N (eq. 13), so that the N-periodic kernel is
// exactly h.
func fftImpulse(h []float64, f filters.Filter) error {
	var a, b []float64
	var h0 float64
	switch s := f.(type) {
	case *filters.TransferFunction:
		a, b, h0 = s.Den, s.Num, s.H0
	case *filters.Companion:
		a, b, h0 = s.Den, s.Num, s.H0
	default:
		tf, rep, err := filters.ToTF(f)
		if err != nil {
			return err
		}
		if rep.BecameUnstable {
			// Its response grows where the filter's decays; over a short length it need not
			// overflow, and the kernel would come back wrong without a word.
			return fmt.Errorf("%w: the fft method runs on the tf form, and the tf form of this stable %s filter is unstable: its polynomial cannot hold these poles in float64 (the conversion's condition, of %s, is %.3g); the recurrence, vandermonde and scan methods use the filter as it is",
				filters.ErrIllConditioned, rep.From, rep.ConditionOf, rep.Condition)
		}
		// A report that overflowed (an unstable filter's long response) measured nothing;
		// the kernel below then reports the overflow itself.
		if rep.RelError > filters.MaxRelError && rep.RelError < math.MaxFloat64 {
			why := ""
			if rep.Condition < 1e3 {
				// A well-conditioned conversion does not make such a difference: the evaluation
				// of one of the forms does.
				why = fmt.Sprintf("; a condition this small puts the difference in evaluating the %s form, not in the conversion", rep.From)
			}
			return fmt.Errorf("%w: the fft method runs on the tf form, and the impulse responses of this %s filter and of its tf form differ by %.3g relative over %d samples, above the documented %g (the conversion's condition, of %s, is %.3g%s)",
				filters.ErrIllConditioned, rep.From, rep.RelError, rep.Length, filters.MaxRelError, rep.ConditionOf, rep.Condition, why)
		}
		a, b, h0 = tf.Den, tf.Num, tf.H0
	}
	// The FFT length is the response length itself: padding to a larger N would make the
	// kernel of an unstable filter grow further (to ρ^N) and cost digits on the first L
	// samples. Powers of two take the fast path of KernelPlan, other lengths gonum's FFT.
	n, N := len(a), len(h)
	bt, err := rtf.Truncate(a, b, N)
	if oe := (*rtf.OverflowError)(nil); errors.As(err, &oe) {
		// b̃ = b − b·A^L overflows: the response does within L samples, though not at L.
		return overflowWithin(f, N, maxAbs(b))
	} else if err != nil {
		return err
	}
	k, err := NewKernelPlan(n, N).Kernel(nil, a, bt, h0)
	if err != nil {
		if w, ok := poleOnGrid(a, N); ok {
			// the kernel divides by a(e^jω) there: 0/0, not an overflow of the response
			return fmt.Errorf("%w: the fft method divides by the denominator on the %d-point grid of the unit circle, and a pole lies on it (ω = %.6gπ); the recurrence computes this response",
				filters.ErrIllConditioned, N, w/math.Pi)
		}
		// The transforms of a b̃ near float64's limit overflow: the kernel's first sample
		// that is not finite is not the response's.
		if nf := (*NonFiniteError)(nil); errors.As(err, &nf) {
			if ow := overflowWithin(f, N, maxAbs(b)); ow.Radius > 0 {
				return ow
			}
		}
		return err
	}
	if err := fftGrowth(f, b, bt, N); err != nil {
		return err
	}
	copy(h, k)
	return nil
}

// fftGrowth refuses the fft method where its correction for the length, b̃ = b − b·A^L (RTF
// paper, eq. 13), has grown so far beyond the numerator b that the rounding it carries into
// every sample, about ε·‖b̃‖, exceeds filters.MaxRelError of samples of b's size: an unstable
// filter's response is then right relative to its last, largest samples but not at its
// first (a pole at 1.5 over 1700 samples gave h[1] = 1.65e282 for 1). A stable filter's b̃
// is b's size; the error names the spectral radius where it is known. Checked once the
// kernel is finite: where the transforms overflow, *OverflowWithinError says more.
func fftGrowth(f filters.Filter, b, bt []float64, length int) error {
	scale := maxAbs(b)
	if scale == 0 {
		return nil
	}
	growth := maxAbs(bt) / scale
	if lost := 0x1p-53 * growth; !(lost > filters.MaxRelError) {
		return nil
	}
	radius := ""
	if r, err := SpectralRadius(f); err == nil && r > 1 && !math.IsInf(r, 0) {
		radius = fmt.Sprintf(" (the filter is unstable: spectral radius %.6g)", r)
	}
	return fmt.Errorf("%w: the fft method's correction for the %d samples asked (RTF paper, eq. 13) is %.3g times the numerator%s, so its rounding puts errors of about %.3g relative on the response's first samples, above the documented %g; the recurrence, vandermonde and scan methods compute it sample by sample",
		filters.ErrIllConditioned, length, growth, radius, 0x1p-53*growth, filters.MaxRelError)
}

// maxAbs is the largest magnitude in v (0 for none).
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// poleOnGrid reports whether the denominator 1 + Σ aᵢz⁻ⁱ vanishes, to rounding, at a point
// e^jω, ω = 2πk/N, of the FFT's grid (k ≤ N/2: the coefficients are real), and returns the
// first such ω.
func poleOnGrid(a []float64, N int) (float64, bool) {
	scale := 1.0
	for _, v := range a {
		scale += math.Abs(v)
	}
	for k := 0; k <= N/2; k++ {
		w := 2 * math.Pi * float64(k) / float64(N)
		zinv := cmplx.Rect(1, -w)
		d, p := complex(1, 0), complex(1, 0)
		for _, v := range a {
			p *= zinv
			d += complex(v, 0) * p
		}
		if cmplx.Abs(d) <= 1e3*eps*scale {
			return w, true
		}
	}
	return 0, false
}

// ---- lengths ----

// MaxAutoLength caps AutoLength.
const MaxAutoLength = 1 << 16

// DefaultTol is the decay tolerance AutoLength and Properties use when given 0: the response
// has fallen to 1e-12 of its start.
const DefaultTol = 1e-12

// LengthForRadius returns the number of samples that shows the whole impulse response of a
// filter of order n and spectral radius rho, to the tolerance tol (0 means DefaultTol):
//
//   - stable (rho < 1 - filters.MarginalTol): ⌈log(tol)/log(rho)⌉ + 1, the time a mode of
//     radius rho takes to decay to tol of its start, and at least n + 1 (all poles at 0:
//     a finite response of n + 1 samples);
//   - unstable (rho > 1 + filters.MarginalTol): ⌈log(1/tol)/log(rho)⌉ + 1, the time it takes
//     to grow by 1/tol;
//   - marginal: MaxAutoLength, since the response neither decays nor grows.
//
// The result lies in [1, MaxAutoLength].
func LengthForRadius(rho float64, n int, tol float64) int {
	if tol <= 0 {
		tol = DefaultTol
	}
	if tol >= 1 {
		tol = 0.5
	}
	var l float64
	switch {
	case math.IsNaN(rho) || math.IsInf(rho, 0):
		return MaxAutoLength
	case rho < 1e-300:
		l = 1
	case filters.Stable(rho):
		l = math.Ceil(math.Log(tol)/math.Log(rho)) + 1
	case rho > 1+filters.MarginalTol:
		l = math.Ceil(math.Log(1/tol)/math.Log(rho)) + 1
	default:
		return MaxAutoLength
	}
	l = math.Max(l, float64(n+1))
	return int(math.Min(math.Max(l, 1), MaxAutoLength))
}

// AutoLength is LengthForRadius with f's order and spectral radius, or for a stable filter
// the measured time its response takes to fall for good below tol of its peak (decay, the
// effective memory of Properties), when that is longer: a repeated pole or a late start
// outlasts the radius's estimate.
func AutoLength(f filters.Filter, tol float64) (int, error) {
	if tol <= 0 {
		tol = DefaultTol
	}
	rho, err := SpectralRadius(f)
	if err != nil {
		return 0, err
	}
	l := LengthForRadius(rho, f.Order(), tol)
	if !filters.Stable(rho) || tol >= 1 {
		return l, nil
	}
	t, atLeast, err := decay(f, rho, tol)
	if err != nil {
		return 0, err
	}
	if atLeast {
		return MaxAutoLength, nil
	}
	return max(l, t), nil
}
