package filters

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
					if e := relErrC(out.FreqResponse(omega), wantF); e > roundTripTol {
						t.Errorf("%s: frequency response rel error %.3g", name, e)
					}
				}
			}
		}
	}
}
