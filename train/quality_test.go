package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/presets"
)

// targetFamilies builds kernels of the kinds users bring (the quality bar of issue 5): Hyena
// implicit filters, S4 HiPPO-LegS kernels, Butterworth responses (from package presets),
// windowed-sinc FIR low-passes and exponentially decaying noise.
func targetFamilies(length, channels int, seed uint64) map[string][][]float64 {
	rng := rand.New(rand.NewPCG(seed, 77))
	fam := map[string][][]float64{}
	hy := presets.DefaultHyena(length, channels)
	k, err := hy.Kernels(presets.NewRand(seed))
	if err != nil {
		panic(err)
	}
	fam["hyena"] = k
	s4, err := presets.New("hippo-legs", map[string]string{"order": "64", "channels": strconv.Itoa(channels), "seed": strconv.FormatUint(seed, 10)})
	if err != nil {
		panic(err)
	}
	chans := []filters.Filter{s4.Filter}
	if s4.Bank != nil {
		chans = s4.Bank.Channels
	}
	for _, ch := range chans {
		fam["s4-hippo"] = append(fam["s4-hippo"], ch.Impulse(length))
	}
	for c := 0; c < channels; c++ {
		b, err := presets.New("butter", map[string]string{
			"order": strconv.Itoa(2 + rng.IntN(7)), "wc": strconv.FormatFloat(0.05+0.6*rng.Float64(), 'g', -1, 64)})
		if err != nil {
			panic(err)
		}
		fam["butterworth"] = append(fam["butterworth"], b.Filter.Impulse(length))
		// Exponentially decaying noise.
		k := make([]float64, length)
		rate := 0.002 + 0.02*rng.Float64()
		for t := range k {
			k[t] = rng.NormFloat64() * math.Exp(-rate*float64(t))
		}
		fam["decaying-noise"] = append(fam["decaying-noise"], k)
		// Windowed-sinc FIR low-pass (Hamming window).
		k = make([]float64, length)
		wc := 0.05 + 0.4*rng.Float64()
		taps := min(31+2*rng.IntN(50), length-length%2-1)
		for t := 0; t < taps; t++ {
			x := float64(t - taps/2)
			s := wc / math.Pi
			if x != 0 {
				s = math.Sin(wc*x) / (math.Pi * x)
			}
			k[t] = s * (0.54 - 0.46*math.Cos(2*math.Pi*float64(t)/float64(taps-1)))
		}
		fam["windowed-sinc"] = append(fam["windowed-sinc"], k)
		// A random stable order-6 IIR (exact for n ≥ 6: tests that nothing is lost).
		a := 0.7 + 0.25*rng.Float64()
		var poles, res []complex128
		for i := 0; i < 3; i++ {
			p := complex(a*math.Cos(0.3*float64(i+1)), a*math.Sin(0.3*float64(i+1)))
			r := complex(rng.NormFloat64(), rng.NormFloat64())
			poles = append(poles, p, complex(real(p), -imag(p)))
			res = append(res, r, complex(real(r), -imag(r)))
		}
		d, _ := filters.NewDiagonal(poles, res, rng.NormFloat64())
		fam["iir"] = append(fam["iir"], d.Impulse(length))
	}
	return fam
}

// TestDistillQuality distils each target family with the paper's recipe (zero init, Adam
// lr 1e-3, 2000 steps), plain ERA and ssmlab's default recipe, logs the table quoted in the
// README (go test ./train -run DistillQuality -v; SSMLAB_QUALITY_CHANNELS=16 for the full
// measurement) and checks that every ssmlab result is stable and no worse than the paper's.
// A second table fits the same targets with a modal model and writes its poles as an RTF:
// where the modal fit is far better, it shows what float64 coefficients lose.
func TestDistillQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("distils 12 banks")
	}
	channels := qualityChannels(4)
	fams := targetFamilies(1024, channels, 1)
	t.Logf("%d channels per family, L = 1024; mean relative L2 error (CPU seconds); the last column bounds any order-n filter's from below", channels)
	orders := []int{4, 16, 64}
	var modalRows []string
	for _, name := range []string{"hyena", "s4-hippo", "butterworth", "windowed-sinc", "decaying-noise"} {
		targets := fams[name]
		// The mean over channels of each channel's lower bound bounds the mean error.
		bounds := meanLowerBounds(targets, orders)
		for k, n := range orders {
			t0 := cpuTime()
			paper, err := Run(context.Background(), Job{Spec: withOrder(PaperSpec(), n), Targets: targets}, CPU{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tp := cpuTime() - t0
			t0 = cpuTime()
			ours, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), n), Targets: targets}, CPU{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			to := cpuTime() - t0
			// Plain ERA as a state-space realisation, and the same realisation as an RTF: the
			// better of its transfer function by filters.ToTF and its poles written as
			// coefficients with the least-squares numerator (rtfForPoles).
			eraErr, eraTFErr := 0.0, 0.0
			for _, y := range targets {
				f, _ := eraFilter(y, n)
				eraErr += relL2(f.Impulse(len(y)), y) / float64(len(targets))
				e := math.Inf(1)
				if tf, _, err := filters.ToTF(f); err == nil {
					e = finiteOr(relL2(tf.Impulse(len(y)), y), e)
				}
				if poles, err := filters.Poles(f); err == nil {
					e = math.Min(e, rtfForPoles(poles, y))
				}
				eraTFErr += e / float64(len(targets))
			}
			t.Logf("| %s | %d | %.3g (%.2fs) | %.3g | %.3g | %.3g (%.2fs) | %.3g |", name, n, paper.Report.MeanRelError, tp.Seconds(), eraErr, eraTFErr, ours.Report.MeanRelError, to.Seconds(), bounds[k])
			if ours.Report.MeanRelError < bounds[k]*(1-1e-9) {
				t.Errorf("%s n=%d: ssmlab's error %.6g is below the lower bound %.6g for any order-%d filter", name, n, ours.Report.MeanRelError, bounds[k], n)
			}
			if !ours.Report.Stable {
				t.Errorf("%s n=%d: unstable result %+v", name, n, ours.Report.Warnings)
			}
			// 2% slack: both are optimisations; the bar is "not worse".
			if ours.Report.MeanRelError > 1.02*paper.Report.MeanRelError {
				t.Errorf("%s n=%d: ssmlab %.3g, paper recipe %.3g", name, n, ours.Report.MeanRelError, paper.Report.MeanRelError)
			}
			// The same recipe with a modal model, and its poles written as an RTF: where the
			// modal model is far better, its poles are ones float64 coefficients cannot hold.
			modalSpec := withOrder(DefaultSpec(), n)
			modalSpec.Model = "modal"
			modal, err := Run(context.Background(), Job{Spec: modalSpec, Targets: targets}, CPU{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			modalTFErr, held := 0.0, 0
			for ch, y := range targets {
				e := math.Inf(1)
				if poles, err := filters.Poles(modal.Filters[ch]); err == nil {
					e = rtfForPoles(poles, y)
				}
				if e <= 2*modal.Report.Channels[ch].RelError {
					held++
				}
				modalTFErr += e / float64(len(targets))
			}
			modalRows = append(modalRows, fmt.Sprintf("| %s | %d | %.3g | %.3g | %.3g (%d of %d within 2x) |", name, n, ours.Report.MeanRelError, modal.Report.MeanRelError, modalTFErr, held, len(targets)))
		}
	}
	t.Log("family | n | ssmlab RTF | modal, same recipe | modal's poles as an RTF")
	for _, r := range modalRows {
		t.Log(r)
	}
}

// rtfForPoles returns the relative error of the best RTF with the given poles: written as
// coefficients both by multiplying out real factors and by interpolation on the unit circle,
// each with the least-squares numerator (refitNumerator), measured by the deployed
// recurrence. It is +Inf when float64 coefficients cannot hold the poles (the recurrence
// diverges).
func rtfForPoles(poles []complex128, y []float64) float64 {
	best := math.Inf(1)
	if len(poles) == 0 {
		return best
	}
	for _, a := range [][]float64{polyFromPoles(poles), filters.PolyFromRoots(poles)} {
		b, err := refitNumerator(a, y)
		if err != nil {
			continue
		}
		if tf, err := filters.NewTransferFunction(a, b, y[0]); err == nil {
			best = math.Min(best, finiteOr(relL2(tf.Impulse(len(y)), y), best))
		}
	}
	return best
}

// qualityChannels is the number of channels per family the quality measurements use: def,
// or SSMLAB_QUALITY_CHANNELS (16 for the figures the README quotes).
func qualityChannels(def int) int {
	if v, err := strconv.Atoi(os.Getenv("SSMLAB_QUALITY_CHANNELS")); err == nil && v > 0 {
		return v
	}
	return def
}

func withOrder(s Spec, n int) Spec { s.Order = n; return s }

// finiteOr returns v, or def when v is NaN or infinite.
func finiteOr(v, def float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return def
	}
	return v
}

// hankelLowerBounds returns, for each order in orders, a lower bound on the relative L2 error
// ‖ĥ - y‖₂/‖y‖₂ of every filter of that order, whatever its form or fitting method. The m×m
// Hankel matrix H(ĥ)ᵢⱼ = ĥ[1+i+j] of an order-n filter has rank ≤ n, and so has DH(ĥ)D for
// any diagonal D = diag(√uᵢ). By Eckart–Young–Mirsky, with e = ĥ - y,
// ‖DH(e)D‖_F² ≥ Σ_{i>n} σᵢ(DH(y)D)², and ‖DH(e)D‖_F² = Σₖ cₖ e[1+k]² with
// cₖ = Σ_{i+j=k} uᵢuⱼ; scaled so that every cₖ ≤ 1, the left side is at most ‖e‖₂². Uniform
// weights (u = 1/√m) give the plain Frobenius bound; uᵢ = C(2i,i)/4ⁱ, with u*u = 1, and
// other weights falling like (i+c)^(-α) count the early samples, where decaying kernels keep
// their energy, fully, and raise the bound on S4 kernels at n = 4 from 0.40 to 0.58. The
// matrix is symmetric, so σᵢ = |λᵢ|; the best of a few m and weights is kept. Each computed
// |λᵢ| is first reduced by m·ε·|λ|max, more than the eigensolver's backward error moves it
// (Weyl), so the bound holds in floating point too: on targets an
// order-n filter fits to rounding level it is 0, not rounding noise.
func hankelLowerBounds(y []float64, orders []int) []float64 {
	norm := 0.0
	for _, v := range y {
		norm += v * v
	}
	norm = math.Sqrt(norm)
	out := make([]float64, len(orders))
	// Weightings uᵢ: uniform, C(2i,i)/4ⁱ (α = 0 and c = 0 mark it), and (i+c)^(-α).
	type weighting struct{ alpha, c float64 }
	weightings := []weighting{{0, 1}, {0, 0}, {0.5, 16}, {0.75, 4}, {0.75, 16}, {1, 16}}
	for _, m := range []int{128, 256, 512} {
		m = min(m, (len(y)-1)/2)
		for _, w := range weightings {
			d := hankelWeights(m, w.alpha, w.c)
			h := mat.NewSymDense(m, nil)
			for i := 0; i < m; i++ {
				for j := i; j < m; j++ {
					h.SetSym(i, j, d[i]*d[j]*y[1+i+j])
				}
			}
			var eig mat.EigenSym
			if !eig.Factorize(h, false) {
				continue
			}
			sq := eig.Values(nil)
			top := math.Max(math.Abs(sq[0]), math.Abs(sq[len(sq)-1])) // ascending
			slack := float64(m) * 0x1p-52 * top
			for i, v := range sq {
				v = math.Max(math.Abs(v)-slack, 0)
				sq[i] = v * v
			}
			sort.Float64s(sq) // ascending: the tail beyond the n largest is the first m - n
			for k, n := range orders {
				tail := 0.0
				for _, v := range sq[:max(m-n, 0)] {
					tail += v
				}
				out[k] = math.Max(out[k], math.Sqrt(tail)/norm)
			}
		}
	}
	return out
}

// meanLowerBounds is the mean over the targets of hankelLowerBounds, computed in parallel.
func meanLowerBounds(targets [][]float64, orders []int) []float64 {
	each := make([][]float64, len(targets))
	var wg sync.WaitGroup
	for i, y := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			each[i] = hankelLowerBounds(y, orders)
		}()
	}
	wg.Wait()
	mean := make([]float64, len(orders))
	for _, b := range each {
		for k, v := range b {
			mean[k] += v / float64(len(targets))
		}
	}
	return mean
}

// hankelWeights returns dᵢ = √uᵢ, i < m, for uᵢ = C(2i,i)/4ⁱ when c = 0 (the coefficients of
// (1-x)^(-½), whose self-convolution is 1) and uᵢ ∝ (i+c)^(-α) otherwise, scaled so that
// every cₖ = Σ_{i+j=k} uᵢuⱼ is at most 1 (with a margin for the rounding of the sums).
func hankelWeights(m int, alpha, c float64) []float64 {
	u := make([]float64, m)
	for i := range u {
		switch {
		case c != 0:
			u[i] = math.Pow(float64(i)+c, -alpha)
		case i == 0:
			u[i] = 1
		default:
			u[i] = u[i-1] * float64(2*i-1) / float64(2*i)
		}
	}
	worst := 0.0
	for k := 0; k < 2*m-1; k++ {
		s := 0.0
		for i := max(0, k-m+1); i <= min(k, m-1); i++ {
			s += u[i] * u[k-i]
		}
		worst = math.Max(worst, s)
	}
	scale := 1 / (math.Sqrt(worst) * (1 + 1e-12))
	d := make([]float64, m)
	for i := range d {
		d[i] = math.Sqrt(u[i] * scale)
	}
	return d
}

// TestHankelLowerBound checks the bound against fits it must not exceed: ERA realisations of
// every order on each family, and an exactly representable target, where it must vanish.
func TestHankelLowerBound(t *testing.T) {
	fams := targetFamilies(512, 2, 3)
	orders := []int{2, 4, 8}
	for _, name := range []string{"s4-hippo", "windowed-sinc", "decaying-noise", "iir"} {
		for ch, y := range fams[name] {
			lb := hankelLowerBounds(y, orders)
			for k, n := range orders {
				f, err := eraFilter(y, n)
				if err != nil {
					t.Fatal(err)
				}
				if e := relL2(f.Impulse(len(y)), y); lb[k] > e*(1+1e-9) {
					t.Errorf("%s channel %d n=%d: lower bound %.6g above ERA's error %.6g", name, ch, n, lb[k], e)
				}
			}
			if name == "iir" && lb[2] > 1e-7 {
				t.Errorf("iir channel %d: bound %.3g at n = 8 for an order-6 target", ch, lb[2])
			}
			if name == "decaying-noise" && !(lb[0] > 0.1) {
				t.Errorf("decaying noise channel %d: bound %.3g at n = 2, want a real bound", ch, lb[0])
			}
		}
	}
}
