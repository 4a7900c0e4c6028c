package train

import (
	"math"
	"testing"
)

// TestLowerBounds checks the bound against fits it must not exceed (ERA realisations of every
// order on each family), its vanishing on an exactly representable target, and a real
// bound on noise. At L = 1024 the largest Hankel matrix goes through Lanczos, so this also
// holds the Ritz-pair bound to the fits.
func TestLowerBounds(t *testing.T) {
	for _, length := range []int{512, 1024} {
		fams := targetFamilies(length, 2, 3)
		orders := []int{2, 4, 8, 16}
		for _, name := range []string{"s4-hippo", "windowed-sinc", "decaying-noise", "iir", "hyena"} {
			for ch, y := range fams[name] {
				lb := LowerBounds(y, orders)
				for k, n := range orders {
					f, err := eraFilter(y, n)
					if err != nil {
						t.Fatal(err)
					}
					if e := relL2(f.Impulse(len(y)), y); lb[k] > e*(1+1e-9) {
						t.Errorf("L = %d, %s channel %d n=%d: lower bound %.6g above ERA's error %.6g", length, name, ch, n, lb[k], e)
					}
				}
				if name == "iir" && lb[2] > 1e-7 {
					t.Errorf("L = %d, iir channel %d: bound %.3g at n = 8 for an order-6 target", length, ch, lb[2])
				}
				if name == "decaying-noise" && !(lb[0] > 0.1) {
					t.Errorf("L = %d, decaying noise channel %d: bound %.3g at n = 2, want a real bound", length, ch, lb[0])
				}
			}
		}
	}
}

// TestRitzBoundMatchesDense compares the Lanczos bound (boundFromRitz) with the full
// eigendecomposition's on the 511×511 weighted Hankel matrices: never above it (both are
// rigorous, the dense one exact to rounding) and within 2% of it where it is above 1e-6.
func TestRitzBoundMatchesDense(t *testing.T) {
	fams := targetFamilies(1024, 2, 5)
	orders := []int{4, 16, 64}
	for _, name := range []string{"s4-hippo", "windowed-sinc", "decaying-noise", "butterworth"} {
		for ch, y := range fams[name] {
			for _, wt := range []boundWeighting{{0, 1}, {0, 0}, {0.75, 16}} {
				w := boundWeights(511, wt)
				ritz := weightedTails(y, 511, w, orders, 64, true)
				dense := denseTails(y, 511, w, orders)
				for k, n := range orders {
					r, d := math.Sqrt(ritz[k]), math.Sqrt(dense[k])
					if r > d*(1+1e-9)+1e-15 {
						t.Errorf("%s channel %d, weighting %v, n = %d: Lanczos bound %.6g above the dense one %.6g", name, ch, wt, n, r, d)
					}
					if d > 1e-6*math.Sqrt(sumSquares(y)) && r < 0.98*d {
						t.Errorf("%s channel %d, weighting %v, n = %d: Lanczos bound %.6g, dense %.6g", name, ch, wt, n, r, d)
					}
				}
			}
		}
	}
}
