package presets

import (
	"math"
	"math/cmplx"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// LegS returns the continuous-time HiPPO-LegS matrices (LSSL paper, B.2 and E.2, Corollary D.8):
//
//	A[n][k] = -√(2n+1)·√(2k+1) for n > k,  -(n+1) for n = k,  0 for n < k;   B[n] = √(2n+1),
//
// for n, k = 0 … N-1. A is lower triangular with eigenvalues -1, …, -N. The LSSL paper writes
// B = 2b with b[n] = √((2n+1)/2), √2 times this B, for polynomials orthonormal on [-1, 1]
// rather than under the probability measure; the scale of B only scales the filter.
func LegS(n int) (*mat.Dense, []float64) {
	a, b := newSquare(n), make([]float64, n)
	for i := 0; i < n; i++ {
		for k := 0; k < i; k++ {
			a.Set(i, k, -math.Sqrt(float64((2*i+1)*(2*k+1))))
		}
		a.Set(i, i, -float64(i+1))
		b[i] = math.Sqrt(float64(2*i + 1))
	}
	return a, b
}

// LegT returns the continuous-time HiPPO-LegT matrices for a sliding window of length θ
// (LSSL paper, Corollary D.7):
//
//	A[n][k] = -(1/θ)·√(2n+1)·√(2k+1)·(1 if k ≤ n, (-1)^(n-k) if k ≥ n);   B[n] = √(2n+1)/θ.
//
// A + Aᵀ = -(1/θ)(rrᵀ + ssᵀ) with r[n] = √(2n+1), s[n] = (-1)ⁿ√(2n+1): A is skew-symmetric
// plus a rank-2 negative semidefinite part. The S4 code halves A and B (θ = 2).
func LegT(n int, theta float64) (*mat.Dense, []float64) {
	a, b := newSquare(n), make([]float64, n)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			v := math.Sqrt(float64((2*i+1)*(2*k+1))) / theta
			if k > i && (k-i)%2 == 1 {
				v = -v
			}
			a.Set(i, k, -v)
		}
		b[i] = math.Sqrt(float64(2*i+1)) / theta
	}
	return a, b
}

// LagT returns the continuous-time HiPPO-LagT matrices for the generalised Laguerre measure
// with parameters α > -1 and tilt β (LSSL paper, Theorem 9 and E.2):
//
//	A[n][k] = -(1+β)/2 for n = k,  -1 for n > k,  0 for n < k;   B[n] = λₙ·C(n+α, n),
//
// with λₙ = (Γ(n+1)/Γ(n+α+1))^½, so B[n] = (Γ(n+α+1)/Γ(n+1))^½ / Γ(α+1) (B = 1 for α = 0).
// A is a single Jordan-like block: its only eigenvalue -(1+β)/2 is N-fold and A is
// defective, so the filter has no modal (diagonal) form.
func LagT(n int, alpha, beta float64) (*mat.Dense, []float64) {
	a, b := newSquare(n), make([]float64, n)
	la, _ := math.Lgamma(alpha + 1)
	for i := 0; i < n; i++ {
		for k := 0; k < i; k++ {
			a.Set(i, k, -1)
		}
		a.Set(i, i, -(1+beta)/2)
		g1, _ := math.Lgamma(float64(i) + alpha + 1)
		g2, _ := math.Lgamma(float64(i) + 1)
		b[i] = math.Exp(0.5*(g1-g2) - la)
	}
	return a, b
}

// FouT returns the continuous-time HiPPO-FouT (translated Fourier) matrices of the S4
// reference code (transition("fout"); Gu et al., "How to train your HiPPO", 2022) for even
// N:
//
//	A = π·(-diag(d, 1) + diag(d, -1)) - BBᵀ,   B = (1, 0, √2, 0, √2, 0, …),
//
// with d = (0, 0, 1, 0, 2, 0, 3, …) of length N-1: state 0 is the constant, states 2k and
// 2k+1 the cosine and sine at frequency k. State 1 (a sine of frequency 0) has a zero row and
// column in A and B[1] = 0: it is decoupled and uncontrollable, an eigenvalue 0 that adds
// nothing to the kernel (the hippo-fout preset drops it). FouT panics for an odd n.
func FouT(n int) (*mat.Dense, []float64) {
	if n%2 != 0 {
		panic("presets: FouT needs an even order")
	}
	a, b := newSquare(n), make([]float64, n)
	for i := 0; i < n; i += 2 {
		b[i] = math.Sqrt2
	}
	if n > 0 {
		b[0] = 1
	}
	for i := 2; i+1 < n; i += 2 {
		f := math.Pi * float64(i/2)
		a.Set(i, i+1, -f)
		a.Set(i+1, i, f)
	}
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			a.Set(i, k, a.At(i, k)-b[i]*b[k])
		}
	}
	return a, b
}

func newSquare(n int) *mat.Dense {
	if n == 0 {
		return &mat.Dense{}
	}
	return mat.NewDense(n, n, nil)
}

// dropState removes state i from (A, B): the rows and columns of A and the entry of B.
func dropState(a *mat.Dense, b []float64, i int) (*mat.Dense, []float64) {
	n := len(b)
	out, ob := newSquare(n-1), make([]float64, 0, n-1)
	for r, rr := 0, 0; r < n; r++ {
		if r == i {
			continue
		}
		for c, cc := 0, 0; c < n; c++ {
			if c == i {
				continue
			}
			out.Set(rr, cc, a.At(r, c))
			cc++
		}
		ob = append(ob, b[r])
		rr++
	}
	return out, ob
}

func rowsOf(a *mat.Dense) [][]float64 {
	r, _ := a.Dims()
	if a.IsEmpty() {
		return nil
	}
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = mat.Row(nil, i, a)
	}
	return rows
}

// hippoParams are the parameters of the HiPPO presets, after the measure's own.
func hippoParams(extra ...Param) []Param {
	ps := []Param{orderParam("8", 1, MaxDenseOrder, "state size N")}
	ps = append(ps, extra...)
	ps = append(ps, stepParams("bilinear")...)
	ps = append(ps,
		Param{Name: "c", Kind: Choice, Default: "normal", Choices: []string{"normal", "ones", "first"},
			Help: "output row C: N(0, 1) entries (as LSSL/S4 initialise it), all ones, or e₀ (the first coefficient)"},
		channelsParam, seedParam)
	return ps
}

// buildHiPPO discretises (A, B) with a random or fixed C per channel, in the S4 convention.
func buildHiPPO(a Args, am *mat.Dense, b []float64) (Result, error) {
	st, err := newStepper(a)
	if err != nil {
		return Result{}, err
	}
	rng := a.rng()
	rows := rowsOf(am)
	n := len(b)
	r, err := channels(a, n*n+2*n, func(int) (filters.Filter, error) {
		dt := st.step(rng)
		c := make([]float64, n)
		switch a.Choice("c") {
		case "normal":
			c = normals(rng, n, 1)
		case "ones":
			for i := range c {
				c[i] = 1
			}
		case "first":
			c[0] = 1
		}
		sys, err := filters.NewDense(rows, b, c, 0)
		if err != nil {
			return nil, err
		}
		return st.discretize(sys, dt)
	})
	if err != nil {
		return r, err
	}
	r.Note = st.note(a)
	return r, nil
}

// S4DLin returns the N/2 continuous-time poles of S4D-Lin, λₖ = -1/2 + iπk for k = 0 … N/2-1
// (Gu et al., "On the parameterization and initialization of diagonal state space models",
// 2022). A real filter stores each λₖ with its conjugate; λ₀ = -1/2 is
// real and stored once.
func S4DLin(n int) []complex128 {
	p := make([]complex128, n/2)
	for k := range p {
		p[k] = complex(-0.5, math.Pi*float64(k))
	}
	return p
}

// S4DInv returns the N/2 continuous-time poles of S4D-Inv,
// λₖ = -1/2 + i(N/π)(N/(2k+1) - 1) for k = 0 … N/2-1 (same source as S4DLin).
func S4DInv(n int) []complex128 {
	p := make([]complex128, n/2)
	nf := float64(n)
	for k := range p {
		p[k] = complex(-0.5, nf/math.Pi*(nf/float64(2*k+1)-1))
	}
	return p
}

// S4DReal returns the N real continuous-time poles of S4D-Real, λₖ = -(k+1) for
// k = 0 … N-1 (same source as S4DLin).
func S4DReal(n int) []complex128 {
	p := make([]complex128, n)
	for k := range p {
		p[k] = complex(-float64(k+1), 0)
	}
	return p
}

// s4dModal returns the continuous-time modal system of one S4D channel with B = 1 and C
// drawn as in the S4D code: complex normal with E|C|² = 1 for the complex modes (each stored
// with its conjugate, so the kernel is 2·Re Σ Cₖ·Kₖ), and for a real mode the real residue
// 2·Re Cₖ; S4D-Real draws real C ~ N(0, 1).
func s4dModal(rng *rand.Rand, modes []complex128, realModes bool) (*filters.Diagonal, error) {
	var poles, res []complex128
	for _, l := range modes {
		if realModes {
			poles = append(poles, l)
			res = append(res, complex(rng.NormFloat64(), 0))
			continue
		}
		c := complexNormal(rng, 1)
		if imag(l) == 0 {
			poles = append(poles, l)
			res = append(res, complex(2*real(c), 0))
			continue
		}
		poles = append(poles, l, cmplx.Conj(l))
		res = append(res, c, cmplx.Conj(c))
	}
	return filters.NewDiagonal(poles, res, 0)
}

func buildS4D(a Args, kind string) (Result, error) {
	n := a.Int("order")
	var modes []complex128
	switch kind {
	case "lin":
		modes = S4DLin(n)
	case "inv":
		modes = S4DInv(n)
	default:
		modes = S4DReal(n)
	}
	if kind != "real" && n%2 != 0 {
		return Result{}, paramErrorf(a.preset.Name, "order=%d must be even: S4D keeps N/2 modes, each with its conjugate", n)
	}
	st, err := newStepper(a)
	if err != nil {
		return Result{}, err
	}
	rng := a.rng()
	want := 0 // the states of the continuous-time system: N-1 for lin, N for inv and real
	r, err := channels(a, 4*n, func(int) (filters.Filter, error) {
		dt := st.step(rng)
		sys, err := s4dModal(rng, modes, kind == "real")
		if err != nil {
			return nil, err
		}
		want = sys.Order()
		return st.discretize(sys, dt)
	})
	if err != nil {
		return r, err
	}
	r.Note = joinNotes(statesNote(a, r, want, "conjugate pole pairs came out real when discretised, each kept as one real pole "+
		"(e^{Δt·λ} is real where Δt·Im λ is a multiple of π, and counts as real where it underflows towards 0)"), st.note(a))
	return r, nil
}

func s4dParams(method string) []Param {
	ps := []Param{orderParam("16", 1, filters.MaxOrder, "state size N (N/2 conjugate modes for lin and inv; must be even there)")}
	ps = append(ps, stepParams(method)...)
	return append(ps, channelsParam, seedParam)
}
