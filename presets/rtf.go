package presets

import (
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
)

// RTF initialisations (RTF paper §3.4 and App. B.2, drawn as the reference implementation
// ruke1ire/RTF rtf.py draws them: package rtf). The filter is
// H(z) = h0 + (b₁z⁻¹+…+bₙz⁻ⁿ)/(1 + a₁z⁻¹+…+aₙz⁻ⁿ) (RTF paper, eq. 4), filters.TransferFunction's
// form.

// RTFZeros returns the zero initialisation of the RTF paper's eq. 18 and B.2.7: a = b = 0, so
// H(z) = h0 (the paper uses h0 = 1). All n poles sit at z = 0.
func RTFZeros(n int, h0 float64) (*filters.TransferFunction, error) {
	return filters.NewTransferFunction(make([]float64, n), make([]float64, n), h0)
}

// rtfParams are the parameters of the RTF initialisations: a random one also has the
// reference's denominator constraint and a seed, and draws h0 unless it is given; the zero
// initialisation leaves a = 0 and takes h0 = 1, as the RTF paper does.
func rtfParams(random bool) []Param {
	ps := []Param{orderParam("16", 1, filters.MaxOrder, "state size n (degree of the denominator)")}
	h0 := Param{Name: "h0", Kind: Float, Default: "1", Min: negInf, Max: inf, Help: "direct term h0 (the RTF paper uses 1)"}
	if random {
		ps = append(ps, Param{Name: "constraint", Kind: Choice, Default: "none", Choices: []string{"none", "l1_montel"},
			Help: "denominator constraint of the reference implementation (l1_montel: a/(Σ|a| + |s| + 1e-6), s ~ U[0, 1))"})
		h0.Default, h0.Help = "", "direct term h0 (default: drawn N(0, 1), the reference's h_0 = randn)"
	}
	ps = append(ps, h0, channelsParam)
	if random {
		ps = append(ps, seedParam)
	}
	return ps
}

func buildRTF(a Args, init string) (Result, error) {
	n := a.Int("order")
	if init == "zeros" {
		return channels(a, 2*n+1, func(int) (filters.Filter, error) { return RTFZeros(n, a.Float("h0")) })
	}
	rng := a.rng()
	return channels(a, 2*n+1, func(int) (filters.Filter, error) {
		var den, num []float64
		switch init {
		case "xavier":
			den, num = rtf.Xavier(rng, n)
		default:
			den, num = rtf.Montel(rng, n)
		}
		var h0 float64
		if a.Has("h0") {
			h0 = a.Float("h0")
		} else {
			h0 = rng.NormFloat64() // the reference's h_0 = randn
		}
		if a.Choice("constraint") == "l1_montel" {
			den = rtf.L1Montel(den, den, rng.Float64())
		}
		return filters.NewTransferFunction(den, num, h0)
	})
}

// LDStackCompanion draws the random companion initialisation of the LDStack paper, §3 (Fig. 1,
// "Initialization"): the characteristic polynomial tⁿ + Σ aᵢtⁱ of the Frobenius companion
// matrix (eq. 2) has coefficients aᵢ ~ N(0, 1/n), whose roots lie near the unit circle (some
// may lie outside it). The output row (the numerator) is drawn N(0, 1/n) as well.
func LDStackCompanion(rng *rand.Rand, n int) (*filters.Companion, error) {
	s := 1 / math.Sqrt(float64(n))
	a := normals(rng, n, s)
	b := normals(rng, n, s)
	// tⁿ + a_{n-1}tⁿ⁻¹ + … + a₀ is 1 + a_{n-1}z⁻¹ + … + a₀z⁻ⁿ: Den[k] = a_{n-1-k}.
	den := make([]float64, n)
	for k := range den {
		den[k] = a[n-1-k]
	}
	return filters.NewCompanion(den, b, 0, false)
}

// LDStackUnit draws the unit initialisation of the LDStack paper, §3 (Fig. 1, "Parameterization"):
// n/2 angles θⱼ and the eigenvalue pairs λ = radius·e^{±iθⱼ} (radius 1 in the paper: ln λ has
// zero real part). With vdc false, θⱼ ~ U(-2π, 2π) as in Fig. 1; with vdc true, θⱼ = π·vdc(j)
// for the base-2 van der Corput sequence vdc(1), vdc(2), … in (0, 1), the low-discrepancy
// choice the paper suggests for large n. The modal filter has B' = 1 and a complex normal
// output row, as in the paper's relaxation y = Re(C's'): residue cⱼ ~ CN(0, 2/n) for λⱼ and
// c̄ⱼ for λ̄ⱼ (the two relaxed entries of a pair add up to one such residue).
func LDStackUnit(rng *rand.Rand, n int, radius float64, vdc bool) (*filters.Diagonal, error) {
	var poles, res []complex128
	for j := 1; j <= n/2; j++ {
		var th float64
		if vdc {
			th = math.Pi * vanDerCorput(j)
		} else {
			th = -2*math.Pi + 4*math.Pi*rng.Float64()
		}
		l := cmplx.Rect(radius, th)
		if imag(l) < 0 {
			l = cmplx.Conj(l)
		}
		c := complexNormal(rng, 2/float64(n))
		poles = append(poles, l, cmplx.Conj(l))
		res = append(res, c, cmplx.Conj(c))
	}
	return filters.NewDiagonal(poles, res, 0)
}

// vanDerCorput returns the base-2 radical inverse of j: 1 → 1/2, 2 → 1/4, 3 → 3/4, …
func vanDerCorput(j int) float64 {
	x, f := 0.0, 0.5
	for ; j > 0; j >>= 1 {
		if j&1 == 1 {
			x += f
		}
		f /= 2
	}
	return x
}

func buildLDStackUnit(a Args) (Result, error) {
	n := a.Int("order")
	if n%2 != 0 {
		return Result{}, paramErrorf(a.preset.Name, "order=%d must be even: the eigenvalues come in pairs e^{±iθ}", n)
	}
	rng := a.rng()
	vdc := a.Choice("angles") == "vdc"
	return channels(a, 4*n, func(int) (filters.Filter, error) {
		return LDStackUnit(rng, n, a.Float("radius"), vdc)
	})
}
