package rtf

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// FFTLen returns the length M of the reference module's FFTs for trunc_len L, M = L + L mod 2
// (its real FFT pads odd lengths by one): the power in the truncation correction.
func FFTLen(truncLen int) int { return truncLen + truncLen%2 }

// invalidError is a failure of kind filters.ErrInvalid. Its message leaves out the kind, so
// that callers place it in their own words ("invalid session: trunc_len -1 is outside …").
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return filters.ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

// companionStep sets w = v·A for the companion matrix of eq. 16 (first row −a, ones on the
// subdiagonal): w_j = −v₀a_j + v_{j+1}.
func companionStep(w, v, a []float64) {
	n := len(a)
	for j := range n {
		w[j] = -v[0] * a[j]
		if j+1 < n {
			w[j] += v[j+1]
		}
	}
}

// powerTimes returns v·Aᵐ in O(m·n), failing if it overflows.
func powerTimes(v, a []float64, m int) ([]float64, error) {
	p, _, err := powerTimesHead(v, a, m)
	return p, err
}

// powerTimesHead is powerTimes that also returns (v·A^{m−1})₀, which is h[m] of the
// strictly proper response b/a when v = b (B = e₁ in the companion form: h[t] = b·A^{t−1}·e₁),
// and 0 for m = 0.
func powerTimesHead(v, a []float64, m int) ([]float64, float64, error) {
	cur, next := slices.Clone(v), make([]float64, len(v))
	head := 0.0
	for range m {
		head = cur[0]
		companionStep(next, cur, a)
		cur, next = next, cur
	}
	for i, x := range cur {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, 0, &OverflowError{Power: m, Index: i, Value: x}
		}
	}
	return cur, head, nil
}

// OverflowError reports a truncation correction whose b·Aᵐ is not finite: the filter is
// unstable and its response overflows float64 within m samples. It matches
// filters.ErrInvalid under errors.Is.
type OverflowError struct {
	Power int     // m
	Index int     // the first non-finite entry of b·Aᵐ
	Value float64 // its value (±Inf or NaN)
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("the truncation correction overflows: (b·A^%d)[%d] is %v (the filter is unstable)", e.Power, e.Index, e.Value)
}

func (e *OverflowError) Unwrap() error { return filters.ErrInvalid }

func checkCoefficients(a, b []float64, m int) {
	if len(a) != len(b) {
		panic("rtf: coefficient length mismatch")
	}
	if m < 0 {
		panic("rtf: negative length")
	}
}

// Truncate returns the truncation-corrected numerator b̃ = b(I − Aᵐ) of the RTF paper's
// eq. 13 for denominator a and numerator b (a₁…aₙ and b₁…bₙ): the numerator whose m-point
// kernel (Algorithm 1) is exactly the first m samples of the impulse response. It costs
// O(m·n) (m steps of the companion recurrence, no matrix power) and fails with an
// *OverflowError when b·Aᵐ overflows (an unstable filter). It panics if a and
// b differ in length or m is negative.
func Truncate(a, b []float64, m int) ([]float64, error) {
	bt, _, err := TruncateFold(a, b, m)
	return bt, err
}

// TruncateFold is Truncate that also returns h[m] = b·A^{m−1}·e₁, the sample of the strictly
// proper response b/a that the module's m-point kernel of b̃ folds onto t = 0: the periodic
// sum of h̃[t] = h[t] − h[t+m] telescopes to h[t] for 1 ≤ t < m but to h[m] at t = 0. It
// comes from the same m steps of the recurrence.
func TruncateFold(a, b []float64, m int) ([]float64, float64, error) {
	checkCoefficients(a, b, m)
	if len(a) == 0 {
		return []float64{}, 0, nil
	}
	tail, fold, err := powerTimesHead(b, a, m)
	if err != nil {
		return nil, 0, err
	}
	out := make([]float64, len(b))
	for i := range b {
		out[i] = b[i] - tail[i]
	}
	return out, fold, nil
}

// Fold returns h[m] = b·A^{m−1}·e₁ for m ≥ 1 (TruncateFold's fold, from b), failing with an
// *OverflowError where the response overflows.
func Fold(a, b []float64, m int) (float64, error) {
	checkCoefficients(a, b, m)
	if len(a) == 0 || m == 0 {
		return 0, nil
	}
	p, err := powerTimes(b, a, m-1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// maxNeumann bounds the terms of the Neumann series Untruncate sums first. The series
// costs O(m·n) a term and needs about 37/(m·ln(1/ρ)) terms: a handful when the response
// decays within m (14 for an order-8 Hyena RTF at trunc_len 1024), hundreds when ρᵐ is near
// 1 (900 for LRU poles at 0.99999 with trunc_len 4096), where the direct solve is cheaper.
// The series comes first because it needs no basis: the direct solve works in the companion
// basis, which clustered poles can make singular to working precision (LRU poles at 0.9994
// within 0.03 rad of each other: condition number 1.6e19, where the series converges in 53
// terms).
const maxNeumann = 400

// MaxUntruncateCond bounds the condition number of I − Aᵐ that Untruncate's direct solve
// accepts. Iterative refinement takes the solution to the accuracy the recurrence allows
// while cond·2⁻⁵³ is well below 1 (0.1 at the limit), and not beyond.
const MaxUntruncateCond = 1e15

// maxRefinements bounds the steps of iterative refinement in solveUntruncated.
const maxRefinements = 10

// Untruncate solves b(I − Aᵐ) = b̃ for b, undoing Truncate (what the reference module's get_C
// computes with one direct solve): by the Neumann series b = Σₖ b̃·A^{km} while its terms shrink fast enough to converge
// within maxNeumann terms (every pole well inside the unit circle for m), otherwise (slow
// decay, or a pole outside the circle) by solving directly with LU and iterative
// refinement, and where that is too ill-conditioned, by the series again. Its work is
// bounded by 2^34 multiply-adds (about a minute): O(m·n) a term of the series, O(n³) for the
// direct solve. When nothing succeeds the error holds the *filters.ConditionError of the
// direct solve (the condition number of I − Aᵐ against MaxUntruncateCond), or wraps
// filters.ErrInvalid (an overflow, a solve over the work limit). It panics if a and b̃
// differ in length or m is not positive.
func Untruncate(a, bt []float64, m int) ([]float64, error) {
	return untruncate(a, bt, m, maxCorrectionWork)
}

// untruncate is Untruncate within work multiply-adds.
func untruncate(a, bt []float64, m, work int) ([]float64, error) {
	checkCoefficients(a, bt, m)
	if m == 0 {
		panic("rtf: zero length")
	}
	n := len(a)
	if n == 0 {
		return []float64{}, nil
	}
	maxTerms := work / (m * n)
	s := neumann{a: a, m: m, sum: slices.Clone(bt), term: slices.Clone(bt)}
	done, serr := s.run(min(maxNeumann, maxTerms), true)
	if done {
		return s.sum, nil
	}
	// The series is slow, or diverges (a pole outside the unit circle, where I − Aᵐ is
	// as invertible as inside it): solve directly.
	var b []float64
	var err error
	if cube := float64(n) * float64(n) * float64(n); cube <= float64(work) {
		b, err = solveUntruncated(a, bt, m)
	} else {
		err = invalidf("undoing the truncation correction of order %d needs a direct solve of %.2g operations, over the limit of %.2g: the filter decays too slowly for trunc_len", n, cube, float64(work))
	}
	if err == nil {
		return b, nil
	}
	if serr != nil {
		return nil, fmt.Errorf("%w; %v", err, serr)
	}
	if !(s.rate < 1) {
		return nil, err
	}
	if done, serr := s.run(maxTerms, false); serr != nil {
		return nil, serr
	} else if done {
		return s.sum, nil
	}
	return nil, fmt.Errorf("%w; the Neumann series does not converge within %d terms either (its terms shrink by %.6f a term)", err, len(s.norms), s.rate)
}

// neumann sums the series Σₖ b̃·A^{km}.
type neumann struct {
	a         []float64
	m         int
	sum, term []float64
	norms     []float64 // of the terms so far
	rate      float64   // by which the terms shrink, once measured
}

// run adds terms until the series has converged (true) or has maxTerms terms, and fails once
// it diverges; with predict it stops early once the rate of the terms says that it would
// need more than 2·maxNeumann terms, or that they do not shrink.
func (s *neumann) run(maxTerms int, predict bool) (bool, error) {
	for len(s.norms) < maxTerms {
		var err error
		if s.term, err = powerTimes(s.term, s.a, s.m); err != nil {
			return false, err
		}
		tn, sn := 0.0, 0.0
		for i := range s.sum {
			s.sum[i] += s.term[i]
			tn = max(tn, math.Abs(s.term[i]))
			sn = max(sn, math.Abs(s.sum[i]))
		}
		// Close poles make the terms beat, so a window of growth does not mean divergence;
		// growth by 1e8 over the first term does (a pole rounded out of the unit circle).
		if math.IsInf(sn, 0) || math.IsNaN(sn) || len(s.norms) > 0 && tn > 1e8*s.norms[0] {
			return false, invalidf("the Neumann series diverges (a pole of the coefficients lies outside the unit circle)")
		}
		if tn <= 0x1p-53*sn {
			return true, nil
		}
		s.norms = append(s.norms, tn)
		// The terms fall like ρ^{km} once the transient has passed, but not monotonically:
		// close poles make them beat. The largest of the last eight against the largest of
		// the eight before gives the rate.
		if k := len(s.norms); k >= 24 {
			s.rate = math.Pow(slices.Max(s.norms[k-8:])/slices.Max(s.norms[k-16:k-8]), 1.0/8)
			if predict && (!(s.rate < 1) || float64(k)+math.Log(0x1p-53*sn/tn)/math.Log(s.rate) > 2*maxNeumann) {
				return false, nil
			}
		}
	}
	return false, nil
}

// solveUntruncated solves (I − Aᵐ)ᵀ bᵀ = b̃ᵀ by LU. The rows of Aᵐ cost O(m·n + n²) in all,
// not a matrix power: e_{i+1}·A = e_i in the companion form, so e_i·Aᵐ = e_{n-1}·A^{m+n-1-i}.
func solveUntruncated(a, bt []float64, m int) ([]float64, error) {
	n := len(a)
	last := make([]float64, n)
	last[n-1] = 1
	row, err := powerTimes(last, a, m)
	if err != nil {
		return nil, err
	}
	iMinusP := mat.NewDense(n, n, nil) // I − Aᵐ
	next := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		for j, v := range row {
			iMinusP.Set(i, j, -v)
		}
		iMinusP.Set(i, i, 1+iMinusP.At(i, i))
		companionStep(next, row, a)
		row, next = next, row
	}
	var lu mat.LU
	lu.Factorize(iMinusP)
	if c := lu.Cond(); !(c <= MaxUntruncateCond) {
		if math.IsNaN(c) {
			c = math.Inf(1)
		}
		return nil, &filters.ConditionError{
			What:      fmt.Sprintf("I − A^%d (undoing the truncation correction: a pole lies on or within rounding of the unit circle for trunc_len, or the poles are too clustered for the coefficient basis)", m),
			Condition: c, Limit: MaxUntruncateCond, Kind: filters.ErrIllConditioned,
		}
	}
	// The companion basis is ill-conditioned for clustered poles, so the LU solution alone
	// can lose digits the Neumann series keeps (an order-8 Hyena RTF: 1e-5 against 9e-9).
	// Iterative refinement with the residual b̃ − b(I − Aᵐ), formed by the recurrence that
	// made b̃, recovers them. The residual is at rounding level after the first step and
	// says little, so it stops on the size of the corrections: once one is below rounding
	// or fails to halve (Higham, Accuracy and Stability of Numerical Algorithms, §12.1).
	b := make([]float64, n)
	r := slices.Clone(bt)
	delta := mat.NewVecDense(n, nil)
	prevStep := math.Inf(1)
	for range maxRefinements {
		if err := lu.SolveVecTo(delta, true, mat.NewVecDense(n, slices.Clone(r))); err != nil {
			return nil, invalidf("undoing the truncation correction: %v", err)
		}
		step := mat.Norm(delta, math.Inf(1))
		if !(step < prevStep) {
			break
		}
		bn := 0.0
		for i := range b {
			b[i] += delta.AtVec(i)
			bn = max(bn, math.Abs(b[i]))
		}
		if step <= 0x1p-53*bn || step > prevStep/2 {
			break
		}
		prevStep = step
		tail, err := powerTimes(b, a, m)
		if err != nil {
			return nil, err
		}
		for i := range r {
			r[i] = bt[i] - (b[i] - tail[i])
		}
	}
	for _, x := range b {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, invalidf("undoing the truncation correction overflows")
		}
	}
	return b, nil
}
