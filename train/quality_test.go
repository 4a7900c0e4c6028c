package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/cputime"
	"github.com/ssmlab/ssmlab/presets"
	"github.com/ssmlab/ssmlab/sessions/arrays"
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

// qualityTargets are the quality measurement's kernels, channels of each set: the families
// of targetFamilies and the trained Hyena filters of testdata/trained (layer 0 of both
// tasks), spread evenly over the channels the files hold.
func qualityTargets(t *testing.T, channels int) ([]string, map[string][][]float64) {
	fams := targetFamilies(1024, channels, 1)
	names := []string{"hyena", "s4-hippo", "butterworth", "windowed-sinc", "decaying-noise"}
	for _, task := range []string{"fixed", "drawn"} {
		name := "trained-" + task
		kernels, err := trainedFilters(fmt.Sprintf("../testdata/trained/copy-%s-layer0.npy", task), channels)
		if err != nil {
			t.Fatal(err)
		}
		fams[name] = kernels
		names = append(names, name)
	}
	return names, fams
}

// TestQualityTargetsDump writes the quality targets (qualityChannels(16) channels of each
// set, L = 1024) as float64 .npy files, one per set, into the directory SSMLAB_QUALITY_DUMP
// names: the preset sets for the PyTorch reference of the paper's recipe
// (bench/recipe_torch.py). Skipped without it.
func TestQualityTargetsDump(t *testing.T) {
	dir := os.Getenv("SSMLAB_QUALITY_DUMP")
	if dir == "" {
		t.Skip("set SSMLAB_QUALITY_DUMP to a directory to write the quality targets there")
	}
	names, fams := qualityTargets(t, qualityChannels(16))
	for _, name := range names {
		a, err := arrays.FromRows(fams[name])
		if err != nil {
			t.Fatal(err)
		}
		b, err := arrays.EncodeNPY(a, arrays.Float64)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".npy"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// trainedFilters reads n kernels, spread evenly, from a (channels, L) .npy file.
func trainedFilters(path string, n int) ([][]float64, error) {
	f, err := arrays.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := f.Read("")
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 2 || a.Shape[0] < n {
		return nil, fmt.Errorf("%s: shape %v, want (≥ %d, L)", path, a.Shape, n)
	}
	rows, l := a.Shape[0], a.Shape[1]
	var out [][]float64
	for i := 0; i < n; i++ {
		r := i * rows / n
		out = append(out, a.Data[r*l:(r+1)*l])
	}
	return out, nil
}

// TestDistillQuality distils each quality target set with the default recipe (variable
// projection) at n = 4, 8, 16, 32 and 64, one job per order as distill runs it, and checks
// what issue 23 asks of every result: stable, every channel's error non-increasing in n
// (checkMonotone) and never below the thorough lower bound (allBounds, which the report's must not exceed), and
// the mean error within 3× the mean lower bound where that is at least 1e-6, at most 1e-6
// where it is below; cells known to miss the bar (knownAbove) are logged instead. It logs the
// table the README quotes (go test ./train -run DistillQuality -v; SSMLAB_QUALITY_CHANNELS=16
// for the full measurement, which also times the RTF paper's recipe at each order on the
// same targets, for the CPU-time comparison).
func TestDistillQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("distils the quality targets at five orders")
	}
	channels := qualityChannels(2)
	full := channels >= 8
	names, fams := qualityTargets(t, channels)
	orders := []int{4, 8, 16, 32, 64}
	t.Logf("%d channels per set, L = 1024: mean relative error / mean lower bound (ratio), CPU seconds of the job [the paper recipe's, and its mean error], form", channels)
	worst := 0.0
	for _, name := range names {
		targets := fams[name]
		bounds, each := meanLowerBounds(targets, orders)
		var prev *Result
		row := "| " + name
		for k, n := range orders {
			t0 := cputime.Process()
			res, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), n), Targets: targets}, CPU{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			took := cputime.Process() - t0
			paper := ""
			if full {
				t0 = cputime.Process()
				pr, err := Run(context.Background(), Job{Spec: withOrder(PaperSpec(), n), Targets: targets}, CPU{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				paper = fmt.Sprintf(" [%.2fs, %.3g]", (cputime.Process() - t0).Seconds(), pr.Report.MeanRelError)
			}
			r := res.Report
			ratio := r.MeanRelError / bounds[k]
			row += fmt.Sprintf(" | %.3g / %.3g (%.2g×) %.2fs%s %s", r.MeanRelError, bounds[k], ratio, took.Seconds(), paper, r.Form)
			if !r.Stable {
				t.Errorf("%s n=%d: unstable result %q", name, n, r.Warnings)
			}
			if k > 0 {
				checkMonotone(t, name, Job{Spec: withOrder(DefaultSpec(), orders[k-1]), Targets: targets}, prev, res)
			}
			prev = res
			for ch, c := range r.Channels {
				if lb := each[ch][k]; c.RelError < lb*(1-1e-9) || c.LowerBound > lb*(1+1e-9) {
					t.Errorf("%s channel %d n=%d: error %.6g, report's bound %.6g, thorough bound %.6g", name, ch, n, c.RelError, c.LowerBound, lb)
				}
			}
			met := r.MeanRelError <= 3*bounds[k] || bounds[k] < 1e-6 && r.MeanRelError <= 1e-6
			if bounds[k] >= 1e-6 {
				worst = math.Max(worst, ratio)
			}
			if !met {
				if why, ok := knownAbove[qualityCell{name, n}]; ok {
					t.Logf("%s n=%d: %.3g against a bound of %.3g, above the bar: %s", name, n, r.MeanRelError, bounds[k], why)
				} else {
					t.Errorf("%s n=%d: mean error %.3g against a mean lower bound of %.3g", name, n, r.MeanRelError, bounds[k])
				}
			}
		}
		t.Log(row + " |")
	}
	t.Logf("worst ratio to the lower bound where it is at least 1e-6: %.3g", worst)
}

// checkMonotone checks that no channel's error in res, a job's result, is above its error in
// below, the result of job (of a lower order): compared exactly, in the form each was written.
// One rise is allowed, where an rtf bank goes from tf (below) to diagonal (res): a bank has one
// form, and a channel whose fit below the tf wrote better than poles and residues did (by
// rounding: an exact order-4 target at 1.10e-15 as a tf, 2.78e-15 as poles and residues) rises
// to no more than that fit's poles-and-residues error, as the diagonal form never ends above
// the order below's fit (runRung), which is checked, to the bit, on job refitted with
// Spec.Form diagonal.
func checkMonotone(t *testing.T, name string, job Job, below, res *Result) {
	t.Helper()
	var diag *Result
	for ch, c := range res.Report.Channels {
		e := below.Report.Channels[ch].RelError
		if !(c.RelError > e) {
			continue
		}
		if below.Report.Form == string(filters.FormTF) && res.Report.Form == string(filters.FormDiagonal) {
			if diag == nil {
				job.Spec.Form = filters.FormDiagonal
				var err error
				if diag, err = Run(t.Context(), job, CPU{}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if d := diag.Report.Channels[ch].RelError; c.RelError <= d {
				t.Logf("%s channel %d: %.6g at n = %d (diagonal), above %.6g at n = %d (tf), within that fit's %.6g as poles and residues",
					name, ch, c.RelError, res.Report.Order, e, below.Report.Order, d)
				continue
			}
		}
		t.Errorf("%s channel %d: error %.6g at n = %d (%s), above %.6g at n = %d (%s)", name, ch, c.RelError, res.Report.Order, res.Report.Form, e, below.Report.Order, below.Report.Form)
	}
}

// qualityCell is one target set at one order.
type qualityCell struct {
	set   string
	order int
}

// knownAbove are the cells where the mean error stays above issue 23's bar (16 channels),
// with why and what was tried.
var knownAbove = map[qualityCell]string{
	{"butterworth", 4}:    "the best order-4 filter a direct search over pole placements finds (TestOrderFourNearOptimal) is 0.0216 too: the bound is not tight here",
	{"s4-hippo", 32}:      "0.109 against 0.0353 (3.1×; 0.112 before ERA's conditioned truncation was a start, 0.116 before the rounding of 2026-11-28 evening's faster iterations); ERA's poles reflected and clipped, the FIR realisation's balanced truncation, the order-16 fit with more poles, and 150 iterations in place of 50 all end there; 20 iterations for every start and the best run until it converges take it from 0.124 to 0.116; an AAK (Hankel-norm approximation) start ends within 0.5%, every start run to convergence at 0.111",
	{"trained-fixed", 64}: "0.0088 against 0.00255 (3.4×), every channel 2.8–4.2×: ERA's poles reflected and clipped, the FIR realisation's balanced truncation and the order-32 fit with more poles, each given 20 iterations, the best then run until Levenberg–Marquardt converges (150 iterations in place of 50 end at the same 0.0088); an AAK start and every start run to convergence end within 0.7%, poles allowed beyond the unit circle within 5%: the bound's own slack",
	{"trained-drawn", 64}: "0.000857 against 0.000101 (8.5×): channels 3–15 are 3.5–5.8× above their bounds, the two slowest-decaying 13× and 15× (0.0067 and 0.0026); from ERA's poles reflected (0.0094), clipped (0.0074), the FIR realisation's truncation (0.0076) and the order-32 fit with more poles (0.044), each run to convergence, channel 0 ends at 0.0074 or above, with poles at the radius bound 0.9999 and most of its error after t = 256, where the kernel holds 10% of its norm; ERA on Hankel matrices of 96 to 384 rows starts worse (0.036 to 0.11); an AAK start and every start run to convergence end within 0.02%; channel 0 converges at 0.007419 without the iteration cap (247 iterations; 0.00742 at 200), holding its poles at the radius bound as an active set ends 3–12% worse on the layer, and raising the bound from 0.9999 to 0.99999 takes the layer to 0.00115; the bound holds for unstable filters too, and with poles allowed up to radius 1.01 channel 1 reaches 7.8e-4 (0.0026 stable)",
	{"s4-hippo", 64}:      "the kernel is exactly of order 64 (bound 0), but its HiPPO-LegS eigenvector basis has condition 3e19: as poles and residues it reaches 2e-9 on some channels and 8e-4 on others (the mean 1.37e-3 before solve checked the normal equations' ridge against QR: ERA's starts, at 8e-8–7e-5 with QR's residues on four channels, had ranked last at 0.3–0.6; 7.95e-4 before ERA's truncation to the modes the diagonal form holds was a start; 2.75e-4 before channels of numerical rank below 64 were fitted with that many poles)",
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

// meanLowerBounds is the mean over the targets of their thorough lower bounds (allBounds),
// computed in parallel, and each target's.
func meanLowerBounds(targets [][]float64, orders []int) ([]float64, [][]float64) {
	each := make([][]float64, len(targets))
	var wg sync.WaitGroup
	for i, y := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			each[i] = lowerBounds(y, orders, allBounds)
		}()
	}
	wg.Wait()
	mean := make([]float64, len(orders))
	for _, b := range each {
		for k, v := range b {
			mean[k] += v / float64(len(targets))
		}
	}
	return mean, each
}
