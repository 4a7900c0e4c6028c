package train

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// poleLayout is how an order-4 filter's poles split into conjugate pairs and real poles.
type poleLayout struct{ pairs, reals int }

// orderFourLayouts are all the ways four poles of a real filter can fall (repeated poles are
// limits of these, so they reach the same infimum).
var orderFourLayouts = []poleLayout{{2, 0}, {1, 2}, {0, 4}}

// projectedError is the relative L2 error of the best filter with the given poles: the kernel
// is linear in the residues (and h[0] = D is matched exactly), so for fixed poles the best
// residues solve a least-squares problem (variable projection). x holds, per pair,
// log(1 - r) and θ; per real pole, log(1 - |p|); signs gives each real pole's sign.
func projectedError(l poleLayout, x, signs, y []float64, norm float64) float64 {
	rows := len(y) - 1
	v := mat.NewDense(rows, 2*l.pairs+l.reals, nil)
	for i := 0; i < l.pairs; i++ {
		r := 1 - math.Exp(x[2*i])
		lambda := complex(r*math.Cos(x[2*i+1]), r*math.Sin(x[2*i+1]))
		pw := complex(1, 0)
		for t := 0; t < rows; t++ {
			v.Set(t, 2*i, real(pw))
			v.Set(t, 2*i+1, imag(pw))
			pw *= lambda
		}
	}
	for i := 0; i < l.reals; i++ {
		p := signs[i] * (1 - math.Exp(x[2*l.pairs+i]))
		pw := 1.0
		for t := 0; t < rows; t++ {
			v.Set(t, 2*l.pairs+i, pw)
			pw *= p
		}
	}
	target := mat.NewVecDense(rows, append([]float64(nil), y[1:]...))
	var res, fit mat.VecDense
	if err := res.SolveVec(v, target); err != nil {
		return math.Inf(1) // coincident poles: a neighbouring placement gives the same fit
	}
	fit.MulVec(v, &res)
	fit.SubVec(&fit, target)
	return mat.Norm(&fit, 2) / norm
}

// searchOrderFour estimates the best relative L2 error any order-4 filter reaches on y,
// independently of ssmlab's fitting: for each pole layout, samples random pole placements
// (radii log-uniform in distance from the unit circle down to 5e-5, angles uniform, one real
// pole in four negative), then refines the best by a compass search on the placement. With
// the residues solved exactly, the search runs over four numbers only.
func searchOrderFour(y []float64, samples int, seed uint64) float64 {
	norm := 0.0
	for _, v := range y {
		norm += v * v
	}
	norm = math.Sqrt(norm)
	best := math.Inf(1)
	for li, l := range orderFourLayouts {
		rng := rand.New(rand.NewPCG(seed, uint64(li)))
		dim := 2*l.pairs + l.reals
		layoutBest := math.Inf(1)
		var x, signs []float64
		for s := 0; s < samples; s++ {
			cx, cs := make([]float64, dim), make([]float64, l.reals)
			for i := range cx {
				cx[i] = -10 * rng.Float64()
				if i < 2*l.pairs && i%2 == 1 {
					cx[i] = math.Pi * rng.Float64()
				}
			}
			for i := range cs {
				cs[i] = 1
				if rng.IntN(4) == 0 {
					cs[i] = -1
				}
			}
			if e := projectedError(l, cx, cs, y, norm); e < layoutBest {
				layoutBest, x, signs = e, cx, cs
			}
		}
		for step, iter := 0.5, 0; step > 1e-10 && iter < 2000; iter++ {
			improved := false
			for i := range x {
				for _, dir := range []float64{1, -1} {
					cx := append([]float64(nil), x...)
					cx[i] += dir * step
					isRadius := i >= 2*l.pairs || i%2 == 0
					if isRadius && cx[i] >= 0 {
						continue // r would leave (0, 1)
					}
					if e := projectedError(l, cx, signs, y, norm); e < layoutBest {
						layoutBest, x, improved = e, cx, true
					}
				}
			}
			if !improved {
				step /= 2
			}
		}
		best = math.Min(best, layoutBest)
	}
	return best
}

// TestOrderFourNearOptimal compares ssmlab's order-4 RTFs with the best order-4 filter the
// exhaustive search finds, on the families where the quality bar of issue 5 is out of
// reach at n = 4 (go test ./train -run OrderFour -v; SSMLAB_QUALITY_CHANNELS=16 for the
// figures the README quotes). It fails when ssmlab ends more than 5% above the search,
// which would mean a missed basin rather than a limit of order 4.
func TestOrderFourNearOptimal(t *testing.T) {
	if testing.Short() {
		t.Skip("searches pole placements per channel")
	}
	channels := qualityChannels(2)
	fams := targetFamilies(1024, channels, 1)
	for _, name := range []string{"s4-hippo", "butterworth", "windowed-sinc", "decaying-noise"} {
		targets := fams[name]
		ours, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 4), Targets: targets}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := make([]float64, len(targets))
		var wg sync.WaitGroup
		for ch, y := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				found[ch] = searchOrderFour(y, 2000, uint64(ch))
			}()
		}
		wg.Wait()
		meanOurs, meanFound := 0.0, 0.0
		for ch, e := range found {
			// The search and the lower bound check each other: no filter is below the bound.
			if lb := lowerBounds(targets[ch], []int{4}, allBounds)[0]; e < lb*(1-1e-9) {
				t.Errorf("%s channel %d: the search found %.6g, below the lower bound %.6g", name, ch, e, lb)
			}
			o := ours.Report.Channels[ch].RelError
			meanOurs += o / float64(len(targets))
			meanFound += e / float64(len(targets))
			if o > 1.05*e+1e-12 {
				t.Errorf("%s channel %d: ssmlab %.4g, the search found an order-4 filter at %.4g", name, ch, o, e)
			}
		}
		t.Logf("| %s | %.3g | %.3g |", name, meanFound, meanOurs)
	}
}
