package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/spf13/cobra"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/cplx"
)

// Limits and defaults of analyze.
const (
	MaxSamples     = 1 << 20 // the largest --impulse, --step, --freq and --group-delay
	DefaultImpulse = 64
	DefaultFreq    = 64
	// MaxBankValues caps the numbers an analysis of a bank prints (channels × (L + 3N)):
	// about 400 MB of JSON.
	MaxBankValues = 1 << 24
)

type analyzeOptions struct {
	impulse, freq, step, groupDelay, reduce      int
	poles, hsv, h2, hinf, autoLength, properties bool
	force                                        bool
	method                                       string
	out                                          string
	// which sections to print
	wantImpulse, wantFreq, wantPoles, wantStep, wantGroupDelay, wantReduce bool
	// the impulse algorithm
	m analysis.Method
}

func newAnalyze(s *streams) *cobra.Command {
	var o analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze FILE [--impulse L] [--step L] [--freq N] [--group-delay N] [--poles] [--h2] [--hinf] [--hsv] [--reduce R [-o OUT]]",
		Short: "Print a filter's responses, poles, zeros and norms as JSON",
		Long: `Analyze prints one JSON object on stdout for the filter in FILE ("-" reads stdin):

  form, order        always (and name, when FILE has one)
  impulse            --impulse L: h[0], ..., h[L-1]
  step               --step L: the step response s[t] = h[0] + ... + h[t], t < L
  omega, H           --freq N: N frequencies from 0 to π inclusive (rad/sample) and
                     H(e^{jω}) at each, as [re, im] pairs (N = 1 gives ω = 0 alone); for
                     a filter that is not stable a warning says that this is not the
                     response it settles to (so does --group-delay's)
  group_delay        --group-delay N: {"omega": [...], "tau": [...]} on the same kind of
                     grid, τ = -dφ/dω in samples, from the poles and zeros; "notes" lists
                     the grid points on a zero or pole on the unit circle, where the phase
                     jumps by π and tau holds the (finite) two-sided limit
  poles, zeros       --poles: as [re, im] pairs, largest modulus first, with
  spectral_radius    max |pole|
  stable             spectral_radius < 1 - 1e-10 (poles closer to the unit circle
                     than their rounding error are not called stable)
  h2                 --h2: the H2 norm (Σ h[t]²)^½, from the discrete Lyapunov equation;
                     a filter that is not stable has none, and analyze fails naming the
                     poles on or outside the unit circle
  hinf, hinf_omega   --hinf: the H∞ norm max over ω of |H(e^{jω})| and a frequency in
                     [0, π] where it is attained: |H| sampled on a grid and around each
                     pole's angle, each local peak refined by golden-section search; a
                     filter that is not stable has none, as for --h2
  hsv                --hsv: the Hankel singular values of the stable part, largest first
                     (square-root method); "hsv_unstable" lists the poles on or outside the
                     unit circle, which have none, when there are any
  properties         --properties: {"stability": stable|marginal|unstable, "offending_poles",
                     "montel_sum" (Σ|aᵢ| of the monic denominator, the RTF paper, eq. 17; ≤ 1
                     guarantees stability), "memory" (samples until |h| stays below
                     memory_tol·max|h| over t ≥ 1, where D does not count, measured on
                     the response; -1 when not stable; null
                     when the response is not over within the 65536 samples measured, and
                     "memory_at_least" then gives a lower bound), "memory_tol", "dc_gain"
                     (H(1), null for a pole at z = 1)}
  reduce             --reduce R: balanced truncation to order R: {"order", "error_bound",
                     "filter"}; max over ω of |H - H_R| ≤ error_bound. Poles on or outside
                     the unit circle are kept exactly, so R must be at least their number.
                     With -o OUT the reduced filter (dense form) is written to OUT instead
                     of "filter", named "balanced truncation to order R of NAME" (NAME the
                     input's), and "output" names OUT. "order" is below R when the
                     Hankel singular values from σ_{order+1} on are at or below the
                     numerical rank's cut n·ε·σ₁: "warnings" then says so with the numbers,
                     and so does stderr.
  estimated_error    --force: {"h2", "hsv", "reduce"}, for each of those results printed
                     although its estimated error is above the documented 1e-6: that
                     error, relative to the H2 norm, or to σ₁ for hsv and reduce

--method recurrence|fft|vandermonde|scan picks the algorithm of --impulse and --step (default
recurrence, the form's own recurrence); all four agree to about 1e-12. fft is the state-free
RTF kernel (FFTs of the transfer-function coefficients with the truncation correction),
vandermonde sums the modes, scan runs the diagonal recurrence as a parallel prefix scan; the
last three convert the filter to the form they need first, and fail on a defective one
(fft also on a pole on the unit circle at a point of its L-point grid: an integrator's z = 1).

--auto-length picks L from the pole radius (log(1e-12)/log ρ samples: until a stable
response has decayed to 1e-12, an unstable one has grown by 1e12; 65536 for a marginal
one), or for a stable filter the measured time its response takes to stay below 1e-12 of
its peak when that is longer (repeated poles, a late start), at most the L given to
--impulse or --step; alone it prints the impulse response.

With none of --impulse, --step, --freq, --group-delay, --poles, --h2, --hinf, --hsv, --reduce,
--properties and --auto-length, impulse, frequency response and poles are printed with L = 64 and N = 64;
naming any of them prints only the sections named. L and N lie in [1, 1048576]. A bank
prints {"channels": [{...}, ...]}, one object per channel, computed in parallel.

JSON has no NaN or Inf: a value that is not finite (the overflowing impulse response of an
unstable filter, H at a pole on the unit circle) is an error naming the value, and nothing
is printed.

A result whose estimated error is above the documented 1e-6 (the H2 norm and Hankel
singular values of repeated or clustered poles near the unit circle, which the Schur form
rounds apart) fails (exit 1) and nothing is printed or written. --force prints it anyway,
with its error in "estimated_error" and a warning on stderr, writes -o OUT, and exits 0; it
does not print what could not be computed (an unstable filter's H2 norm, an overflow).`,
		Example: `  ssmlab analyze lru.json
  ssmlab analyze lru.json --impulse 1000 | jq '.impulse[999]'
  ssmlab analyze rtf.json --impulse 4096 --method fft
  ssmlab analyze lru.json --auto-length --step 100000
  ssmlab analyze lru.json --h2 --hinf --hsv --group-delay 512
  ssmlab analyze s4.json --reduce 8 -o s4-order8.json
  ssmlab convert lru.json --to zpk | ssmlab analyze - --poles`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			o.wantImpulse, o.wantFreq, o.wantPoles = fl.Changed("impulse"), fl.Changed("freq"), fl.Changed("poles") && o.poles
			o.wantStep, o.wantGroupDelay, o.wantReduce = fl.Changed("step"), fl.Changed("group-delay"), fl.Changed("reduce")
			o.hsv, o.h2, o.hinf = fl.Changed("hsv") && o.hsv, fl.Changed("h2") && o.h2, fl.Changed("hinf") && o.hinf
			o.properties = fl.Changed("properties") && o.properties
			if o.autoLength && !o.wantImpulse && !o.wantStep {
				o.wantImpulse = true
				o.impulse = analysis.MaxAutoLength
			}
			if !o.wantImpulse && !o.wantFreq && !fl.Changed("poles") && !o.wantStep && !o.wantGroupDelay &&
				!fl.Changed("hsv") && !fl.Changed("h2") && !fl.Changed("hinf") && !o.wantReduce && !fl.Changed("properties") {
				o.wantImpulse, o.wantFreq, o.wantPoles = true, true, true
			}
			if fl.Changed("output") && !o.wantReduce {
				return fmt.Errorf("-o applies only to --reduce R (the analysis itself goes to stdout)")
			}
			if o.out == "-" {
				// Two JSON documents on stdout would break the one-object promise (and jq).
				return fmt.Errorf("-o -: stdout carries the analysis; leave -o out and the reduced filter is its reduce.filter")
			}
			return runAnalyze(s, args[0], o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.impulse, "impulse", DefaultImpulse, "print the first `L` samples of the impulse response")
	f.IntVar(&o.step, "step", DefaultImpulse, "print the first `L` samples of the step response")
	f.IntVar(&o.freq, "freq", DefaultFreq, "print the frequency response at `N` points of [0, π]")
	f.IntVar(&o.groupDelay, "group-delay", DefaultFreq, "print the group delay at `N` points of [0, π]")
	f.BoolVar(&o.poles, "poles", false, "print poles, zeros, stability and spectral radius")
	f.BoolVar(&o.h2, "h2", false, "print the H2 norm (stable filters only)")
	f.BoolVar(&o.hinf, "hinf", false, "print the H∞ norm max|H(e^{jω})| and its frequency (stable filters only)")
	f.BoolVar(&o.properties, "properties", false, "print the stability verdict, offending poles, Montel sum, effective memory and DC gain")
	f.BoolVar(&o.hsv, "hsv", false, "print the Hankel singular values")
	f.IntVar(&o.reduce, "reduce", 0, "reduce to order `R` by balanced truncation")
	f.StringVarP(&o.out, "output", "o", "", "with --reduce: write the reduced filter to `OUT`")
	f.StringVar(&o.method, "method", string(analysis.Recurrence), "the impulse `algorithm`: recurrence, fft, vandermonde or scan")
	f.BoolVar(&o.autoLength, "auto-length", false, "choose L from the pole radius (at most the L given)")
	f.BoolVar(&o.force, "force", false, "print (and write) a result outside the documented accuracy (estimated error above 1e-6) instead of failing")
	return cmd
}

// pair is a complex number as [re, im] (package cplx).
type pair = [2]float64

// groupDelayJSON is the "group_delay" section.
type groupDelayJSON struct {
	Omega []float64       `json:"omega"`
	Tau   []float64       `json:"tau"`
	Notes []analysis.Note `json:"notes,omitempty"`
}

// reducedName names the filter --reduce -o writes: the input's name may be a preset's recipe
// ("lru order=8 r_min=0.4 … seed=0"), which rebuilds the input, not its reduction.
func reducedName(name string, order int) string {
	what := fmt.Sprintf("balanced truncation to order %d", order)
	if name == "" {
		return what
	}
	return what + " of " + name
}

// reduceJSON is the "reduce" section.
type reduceJSON struct {
	Order      int             `json:"order"`
	ErrorBound float64         `json:"error_bound"`
	Filter     json.RawMessage `json:"filter,omitempty"`
	Output     string          `json:"output,omitempty"`
	// Warnings says why Order is below the order asked (analysis.Reduced.Shortfall).
	Warnings []string `json:"warnings,omitempty"`
}

// analysisJSON is the JSON object printed for one filter. Sections not asked for are omitted;
// those asked for are present even when empty (an order-0 filter has "poles": []).
type analysisJSON struct {
	Name           string          `json:"name,omitempty"`
	Form           filters.Form    `json:"form"`
	Order          int             `json:"order"`
	Impulse        []float64       `json:"impulse,omitzero"`
	Step           []float64       `json:"step,omitzero"`
	Omega          []float64       `json:"omega,omitzero"`
	H              []pair          `json:"H,omitzero"`
	GroupDelay     *groupDelayJSON `json:"group_delay,omitempty"`
	Poles          []pair          `json:"poles,omitzero"`
	Zeros          []pair          `json:"zeros,omitzero"`
	Stable         *bool           `json:"stable,omitempty"`
	SpectralRadius *float64        `json:"spectral_radius,omitempty"`
	H2             *float64        `json:"h2,omitempty"`
	HInf           *float64        `json:"hinf,omitempty"`
	HInfOmega      *float64        `json:"hinf_omega,omitempty"`
	HSV            []float64       `json:"hsv,omitzero"`
	HSVUnstable    []pair          `json:"hsv_unstable,omitempty"`
	Properties     *propertiesJSON `json:"properties,omitempty"`
	Reduce         *reduceJSON     `json:"reduce,omitempty"`
	// EstimatedError holds, under the section's key (h2, hsv, reduce), the estimated error
	// of a result --force printed although it is above filters.MaxRelError.
	EstimatedError map[string]float64 `json:"estimated_error,omitempty"`

	reduced  *filters.Dense // the --reduce result, for -o
	warnings []string       // for stderr: the results --force accepted, a reduction's shortfall
}

// forced returns the result err refuses for its accuracy alone (an *analysis.AccuracyError
// holding it) when --force accepts it, recording its estimated error under key and a
// warning; nil otherwise.
func (a *analysisJSON) forced(o analyzeOptions, key string, err error) any {
	var ae *analysis.AccuracyError
	if !o.force || !errors.As(err, &ae) || ae.Result == nil {
		return nil
	}
	if a.EstimatedError == nil {
		a.EstimatedError = map[string]float64{}
	}
	a.EstimatedError[key] = ae.Rel
	done := "printed"
	if key == "reduce" && o.out != "" {
		done = "written"
	}
	a.warnings = append(a.warnings, fmt.Sprintf("%s; --force: %s anyway (estimated_error.%s)", oneLine(ae.Error()), done, key))
	return ae.Result
}

func runAnalyze(s *streams, path string, o analyzeOptions) error {
	for _, c := range []struct {
		flag string
		want bool
		v    int
	}{{"--impulse", o.wantImpulse, o.impulse}, {"--step", o.wantStep, o.step}, {"--freq", o.wantFreq, o.freq}, {"--group-delay", o.wantGroupDelay, o.groupDelay}} {
		if c.want && (c.v < 1 || c.v > MaxSamples) {
			return fmt.Errorf("%s %d is out of range: it must lie between 1 and %d", c.flag, c.v, MaxSamples)
		}
	}
	if o.wantReduce && o.reduce < 0 {
		return fmt.Errorf("--reduce %d is out of range: the order must be at least 0", o.reduce)
	}
	m, err := analysis.ParseMethod(o.method)
	if err != nil {
		return fmt.Errorf("--method %q is not an algorithm (want one of recurrence, fft, vandermonde, scan)", o.method)
	}
	o.m = m
	if o.wantReduce {
		if err := checkOutputs([]string{path}, output{"-o", "the reduced filter", o.out}); err != nil {
			return err
		}
	}
	doc, name, err := s.read(path)
	if err != nil {
		return err
	}
	var omega, gdOmega []float64
	if o.wantFreq {
		omega = analysis.LinearGrid(o.freq)
	}
	if o.wantGroupDelay {
		gdOmega = analysis.LinearGrid(o.groupDelay)
	}

	var v any
	var reduced filters.Document
	var warnings []string
	if doc.Bank == nil {
		a, err := analyze(doc.Filter, o, omega, gdOmega, 0)
		if err != nil {
			return failf("%s: %w", name, err)
		}
		a.Name = doc.Name
		v = a
		for _, w := range a.warnings {
			warnings = append(warnings, fmt.Sprintf("%s: %s", name, w))
		}
		if a.reduced != nil {
			reduced = filters.Document{Name: reducedName(doc.Name, a.reduced.Order()), Filter: a.reduced}
		}
	} else {
		chans := doc.Bank.Channels
		lengths := make([]int, len(chans))
		errs := make([]error, len(chans))
		if o.autoLength && (o.wantImpulse || o.wantStep) {
			filters.ForEachChannel(len(chans), func(i int) {
				lengths[i], errs[i] = analysis.AutoLength(chans[i], 0)
			})
			for i, err := range errs {
				if err != nil {
					return failf("%s: channel %d: %w", name, i, err)
				}
			}
		}
		total := 0
		for i := range chans {
			per := 0
			if o.wantImpulse {
				per += o.length(o.impulse, lengths[i])
			}
			if o.wantStep {
				per += o.length(o.step, lengths[i])
			}
			if o.wantFreq {
				per += 3 * o.freq
			}
			if o.wantGroupDelay {
				per += 2 * o.groupDelay
			}
			total += per
		}
		if total > MaxBankValues {
			return failf("%s: %d channels make %d numbers, above the limit %d: ask for fewer with --impulse, --step, --freq or --group-delay",
				name, len(chans), total, MaxBankValues)
		}
		out := make([]*analysisJSON, len(chans))
		filters.ForEachChannel(len(chans), func(i int) {
			out[i], errs[i] = analyze(chans[i], o, omega, gdOmega, lengths[i])
		})
		for i, err := range errs {
			if err != nil {
				return failf("%s: channel %d: %w", name, i, err)
			}
		}
		for i, a := range out {
			for _, w := range a.warnings {
				warnings = append(warnings, fmt.Sprintf("%s: channel %d: %s", name, i, w))
			}
		}
		v = struct {
			Name     string          `json:"name,omitempty"`
			Channels []*analysisJSON `json:"channels"`
		}{doc.Name, out}
		if o.wantReduce {
			red := make([]filters.Filter, len(out))
			top := 0
			for i, a := range out {
				red[i] = a.reduced
				top = max(top, a.reduced.Order())
			}
			reduced = filters.Document{Name: reducedName(doc.Name, top), Bank: &filters.Bank{Channels: red}}
		}
	}
	if o.wantReduce && o.out != "" {
		if err := s.write(o.out, reduced); err != nil {
			return err
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return failf("%s: %w", name, err)
	}
	if err := s.writeOut(data); err != nil {
		return err
	}
	// Last, so that a failure above leaves its error as the only line on stderr.
	for _, w := range warnings {
		fmt.Fprintf(s.err, "warning: %s\n", w)
	}
	return nil
}

// length is the number of samples of --impulse or --step: L, or with --auto-length the
// automatic length (auto, or computed when 0) capped at L.
func (o analyzeOptions) length(l, auto int) int {
	if !o.autoLength {
		return l
	}
	return min(l, auto)
}

// analyze computes the sections o asks for; every value it returns is finite. auto is the
// automatic length of --auto-length (0: compute it here).
func analyze(f filters.Filter, o analyzeOptions, omega, gdOmega []float64, auto int) (*analysisJSON, error) {
	a := &analysisJSON{Form: f.Form(), Order: f.Order()}
	if o.autoLength && auto == 0 && (o.wantImpulse || o.wantStep) {
		var err error
		if auto, err = analysis.AutoLength(f, 0); err != nil {
			return nil, fmt.Errorf("auto length: %w", err)
		}
	}
	if o.wantImpulse {
		l := o.length(o.impulse, auto)
		h, err := analysis.Impulse(nil, f, l, o.m)
		if err != nil {
			return nil, responseError(err, f, "--impulse")
		}
		a.Impulse = h
	}
	if o.wantStep {
		l := o.length(o.step, auto)
		st, err := analysis.Step(nil, f, l, o.m)
		if err != nil {
			return nil, responseError(err, f, "--step")
		}
		a.Step = st
	}
	if o.wantFreq {
		r := analysis.FreqResponse(f, omega)
		a.Omega = omega
		a.H = make([]pair, len(omega))
		for i, h := range r.H {
			if r.Masked[i] {
				switch n := noteAt(r.Notes, i); {
				case n.Root == "pole":
					//lint:ignore ST1005 H is the transfer function's symbol
					return nil, fmt.Errorf("H at omega[%d] = %.6g is infinite: a pole lies on the unit circle there", i, omega[i])
				case n.Overflow:
					//lint:ignore ST1005 H is the transfer function's symbol
					return nil, fmt.Errorf("H at omega[%d] = %.6g is beyond float64's range, with no pole there: the filter's gain is too large (scale B and C, or the numerator, down)", i, omega[i])
				}
			}
			a.H[i] = pair{real(h), imag(h)}
		}
	}
	if o.wantGroupDelay {
		g, err := analysis.GroupDelayOf(f, gdOmega)
		if err != nil {
			return nil, fmt.Errorf("group delay: %w", err)
		}
		a.GroupDelay = &groupDelayJSON{Omega: g.Omega, Tau: g.Tau, Notes: g.Notes}
	}
	if o.wantFreq || o.wantGroupDelay {
		if note := analysis.SteadyStateNote(f); note != "" {
			a.warnings = append(a.warnings, note)
		}
	}
	if o.wantPoles {
		poles, err := analysis.Poles(f)
		if err != nil {
			return nil, fmt.Errorf("poles: %w", err)
		}
		zeros, err := analysis.Zeros(f)
		if err != nil {
			return nil, fmt.Errorf("zeros: %w", err)
		}
		if a.Poles, err = pairs("poles", poles); err != nil {
			return nil, err
		}
		if a.Zeros, err = pairs("zeros", zeros); err != nil {
			return nil, err
		}
		rho := 0.0
		for _, p := range poles {
			rho = math.Max(rho, cmplx.Abs(p))
		}
		stable := filters.Stable(rho)
		a.Stable, a.SpectralRadius = &stable, &rho
	}
	if o.properties {
		pr, err := analysis.Analyze(f, 0)
		if err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
		pj := &propertiesJSON{Stability: pr.Stability.String(), Montel: pr.Montel, Memory: &pr.Memory, MemoryTol: pr.Tol}
		if pr.MemoryAtLeast {
			pj.Memory, pj.MemoryAtLeast = nil, &pr.Memory
		}
		if pr.DCFinite {
			pj.DCGain = &pr.DCGain
		}
		if pj.Offending, err = pairs("offending_poles", pr.Offending); err != nil {
			return nil, err
		}
		a.Properties = pj
	}
	if err := a.addNorms(f, o); err != nil {
		return nil, err
	}
	return a, nil
}

// addNorms computes the sections of the Gramians o asks for: the H2 norm, the Hankel singular
// values and the balanced truncation (each, with --force, also where only its accuracy is
// refused).
func (a *analysisJSON) addNorms(f filters.Filter, o analyzeOptions) error {
	if o.h2 {
		h2, err := analysis.H2(f)
		if v, ok := a.forced(o, "h2", err).(float64); ok {
			h2, err = v, nil
		}
		if err != nil {
			return err
		}
		a.H2 = &h2
	}
	if o.hinf {
		norm, omega, err := analysis.HInf(f)
		if err != nil {
			return err
		}
		a.HInf, a.HInfOmega = &norm, &omega
	}
	if o.hsv {
		hs, err := analysis.HankelSV(f)
		if v, ok := a.forced(o, "hsv", err).(*analysis.HSV); ok {
			hs, err = v, nil
		}
		if err != nil {
			return about("Hankel singular values", err)
		}
		a.HSV = hs.Values
		if len(hs.Unstable) > 0 {
			if a.HSVUnstable, err = pairs("hsv_unstable", hs.Unstable); err != nil {
				return err
			}
		}
	}
	if o.wantReduce {
		red, err := analysis.BalancedTruncation(f, o.reduce)
		if v, ok := a.forced(o, "reduce", err).(*analysis.Reduced); ok {
			red, err = v, nil
		}
		if err != nil {
			return fmt.Errorf("--reduce %d: %w", o.reduce, err)
		}
		a.reduced = red.Filter
		a.Reduce = &reduceJSON{Order: red.Order, ErrorBound: red.Bound, Output: o.out}
		if why := red.Shortfall(o.reduce); why != "" {
			w := fmt.Sprintf("--reduce %d: reduced to order %d: %s", o.reduce, red.Order, why)
			a.Reduce.Warnings = []string{w}
			a.warnings = append(a.warnings, w)
		}
		if o.out == "" {
			data, err := filterfile.Marshal(filters.Document{Filter: red.Filter})
			if err != nil {
				return fmt.Errorf("--reduce %d: %w", o.reduce, err)
			}
			a.Reduce.Filter = data
		}
	}
	return nil
}

// about prefixes err with the analysis it comes from, unless err names its quantity itself
// (an accuracy, range or order-limit refusal).
func about(what string, err error) error {
	var ae *analysis.AccuracyError
	var nf *analysis.NonFiniteError
	var ol *analysis.OrderLimitError
	var ow *analysis.OverflowWithinError
	if errors.As(err, &ae) || errors.As(err, &nf) || errors.As(err, &ol) || errors.As(err, &ow) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// noteAt returns the note of grid point i (the zero Note where there is none).
func noteAt(notes []analysis.Note, i int) analysis.Note {
	for _, n := range notes {
		if n.Index == i && (n.Root == "pole" || n.Overflow) {
			return n
		}
	}
	return analysis.Note{}
}

// responseError explains a failed impulse or step response; flag names the option whose
// length stops before an overflow.
func responseError(err error, f filters.Filter, flag string) error {
	if ow := (*analysis.OverflowWithinError)(nil); errors.As(err, &ow) {
		// The fft method's transforms overflow before the response: no shorter length is sure
		// to pass, and the recurrence names the sample.
		return fmt.Errorf("%w; --method recurrence computes the response as far as float64 holds it, and names the first sample that does not", err)
	}
	var nf *analysis.NonFiniteError
	if !errors.As(err, &nf) {
		return fmt.Errorf("%s: %w", flag[2:], err)
	}
	return fmt.Errorf("%s[%d] is %v: %s", nf.What, nf.Index, nf.Value, overflowHint(f, nf.Index, flag))
}

// overflowHint explains a non-finite response sample i.
func overflowHint(f filters.Filter, i int, flag string) string {
	hint := fmt.Sprintf("the response overflows float64; %s %d stops before it", flag, i)
	if i == 0 {
		hint = "the response overflows float64"
	}
	if rho, err := analysis.SpectralRadius(f); err == nil && rho >= 1 {
		return fmt.Sprintf("the filter is unstable (spectral radius %.6g) and %s", rho, hint)
	}
	return hint
}

// pairs converts v to [re, im] pairs (an empty, non-nil slice for none), rejecting
// non-finite values.
func pairs(name string, v []complex128) ([]pair, error) {
	for i, z := range v {
		if cmplx.IsNaN(z) || cmplx.IsInf(z) {
			return nil, fmt.Errorf("%s[%d] is %v", name, i, z)
		}
	}
	return cplx.Pairs(v), nil
}

// propertiesJSON is the --properties section.
type propertiesJSON struct {
	Stability string  `json:"stability"` // stable, marginal or unstable
	Offending []pair  `json:"offending_poles,omitempty"`
	Montel    float64 `json:"montel_sum"` // Σ|aᵢ| of the monic denominator (RTF paper, eq. 17)
	Memory    *int    `json:"memory"`     // samples until |h| stays below memory_tol·max|h|; -1 if not stable; null if not over within the window measured
	// MemoryAtLeast is set instead of Memory where the response is not over within the
	// analysis.MaxAutoLength samples measured: a lower bound.
	MemoryAtLeast *int     `json:"memory_at_least,omitempty"`
	MemoryTol     float64  `json:"memory_tol"`
	DCGain        *float64 `json:"dc_gain"` // H(1); null for a pole at z = 1
}
