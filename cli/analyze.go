package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/spf13/cobra"

	"github.com/ssmlab/ssmlab/filters"
)

// Limits and defaults of analyze.
const (
	MaxSamples     = 1 << 20 // the largest --impulse and --freq
	DefaultImpulse = 64
	DefaultFreq    = 64
	// MaxBankValues caps the numbers an analysis of a bank prints (channels × (L + 3N)):
	// about 400 MB of JSON.
	MaxBankValues = 1 << 24
)

type analyzeOptions struct {
	impulse, freq int
	poles         bool
	// which sections to print
	wantImpulse, wantFreq, wantPoles bool
}

func newAnalyze(s *streams) *cobra.Command {
	var o analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze FILE [--impulse L] [--freq N] [--poles]",
		Short: "Print a filter's responses, poles and zeros as JSON",
		Long: `Analyze prints one JSON object on stdout for the filter in FILE ("-" reads stdin):

  form, order        always (and name, when FILE has one)
  impulse            --impulse L: h[0], ..., h[L-1]
  omega, H           --freq N: N frequencies from 0 to π inclusive (rad/sample) and
                     H(e^{jω}) at each, as [re, im] pairs (N = 1 gives ω = 0 alone)
  poles, zeros       --poles: as [re, im] pairs, largest modulus first, with
  spectral_radius    max |pole|
  stable             spectral_radius < 1 - 1e-10 (poles closer to the unit circle
                     than their rounding error are not called stable)

With none of --impulse, --freq and --poles, all three sections are printed with L = 64
and N = 64; naming any of them prints only the sections named. L and N lie in
[1, 1048576]. A bank prints {"channels": [{...}, ...]}, one object per channel.

JSON has no NaN or Inf: a value that is not finite (the overflowing impulse response of an
unstable filter, H at a pole on the unit circle) is an error naming the value, and nothing
is printed.`,
		Example: `  ssmlab analyze lru.json
  ssmlab analyze lru.json --impulse 1000 | jq '.impulse[999]'
  ssmlab convert lru.json --to zpk | ssmlab analyze - --poles`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			o.wantImpulse, o.wantFreq, o.wantPoles = fl.Changed("impulse"), fl.Changed("freq"), fl.Changed("poles") && o.poles
			if !fl.Changed("impulse") && !fl.Changed("freq") && !fl.Changed("poles") {
				o.wantImpulse, o.wantFreq, o.wantPoles = true, true, true
			}
			return runAnalyze(s, args[0], o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.impulse, "impulse", DefaultImpulse, "print the first `L` samples of the impulse response")
	f.IntVar(&o.freq, "freq", DefaultFreq, "print the frequency response at `N` points of [0, π]")
	f.BoolVar(&o.poles, "poles", false, "print poles, zeros, stability and spectral radius")
	return cmd
}

// pair is a complex number as [re, im].
type pair [2]float64

// analysis is the JSON object printed for one filter. Sections not asked for are omitted;
// those asked for are present even when empty (an order-0 filter has "poles": []).
type analysis struct {
	Name           string       `json:"name,omitempty"`
	Form           filters.Form `json:"form"`
	Order          int          `json:"order"`
	Impulse        []float64    `json:"impulse,omitzero"`
	Omega          []float64    `json:"omega,omitzero"`
	H              []pair       `json:"H,omitzero"`
	Poles          []pair       `json:"poles,omitzero"`
	Zeros          []pair       `json:"zeros,omitzero"`
	Stable         *bool        `json:"stable,omitempty"`
	SpectralRadius *float64     `json:"spectral_radius,omitempty"`
}

func runAnalyze(s *streams, path string, o analyzeOptions) error {
	for _, c := range []struct {
		flag string
		want bool
		v    int
	}{{"--impulse", o.wantImpulse, o.impulse}, {"--freq", o.wantFreq, o.freq}} {
		if c.want && (c.v < 1 || c.v > MaxSamples) {
			return fmt.Errorf("%s %d is out of range: it must lie between 1 and %d", c.flag, c.v, MaxSamples)
		}
	}
	doc, name, err := s.read(path)
	if err != nil {
		return err
	}
	var omega []float64
	if o.wantFreq {
		omega = frequencies(o.freq)
	}

	var v any
	if doc.Bank == nil {
		a, err := analyze(doc.Filter, o, omega)
		if err != nil {
			return failf("%s: %w", name, err)
		}
		a.Name = doc.Name
		v = a
	} else {
		chans := doc.Bank.Channels
		per := 0
		if o.wantImpulse {
			per += o.impulse
		}
		if o.wantFreq {
			per += 3 * o.freq
		}
		if total := len(chans) * per; total > MaxBankValues {
			return failf("%s: %d channels × %d values each is %d numbers, above the limit %d: ask for fewer with --impulse or --freq",
				name, len(chans), per, total, MaxBankValues)
		}
		out := make([]*analysis, len(chans))
		errs := make([]error, len(chans))
		filters.ForEachChannel(len(chans), func(i int) {
			out[i], errs[i] = analyze(chans[i], o, omega)
		})
		for i, err := range errs {
			if err != nil {
				return failf("%s: channel %d: %w", name, i, err)
			}
		}
		v = struct {
			Name     string      `json:"name,omitempty"`
			Channels []*analysis `json:"channels"`
		}{doc.Name, out}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return failf("%s: %w", name, err)
	}
	return s.writeOut(data)
}

// frequencies returns n points from 0 to π inclusive (just 0 when n is 1).
func frequencies(n int) []float64 {
	w := make([]float64, n)
	for i := 1; i < n; i++ {
		w[i] = math.Pi * float64(i) / float64(n-1)
	}
	if n > 1 {
		w[n-1] = math.Pi
	}
	return w
}

// analyze computes the sections o asks for; every value it returns is finite.
func analyze(f filters.Filter, o analyzeOptions, omega []float64) (*analysis, error) {
	a := &analysis{Form: f.Form(), Order: f.Order()}
	if o.wantImpulse {
		a.Impulse = f.Impulse(o.impulse)
		if i := firstNonFinite(a.Impulse); i >= 0 {
			return nil, fmt.Errorf("impulse[%d] is %v: %s", i, a.Impulse[i], overflowHint(f, i))
		}
	}
	if o.wantFreq {
		a.Omega = omega
		a.H = make([]pair, len(omega))
		for i, h := range f.FreqResponse(omega) {
			if cmplx.IsNaN(h) || cmplx.IsInf(h) {
				return nil, fmt.Errorf("H at omega[%d] = %.6g is %v: a pole lies on the unit circle there", i, omega[i], h)
			}
			a.H[i] = pair{real(h), imag(h)}
		}
	}
	if o.wantPoles {
		poles, err := filters.Poles(f)
		if err != nil {
			return nil, fmt.Errorf("poles: %w", err)
		}
		zeros, err := filters.Zeros(f)
		if err != nil {
			return nil, fmt.Errorf("zeros: %w", err)
		}
		if a.Poles, err = pairs("poles", poles); err != nil {
			return nil, err
		}
		if a.Zeros, err = pairs("zeros", zeros); err != nil {
			return nil, err
		}
		rho, err := filters.SpectralRadius(f)
		if err != nil {
			return nil, fmt.Errorf("spectral radius: %w", err)
		}
		if math.IsNaN(rho) || math.IsInf(rho, 0) {
			return nil, fmt.Errorf("the spectral radius is %v", rho)
		}
		stable := filters.Stable(rho)
		a.Stable, a.SpectralRadius = &stable, &rho
	}
	return a, nil
}

func firstNonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

// overflowHint explains a non-finite impulse sample i.
func overflowHint(f filters.Filter, i int) string {
	hint := fmt.Sprintf("the response overflows float64; --impulse %d stops before it", i)
	if i == 0 {
		hint = "the response overflows float64"
	}
	if rho, err := filters.SpectralRadius(f); err == nil && rho >= 1 {
		return fmt.Sprintf("the filter is unstable (spectral radius %.6g) and %s", rho, hint)
	}
	return hint
}

// pairs converts v to [re, im] pairs (an empty, non-nil slice for none), rejecting
// non-finite values.
func pairs(name string, v []complex128) ([]pair, error) {
	out := make([]pair, len(v))
	for i, z := range v {
		if cmplx.IsNaN(z) || cmplx.IsInf(z) {
			return nil, fmt.Errorf("%s[%d] is %v", name, i, z)
		}
		out[i] = pair{real(z), imag(z)}
	}
	return out, nil
}
