package filters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/internal/numtest"
)

// roundTripTol is the bar for conversions of random stable systems of order ≤ 64;
// the algorithms reach about 1e-13 (see TestConversionAccuracyTable).
const roundTripTol = 1e-9

// TestEveryFormToEveryForm converts random stable systems into each form and from there into
// every form, and checks the impulse response (512 samples) and the frequency response
// (256 points on [0, π]) against the original dense system.
func TestEveryFormToEveryForm(t *testing.T) {
	omega := linspace(0, 3.141592653589793, 256)
	for _, n := range []int{0, 1, 2, 3, 5, 8, 16, 33, 64} {
		for seed := uint64(1); seed <= 3; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			rho := 0.5 + 0.45*rng.Float64()
			orig := randomStable(rng, n, rho)
			wantH := orig.Impulse(512)
			wantF := orig.FreqResponse(omega)
			for _, from := range Forms {
				src, _, err := Convert(orig, from)
				if err != nil {
					t.Fatalf("n=%d seed=%d: dense → %s: %v", n, seed, from, err)
				}
				for _, to := range Forms {
					out, rep, err := Convert(src, to)
					name := fmt.Sprintf("n=%d seed=%d %s→%s", n, seed, from, to)
					if err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					if out.Form() != to || out.Order() != n {
						t.Errorf("%s: got form %s order %d", name, out.Form(), out.Order())
					}
					if e := relErr(out.Impulse(512), wantH); e > roundTripTol {
						t.Errorf("%s: impulse rel error %.3g (report %.3g, cond %.3g)", name, e, rep.RelError, rep.Condition)
					}
					if e := numtest.RelErrC(out.FreqResponse(omega), wantF); e > roundTripTol {
						t.Errorf("%s: frequency response rel error %.3g", name, e)
					}
				}
			}
		}
	}
}

// TestRelDiffScales checks that RelDiff does not depend on the scale of its vectors, from
// where the sums of squares underflow to where they overflow, and agrees with the plain
// formula in between.
func TestRelDiffScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 50; trial++ {
		n := 1 + rng.IntN(300)
		a, b := make([]float64, n), make([]float64, n)
		var num, den float64
		for i := range a {
			a[i] = rng.NormFloat64()
			b[i] = a[i] + 1e-3*rng.NormFloat64()
			num += (a[i] - b[i]) * (a[i] - b[i])
			den += a[i] * a[i]
		}
		want := math.Sqrt(num / den)
		for _, s := range []float64{1e-300, 1e-170, 1e-160, 1, 1e150, 1e160, 1e300} {
			sa, sb := make([]float64, n), make([]float64, n)
			for i := range a {
				sa[i], sb[i] = s*a[i], s*b[i]
			}
			if got := RelDiff(sa, sb); math.Abs(got-want) > 1e-12*want {
				t.Errorf("trial %d, scale %g: %.17g, want %.17g", trial, s, got, want)
			}
		}
	}
	if got := RelDiff([]float64{0, 0}, []float64{3, 4}); got != 5 {
		t.Errorf("RelDiff from zero = %g, want the absolute 5", got)
	}
}
