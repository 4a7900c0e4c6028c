package presets

import (
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/ssmlab/ssmlab/filters"
)

// LRU holds the initial parameters of one single-input single-output LRU channel (Orvieto et
// al., "Resurrecting recurrent neural networks for long sequences", 2023, §3 and App. A; the
// RotRNN paper, §4.1, relates it to RotRNN). Its recurrence, per complex mode k,
//
//	x[t] = λₖ·x[t-1] + γₖ·Bₖ·u[t],   y[t] = Re Σₖ Cₖ·x[t],
//
// updates the state before the output (the S4 convention).
type LRU struct {
	Lambda []complex128 // λₖ = exp(-exp(ν_log) + iθₖ)
	Gamma  []float64    // γₖ = √(1 - |λₖ|²), the normalisation of the LRU paper
	// B has real and imaginary parts N(0, 1/2) ((randn + i·randn)/√(2H) with one input, H = 1);
	// C has real and imaginary parts N(0, 1/M) for M modes.
	B, C []complex128
}

// NewLRU draws the ring initialisation of M = modes complex modes: |λ| is distributed so that
// |λ|² is uniform in [r_min², r_max²] (ν_log = log(-½ log(u(r_max² - r_min²) + r_min²))), the
// phase θ is uniform in [0, maxPhase], γ = √(1 - |λ|²), and B and C are complex normal as in
// the LRU paper's code.
func NewLRU(rng *rand.Rand, modes int, rMin, rMax, maxPhase float64) *LRU {
	l := &LRU{Lambda: make([]complex128, modes), Gamma: make([]float64, modes),
		B: make([]complex128, modes), C: make([]complex128, modes)}
	for k := range modes {
		u1, u2 := rng.Float64(), rng.Float64()
		nuLog := math.Log(-0.5 * math.Log(u1*(rMax*rMax-rMin*rMin)+rMin*rMin))
		theta := u2 * maxPhase
		r := math.Exp(-math.Exp(nuLog))
		l.Lambda[k] = cmplx.Rect(r, theta)
		if theta == 0 {
			l.Lambda[k] = complex(r, 0)
		}
		l.Gamma[k] = math.Sqrt(1 - r*r)
	}
	// B = (randn + i randn)/√(2H) and C = (randn + i randn)/√N, H = 1 input, N = modes.
	for k := range modes {
		l.B[k] = complexNormal(rng, 1) // each part N(0, 1/2)
	}
	for k := range modes {
		l.C[k] = complexNormal(rng, 2/float64(modes)) // each part N(0, 1/N)
	}
	return l
}

// Filter returns the real filter y = Re(C·x) in the control convention: a modal filter with
// poles λₖ and λ̄ₖ and residues cₖ/2, c̄ₖ/2 (cₖ = Cₖγₖ Bₖ) in the S4 convention, mapped with
// filters.FromS4. A real λₖ (zero phase) is one real mode with residue Re cₖ.
func (l *LRU) Filter() (filters.Filter, error) {
	var poles, res []complex128
	for k, p := range l.Lambda {
		c := l.C[k] * complex(l.Gamma[k], 0) * l.B[k]
		if imag(p) == 0 {
			poles = append(poles, p)
			res = append(res, complex(real(c), 0))
			continue
		}
		poles = append(poles, p, cmplx.Conj(p))
		res = append(res, c/2, cmplx.Conj(c)/2)
	}
	d, err := filters.NewDiagonal(poles, res, 0)
	if err != nil {
		return nil, err
	}
	return filters.FromS4(d)
}

func buildLRU(a Args) (Result, error) {
	n := a.Int("order")
	if n%2 != 0 {
		return Result{}, paramErrorf(a.preset.Name, "order=%d must be even: the filter holds order/2 complex modes and their conjugates", n)
	}
	rMin, rMax, phase := a.Float("r_min"), a.Float("r_max"), a.Float("max_phase")
	if rMin > rMax {
		return Result{}, paramErrorf(a.preset.Name, "r_min=%g is above r_max=%g", rMin, rMax)
	}
	if rMin == rMax && phase == 0 {
		return Result{}, paramErrorf(a.preset.Name, "r_min = r_max and max_phase = 0 put every pole at %g: the filter would have one repeated pole", rMin)
	}
	rng := a.rng()
	r, err := channels(a, 4*n, func(int) (filters.Filter, error) {
		return NewLRU(rng, n/2, rMin, rMax, phase).Filter()
	})
	if err != nil {
		return r, err
	}
	why := "modes drawn with the phase 0 (or the radius 0) are real, each kept as one real pole without a conjugate"
	if phase == 0 {
		why = "max_phase=0 gives every mode the phase 0, so each is real and kept as one real pole without a conjugate"
	}
	r.Note = statesNote(a, r, n, why)
	return r, nil
}

// RotRNN holds the initial parameters of a multi-head single-input single-output RotRNN layer
// (RotRNN paper, §3, App. B.3 and the init_params of App. C). Head h has an orthogonal
// Pₕ = expm(Mₕ - Mₕᵀ) (Lemma 1), k/2 angles θ, a decay γₕ and an input vector Bₕ; the layer's
// state matrix is A = blockdiag(γₕ Pₕ R(θₕ) Pₕᵀ) (§3.2, §3.4).
type RotRNN struct {
	Heads []filters.RotRNNHead
	// B holds each head's raw input vector Bₕ ~ N(0, 1) (Glorot with one input), one after
	// the other; Xi holds ξₕ = √((1 - γₕ²)/‖Bₕ‖²) of eq. 11 (c = 1), so the recurrence's
	// input vector is ξₕBₕ (eq. 12).
	B  []float64
	Xi []float64
	// C ~ N(0, 1/n) is the output row (Glorot).
	C []float64
}

// NewRotRNN draws a RotRNN initialisation of state size n split into heads heads (n/heads
// even), in the order of the reference init_params: θ ~ U[0, thetaMax]; γ with γ² uniform in
// [gammaMin², gammaMax²]; B ~ N(0, 1); C ~ N(0, 1/n); M ~ N(0, 1).
func NewRotRNN(rng *rand.Rand, n, heads int, gammaMin, gammaMax, thetaMax float64) *RotRNN {
	k := n / heads
	r := &RotRNN{Heads: make([]filters.RotRNNHead, heads), Xi: make([]float64, heads)}
	for h := range r.Heads {
		r.Heads[h].Theta = uniforms(rng, k/2, 0, thetaMax)
	}
	for h := range r.Heads {
		// gamma_log = log(-½ log(u(γmax² - γmin²) + γmin²)), γ = exp(-exp(gamma_log)).
		u := rng.Float64()
		r.Heads[h].Gamma = math.Sqrt(u*(gammaMax*gammaMax-gammaMin*gammaMin) + gammaMin*gammaMin)
	}
	r.B = normals(rng, n, 1)
	r.C = normals(rng, n, 1/math.Sqrt(float64(n)))
	for h := range r.Heads {
		m := make([][]float64, k)
		for i := range m {
			m[i] = normals(rng, k, 1)
		}
		r.Heads[h].M = m
	}
	for h, head := range r.Heads {
		bh := r.B[h*k : (h+1)*k]
		var ss float64
		for _, x := range bh {
			ss += x * x
		}
		r.Xi[h] = math.Sqrt((1 - head.Gamma*head.Gamma) / ss)
	}
	return r
}

// NormalizedB returns the input vector of the recurrence, ξₕBₕ for each head (eq. 12).
func (r *RotRNN) NormalizedB() []float64 {
	k := len(r.B) / len(r.Heads)
	b := make([]float64, len(r.B))
	for i, x := range r.B {
		b[i] = r.Xi[i/k] * x
	}
	return b
}

// Filter returns the layer as a rotation-form filter in the control convention: RotRNN updates
// the state before the output (eq. 12–13), so the filter built by
// filters.NewRotationFromRotRNN is mapped with filters.FromS4. D, the skip connection, is 0.
func (r *RotRNN) Filter() (filters.Filter, error) {
	f, err := filters.NewRotationFromRotRNN(r.Heads, r.NormalizedB(), r.C, 0)
	if err != nil {
		return nil, err
	}
	return filters.FromS4(f)
}

func buildRotRNN(a Args) (Result, error) {
	n, heads := a.Int("order"), a.Int("heads")
	if n%heads != 0 || (n/heads)%2 != 0 {
		return Result{}, paramErrorf(a.preset.Name, "order=%d must split into heads=%d heads of an even size (one 2×2 rotation per pair of states)", n, heads)
	}
	gMin, gMax := a.Float("gamma_min"), a.Float("gamma_max")
	if gMin > gMax {
		return Result{}, paramErrorf(a.preset.Name, "gamma_min=%g is above gamma_max=%g", gMin, gMax)
	}
	rng := a.rng()
	return channels(a, n*n+4*n, func(int) (filters.Filter, error) {
		return NewRotRNN(rng, n, heads, gMin, gMax, a.Float("theta_max")).Filter()
	})
}
