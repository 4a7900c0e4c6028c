package presets

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

const bigPrec = 256

func bigF(x float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }

// bigSinCos returns sin x and cos x to about bigPrec bits by their Taylor series (|x| ≤ π).
func bigSinCos(x float64) (s, c *big.Float) {
	bx := bigF(x)
	s, c = bigF(0), bigF(0)
	term := bigF(1) // xᵏ/k!
	for k := 0; k < 200; k++ {
		switch k % 4 {
		case 0:
			c.Add(c, term)
		case 1:
			s.Add(s, term)
		case 2:
			c.Sub(c, term)
		case 3:
			s.Sub(s, term)
		}
		term.Mul(term, bx)
		term.Quo(term, bigF(float64(k+1)))
	}
	return s, c
}

// resonatorTruth computes, at bigPrec bits from f's stored float64 coefficients, the distance
// of its poles from the real axis, √(4a₂ - a₁²)/2 (0 for real poles), and |H(e^{iθ})|.
func resonatorTruth(f *filters.TransferFunction, theta float64) (im, gain float64) {
	a1, a2 := bigF(f.Den[0]), bigF(f.Den[1])
	disc := new(big.Float).Mul(bigF(4), a2)
	disc.Sub(disc, new(big.Float).Mul(a1, a1))
	if disc.Sign() > 0 {
		disc.Sqrt(disc)
		im, _ = disc.Float64()
		im /= 2
	}
	s, c := bigSinCos(theta)
	c2 := new(big.Float).Mul(c, c) // cos 2θ = c² - s², sin 2θ = 2sc
	c2.Sub(c2, new(big.Float).Mul(s, s))
	s2 := new(big.Float).Mul(s, c)
	s2.Mul(s2, bigF(2))
	// P(z) = p0 + p1·z⁻¹ + p2·z⁻² at z = e^{iθ}: re = p0 + p1·c + p2·c2, im = -(p1·s + p2·s2)
	eval := func(p0, p1, p2 *big.Float) (re, imag *big.Float) {
		re = new(big.Float).Add(p0, new(big.Float).Mul(p1, c))
		re.Add(re, new(big.Float).Mul(p2, c2))
		imag = new(big.Float).Mul(p1, s)
		imag.Add(imag, new(big.Float).Mul(p2, s2))
		imag.Neg(imag)
		return re, imag
	}
	h0 := bigF(f.H0)
	n1 := new(big.Float).Add(new(big.Float).Mul(h0, a1), bigF(f.Num[0]))
	n2 := new(big.Float).Add(new(big.Float).Mul(h0, a2), bigF(f.Num[1]))
	nr, ni := eval(h0, n1, n2)
	dr, di := eval(bigF(1), a1, a2)
	abs2 := func(re, imag *big.Float) *big.Float {
		x := new(big.Float).Mul(re, re)
		return x.Add(x, new(big.Float).Mul(imag, imag))
	}
	g := new(big.Float).Quo(abs2(nr, ni), abs2(dr, di))
	g.Sqrt(g)
	gain, _ = g.Float64()
	return im, gain
}

// ResonatorFlaw passes a resonator exactly when its stored coefficients hold it: poles
// r·sin θ off the real axis and |H(e^{iθ})| = 1 to MaxRelError, as 256-bit arithmetic on the
// same coefficients finds. Across radii up to 1 - 1e-13 and angles down to 1e-12 from 0 and
// π, every filter passed must be accurate, and every one refused must miss (up to a margin of
// 2 at the tolerance's edge).
func TestResonatorFlawAgreesWithTruth(t *testing.T) {
	tol := filters.MaxRelError
	passed, refused := 0, 0
	for _, r := range []float64{1e-3, 0.5, 0.9, 0.99999, 1 - 1e-7, 1 - 1e-9, 1 - 1e-10, 1 - 1e-11, 1 - 1e-13} {
		for _, d := range []float64{1e-12, 1e-9, 1e-7, 3e-6, 1e-5, 2e-5, 1e-4, 1e-3, 1e-2, 0.3} {
			for _, theta := range []float64{d, math.Pi - d, math.Pi / 2} {
				f, err := Resonator(r, theta)
				if err != nil {
					t.Fatalf("r=%g θ=%g: %v", r, theta, err)
				}
				im, gain := resonatorTruth(f, theta)
				want := r * math.Sin(theta)
				miss := math.Max(math.Abs(im-want)/want, math.Abs(gain-1))
				flaw := ResonatorFlaw(f, r, theta)
				switch {
				case flaw == "" && miss > tol:
					t.Errorf("r=%.17g θ=%g: passed, but the poles are %.6g off the axis (want %.6g) and |H(e^{iθ})| = %.9g",
						r, theta, im, want, gain)
				case flaw != "" && miss < tol/2:
					t.Errorf("r=%.17g θ=%g: refused (%s), but it misses by only %.3g", r, theta, flaw, miss)
				case flaw == "":
					passed++
				default:
					refused++
				}
			}
		}
	}
	if passed == 0 || refused == 0 {
		t.Errorf("%d passed, %d refused: the grid does not reach both sides of the limit", passed, refused)
	}
}

// Near its limits the resonator preset is refused (it wrote b = [0, -0] for r = 1 - 1e-13,
// θ = 1e-10, and |H(e^{iθ})| = 0.019 for r = 1 - 1e-10, θ = 1e-8), naming the nearest
// workable value, which then builds; ordinary values build with |H(e^{iθ})| = 1.
func TestResonatorLimit(t *testing.T) {
	for _, c := range []struct {
		r, theta, param, want string
	}{
		{"0.9999999999999", "1e-10", "theta", `smallest workable theta is (\S+)$`},
		{"0.9999999999", "1e-8", "theta", `smallest workable theta is (\S+)$`},
		{"0.9", "1e-6", "theta", `smallest workable theta is (\S+)$`},
		{"0.9", "3.14159265", "theta", `largest workable theta is π - (\S+)$`},
		{"1e-300", "1", "r", `smallest workable r is (\S+)$`},
	} {
		_, err := New("resonator", map[string]string{"r": c.r, "theta": c.theta})
		if !errors.Is(err, ErrParam) {
			t.Fatalf("r=%s θ=%s: error %v, want one wrapping ErrParam", c.r, c.theta, err)
		}
		m := regexp.MustCompile(c.want).FindStringSubmatch(err.Error())
		if m == nil {
			t.Fatalf("r=%s θ=%s: error %q does not name the nearest workable %s", c.r, c.theta, err, c.param)
		}
		args := map[string]string{"r": c.r, "theta": c.theta}
		args[c.param] = m[1]
		if c.want[0] == 'l' {
			d, _ := strconv.ParseFloat(m[1], 64)
			args[c.param] = strconv.FormatFloat(math.Pi-d, 'g', -1, 64)
		}
		if _, err := New("resonator", args); err != nil {
			t.Errorf("the value named, %v: %v", args, err)
		}
	}
	_, err := New("resonator", map[string]string{"r": "1e-300", "theta": "1e-9"})
	if !errors.Is(err, ErrParam) {
		t.Errorf("r=1e-300 θ=1e-9: error %v, want one wrapping ErrParam", err)
	}
	for _, c := range [][2]float64{{0.9, math.Pi / 4}, {0.95, 1.1}, {0.5, 3}, {0.001, 0.2}} {
		res, err := New("resonator", map[string]string{
			"r": strconv.FormatFloat(c[0], 'g', -1, 64), "theta": strconv.FormatFloat(c[1], 'g', -1, 64)})
		if err != nil {
			t.Errorf("r=%g θ=%g: %v", c[0], c[1], err)
			continue
		}
		if _, gain := resonatorTruth(res.Filter.(*filters.TransferFunction), c[1]); math.Abs(gain-1) > exactTol {
			t.Errorf("r=%g θ=%g: |H(e^{iθ})| = %.12g, want 1", c[0], c[1], gain)
		}
	}
}

// The gain g = (1 - r)·√(1 - 2r·cos 2θ + r²), evaluated at 256 bits, is computed to rounding
// even where that formula cancels in float64 (relative error 1.2e-5 at r = 1 - 1e-7, θ = 1e-6).
func TestResonatorGain(t *testing.T) {
	for _, c := range [][2]float64{{0.9, math.Pi / 4}, {1 - 1e-7, 1e-6}, {1 - 1e-9, 3e-6}, {0.99999, 1e-5}, {1 - 1e-13, 1e-10}} {
		r, theta := c[0], c[1]
		f, err := Resonator(r, theta)
		if err != nil {
			t.Fatal(err)
		}
		_, co := bigSinCos(2 * theta)
		q := new(big.Float).Mul(bigF(2*r), co) // exact product: 2r is exact
		q.Sub(bigF(1), q)
		q.Add(q, new(big.Float).Mul(bigF(r), bigF(r)))
		q.Sqrt(q)
		q.Mul(q, new(big.Float).Sub(bigF(1), bigF(r)))
		want, _ := q.Float64()
		if d := math.Abs(f.H0/want - 1); d > exactTol {
			t.Errorf("r=%.17g θ=%g: g = %.17g, want %.17g (relative error %.3g)", r, theta, f.H0, want, d)
		}
	}
}
