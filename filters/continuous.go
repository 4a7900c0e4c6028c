package filters

import (
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/mat"
)

// Discretization names a continuous-to-discrete method.
type Discretization string

// The discretisations of the LSSL paper, eq. 3 (GBT(α): α = 0 forward Euler, 1/2 bilinear,
// 1 backward Euler) and the zero-order hold.
const (
	Bilinear      Discretization = "bilinear"
	ZOH           Discretization = "zoh"
	Euler         Discretization = "euler"
	BackwardEuler Discretization = "backward_euler"
	GBT           Discretization = "gbt"
)

// Continuous is a continuous-time system x' = Ax + Bu, y = Cx + Du held as a Dense or a
// Diagonal (poles and residues in the s-plane), with a step Dt and a discretisation.
// Discretize maps (A, B) and keeps C and D as they are, as LSSL and S4 do (LSSL paper, eq. 3);
// SciPy's cont2discrete additionally transforms C and D for the bilinear family.
type Continuous struct {
	System Filter // *Dense or *Diagonal
	Dt     float64
	Method Discretization
	Alpha  float64 // used by GBT only
}

func (c *Continuous) alpha() (float64, error) {
	switch c.Method {
	case Euler:
		return 0, nil
	case Bilinear:
		return 0.5, nil
	case BackwardEuler:
		return 1, nil
	case GBT:
		if math.IsNaN(c.Alpha) || c.Alpha < 0 || c.Alpha > 1 {
			return 0, invalidf("GBT alpha %v is outside [0, 1]", c.Alpha)
		}
		return c.Alpha, nil
	}
	return 0, invalidf("unknown discretization %q (want bilinear, zoh, euler, backward_euler or gbt)", c.Method)
}

// MaxStableStep returns the step below which c's method maps every pole λ of the continuous
// system with Re λ < 0 inside the unit circle, and the poles that decide it: +Inf for the
// zero-order hold and GBT(α ≥ 1/2) (bilinear, backward Euler), which map the left half-plane
// inside the circle at any step, and for GBT(α < 1/2) (forward Euler: α = 0), whose pole
// (1 + (1 − α)Δtλ)/(1 − αΔtλ) lies inside exactly when 2Δt·Re λ + (1 − 2α)Δt²|λ|² < 0, the
// smallest 2|Re λ|/((1 − 2α)|λ|²) over those poles. Dt is not used; poles with Re λ ≥ 0 are
// not stable at any step and do not count.
func (c *Continuous) MaxStableStep() (float64, error) {
	if c.Method == ZOH {
		return math.Inf(1), nil
	}
	alpha, err := c.alpha()
	if err != nil {
		return 0, err
	}
	if alpha >= 0.5 || c.System == nil {
		return math.Inf(1), nil
	}
	poles, err := Poles(c.System)
	if err != nil {
		return 0, err
	}
	best := math.Inf(1)
	for _, l := range poles {
		if re := real(l); re < 0 {
			a := cmplx.Abs(l)
			best = min(best, 2*(-re/a)/a/(1-2*alpha))
		}
	}
	return best, nil
}

// Discretize returns the discrete-time filter.
func (c *Continuous) Discretize() (Filter, error) {
	if math.IsNaN(c.Dt) || math.IsInf(c.Dt, 0) || c.Dt <= 0 {
		return nil, invalidf("step dt must be positive and finite, got %v", c.Dt)
	}
	if c.System == nil {
		return nil, invalidf("continuous system is missing")
	}
	if err := c.System.Validate(); err != nil {
		return nil, err
	}
	if c.Method != ZOH {
		if _, err := c.alpha(); err != nil {
			return nil, err
		}
	}
	switch s := c.System.(type) {
	case *Dense:
		return c.discretizeDense(s)
	case *Diagonal:
		return c.discretizeDiagonal(s)
	}
	return nil, invalidf("continuous time is supported for the dense and diagonal forms, not %s", c.System.Form())
}

func (c *Continuous) discretizeDense(s *Dense) (Filter, error) {
	n := s.Order()
	if n == 0 {
		return newDenseMat(nil, nil, nil, s.D), nil
	}
	dt := c.Dt
	if c.Method == ZOH {
		// exp([[A, B], [0, 0]]·Δt) = [[Ā, B̄], [0, 1]]: valid for singular A too.
		aug := mat.NewDense(n+1, n+1, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				aug.Set(i, j, s.A.At(i, j)*dt)
			}
			aug.Set(i, n, s.B[i]*dt)
		}
		// mat.Exp scales by log2 of the norm; an infinite norm would never finish.
		norm := mat.Norm(aug, 1)
		if math.IsInf(norm, 0) || math.IsNaN(norm) {
			return nil, invalidf("zoh: ‖[A B]·Δt‖₁ overflows float64 (Δt = %g, ‖[A B]‖₁ = %.3g)", dt, mat.Norm(denseAB(s), 1))
		}
		var e mat.Dense
		e.Exp(aug)
		ad := mat.DenseCopyOf(e.Slice(0, n, 0, n))
		bd := make([]float64, n)
		for i := range bd {
			bd[i] = e.At(i, n)
		}
		out := newDenseMat(ad, bd, append([]float64(nil), s.C...), s.D)
		if out.Validate() != nil {
			// e^{ΔtA} grows as e^{Δt·Re λ} for the eigenvalues λ of A (faster while a
			// non-normal A's transient lasts), and float64 ends at e^709.78.
			msg := fmt.Sprintf("zoh: e^(Δt·A) overflows float64 (‖[A B]·Δt‖₁ = %.3g", norm)
			if vals, err := eigenvalues(s.A); err == nil {
				top := math.Inf(-1)
				for _, v := range vals {
					top = max(top, real(v)*dt)
				}
				msg += fmt.Sprintf(", and Δt·Re λ reaches %.6g over A's eigenvalues λ", top)
			}
			return nil, invalidf("%s; e^x overflows from x = %.2f)", msg, maxExp)
		}
		return out, nil
	}
	alpha, err := c.alpha()
	if err != nil {
		return nil, err
	}
	if norm := mat.Norm(denseAB(s), 1); norm*dt > math.MaxFloat64 {
		return nil, invalidf("%s: ‖[A B]·Δt‖₁ overflows float64 (Δt = %g, ‖[A B]‖₁ = %.3g)", c.Method, dt, norm)
	}
	// Ā = (I - αΔA)⁻¹(I + (1-α)ΔA), B̄ = Δ(I - αΔA)⁻¹B  (LSSL paper, eq. 3).
	left := mat.NewDense(n, n, nil)
	right := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a := s.A.At(i, j) * dt
			left.Set(i, j, -alpha*a)
			right.Set(i, j, (1-alpha)*a)
		}
		left.Set(i, i, left.At(i, i)+1)
		right.Set(i, i, right.At(i, i)+1)
	}
	var lu mat.LU
	lu.Factorize(left)
	if cond := lu.Cond(); cond > 1/eps || math.IsInf(cond, 1) {
		return nil, &ConditionError{What: "I - αΔtA", Condition: cond, Limit: 1 / eps, Kind: ErrIllConditioned}
	}
	var ad mat.Dense
	if err := lu.SolveTo(&ad, false, right); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIllConditioned, err)
	}
	bd := mat.NewVecDense(n, nil)
	bs := make([]float64, n)
	for i := range bs {
		bs[i] = s.B[i] * dt
	}
	if err := lu.SolveVecTo(bd, false, mat.NewVecDense(n, bs)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrIllConditioned, err)
	}
	out := newDenseMat(&ad, bd.RawVector().Data, append([]float64(nil), s.C...), s.D)
	if out.Validate() != nil {
		return nil, invalidf("%s: the discretised A or B overflows float64 (‖[A B]·Δt‖₁ = %.3g, condition of I − αΔtA %.3g)", c.Method, mat.Norm(denseAB(s), 1)*dt, lu.Cond())
	}
	return out, nil
}

// maxExp is the largest x whose e^x float64 holds.
var maxExp = math.Log(math.MaxFloat64)

// denseAB is [A B].
func denseAB(s *Dense) *mat.Dense {
	n := s.Order()
	ab := mat.NewDense(n, n+1, nil)
	ab.Slice(0, n, 0, n).(*mat.Dense).Copy(s.A)
	ab.SetCol(n, s.B)
	return ab
}

// discretizeDiagonal maps each s-plane pole λ to its z-plane image and scales the residue by
// the factor that multiplies B: GBT λ̄ = (1+(1-α)Δλ)/(1-αΔλ), factor Δ/(1-αΔλ); ZOH λ̄ = e^{Δλ},
// factor (e^{Δλ}-1)/λ = Δ·φ₁(Δλ). It maps one member of each conjugate pair and builds the
// result with NewDiagonalRealPart, so that a pair whose images fall on one real pole (ZOH at
// Δt·Im λ = kπ) becomes one real mode.
func (c *Continuous) discretizeDiagonal(s *Diagonal) (Filter, error) {
	dt := c.Dt
	modes, err := pairModes(s.Poles, s.Residues)
	if err != nil {
		return nil, err
	}
	poles := make([]complex128, len(modes))
	res := make([]complex128, len(modes))
	alpha := 0.0
	if c.Method != ZOH {
		if alpha, err = c.alpha(); err != nil {
			return nil, err
		}
	}
	for i, m := range modes {
		x := complex(dt, 0) * m.pole
		if cmplx.IsInf(x) {
			return nil, invalidf("%s: Δt·λ overflows float64 at pole %s (Δt = %g)", c.Method, formatC(m.pole), dt)
		}
		scale := complex(dt, 0) // both members of a pair: Re of twice one of them
		if m.pair {
			scale *= 2
		}
		if c.Method == ZOH {
			if real(x) > maxExp {
				return nil, invalidf("zoh: e^(Δt·λ) overflows float64 at Δt·λ = %s (pole %s; e^x overflows from Re x = %.2f)", formatC(x), formatC(m.pole), maxExp)
			}
			poles[i] = cmplx.Exp(x)
			res[i] = m.residue * scale * phi1(x)
		} else {
			den := 1 - complex(alpha, 0)*x
			if cmplx.Abs(den) < eps {
				return nil, &ConditionError{What: fmt.Sprintf("1 - αΔtλ at pole %d", i), Condition: 1 / cmplx.Abs(den), Limit: 1 / eps, Kind: ErrIllConditioned}
			}
			poles[i] = (1 + complex(1-alpha, 0)*x) / den
			res[i] = m.residue * scale / den
		}
		if cmplx.IsInf(res[i]) || cmplx.IsNaN(res[i]) {
			return nil, invalidf("%s: the discretised residue of pole %s overflows float64 (residue %s, Δt·λ = %s)", c.Method, formatC(m.pole), formatC(m.residue), formatC(x))
		}
	}
	return NewDiagonalRealPart(poles, res, s.H0)
}

// phi1 returns (e^x - 1)/x without cancellation for small |x|.
func phi1(x complex128) complex128 {
	if cmplx.Abs(x) < 1e-3 {
		// 1 + x/2 + x²/6 + x³/24 + x⁴/120: truncation below 1e-17 for |x| < 1e-3.
		return 1 + x*(0.5+x*(1.0/6+x*(1.0/24+x/120)))
	}
	return (cmplx.Exp(x) - 1) / x
}

// FromS4 maps a state-space filter written in the S4 convention (the state is updated before
// the output, so its kernel is CB + D, CAB, CA²B, …) exactly to this package's convention:
// (A, B, C, D) becomes (A, B, CA, CB + D). The transfer-function and ZPK forms have no state
// and are rejected. The result is validated: CA and CB + D may overflow.
func FromS4(f Filter) (Filter, error) {
	out, err := fromS4(f)
	if err != nil {
		return nil, err
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("s4 convention: %w", err)
	}
	return out, nil
}

func fromS4(f Filter) (Filter, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	switch s := f.(type) {
	case *Dense:
		n := s.Order()
		if n == 0 {
			return newDenseMat(nil, nil, nil, s.D), nil
		}
		c := make([]float64, n)
		mat.NewVecDense(n, c).MulVec(s.A.T(), mat.NewVecDense(n, s.C))
		d := s.D + dot(s.C, s.B)
		return newDenseMat(mat.DenseCopyOf(s.A), clone(s.B), c, d), nil
	case *Diagonal:
		res := make([]complex128, len(s.Residues))
		h0 := s.H0
		for i, r := range s.Residues {
			res[i] = r * s.Poles[i]
			h0 += real(r)
		}
		return &Diagonal{Poles: cloneC(s.Poles), Residues: res, H0: h0}, nil
	case *Rotation:
		d := s.Dense()
		c := make([]float64, s.Order())
		if len(c) > 0 {
			mat.NewVecDense(len(c), c).MulVec(d.A.T(), mat.NewVecDense(len(c), s.C))
		}
		return &Rotation{P: cloneMat(s.P), Blocks: append([]RotationBlock(nil), s.Blocks...), Real: clone(s.Real),
			B: clone(s.B), C: c, D: s.D + dot(s.C, s.B)}, nil
	case *Companion:
		// The S4 reading has H'(z) = D + z·G(z) where G = b/a is the control reading's strictly
		// proper part, so both variants keep a and map b'ₖ = bₖ₊₁ - b₁aₖ, h0' = h0 + b₁.
		n := s.Order()
		if n == 0 {
			return &Companion{H0: s.H0, Observable: s.Observable}, nil
		}
		b := make([]float64, n)
		for k := range b {
			if k+1 < n {
				b[k] = s.Num[k+1]
			}
			b[k] -= s.Num[0] * s.Den[k]
		}
		return &Companion{Den: clone(s.Den), Num: b, H0: s.H0 + s.Num[0], Observable: s.Observable}, nil
	}
	return nil, invalidf("the S4 convention applies to state-space forms (dense, diagonal, companion, rotation), not %s", f.Form())
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
