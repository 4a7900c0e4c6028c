package presets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
)

// Limits shared by the presets.
const (
	// MaxDenseOrder caps the order of presets written as dense or rotation matrices: a dense
	// file of order 1024 holds about a million numbers (20 MB), well inside userfile.MaxSize.
	MaxDenseOrder = 1024
	// MaxBankChannels caps the channels of a preset bank.
	MaxBankChannels = 4096
	// MaxBankValues caps channels × (numbers per channel) of a bank or a set of kernels, so
	// that the file stays below userfile.MaxSize at about 20 bytes per number.
	MaxBankValues = 1 << 21
)

var (
	inf    = math.Inf(1)
	negInf = math.Inf(-1)
)

func orderParam(def string, lo, hi float64, help string) Param {
	return Param{Name: "order", Kind: Int, Default: def, Min: lo, Max: hi, Help: help}
}

var seedParam = Param{Name: "seed", Kind: Int, Default: "0", Min: 0, Max: math.MaxUint32,
	Help: "seed of the PCG random source: the same seed gives the same filter"}

var channelsParam = Param{Name: "channels", Kind: Int, Default: "1", Min: 1, Max: MaxBankChannels,
	Help: "number of channels: 1 gives one filter, more give a bank (independent draws)"}

// maxStep bounds Δt: far beyond any timescale of interest, and below the ‖A·Δt‖ at which the
// discretisations lose accuracy (the zero-order hold's matrix exponential, from about 1e10).
const maxStep = 1e3

// stepParams are the Δt parameters of the continuous-time presets (LSSL paper, B.3).
func stepParams(method string) []Param {
	return []Param{
		{Name: "dt", Kind: Float, Min: 0, Max: maxStep, OpenMin: true,
			Help: "step Δt of every channel (default: drawn per channel, log-uniform in [dt_min, dt_max], the LSSL paper, B.3)"},
		{Name: "dt_min", Kind: Float, Min: 0, Max: maxStep, OpenMin: true,
			Help: "smallest Δt drawn when dt is not given (default 0.001)"},
		{Name: "dt_max", Kind: Float, Min: 0, Max: maxStep, OpenMin: true,
			Help: "largest Δt drawn when dt is not given (default 0.1)"},
		{Name: "method", Kind: Choice, Default: method, Choices: []string{"bilinear", "zoh", "euler", "backward_euler"},
			Help: "discretisation (LSSL paper, eq. 3; zoh: zero-order hold)"},
	}
}

// stepper draws the per-channel steps Δt of a continuous-time preset.
type stepper struct {
	fixed    float64
	lo, hi   float64
	method   filters.Discretization
	drawStep bool
	made     *unstableSteps
}

// unstableSteps counts the channels whose stable continuous-time system the method made
// unstable at their step (forward Euler beyond its largest stable step), for the note.
type unstableSteps struct {
	channels, count int // channels discretised so far, and how many of them it made unstable
	first           int // the first such channel, with its step, largest stable step and ρ
	dt, maxDt, rho  float64
}

func newStepper(a Args) (stepper, error) {
	s := stepper{method: filters.Discretization(a.Choice("method")), made: &unstableSteps{}}
	if a.Has("dt") {
		if a.Has("dt_min") || a.Has("dt_max") {
			return s, paramErrorf(a.preset.Name, "dt fixes the step of every channel: give either dt or dt_min/dt_max, not both")
		}
		s.fixed = a.Float("dt")
		return s, nil
	}
	a.fill("dt_min", "0.001")
	a.fill("dt_max", "0.1")
	s.lo, s.hi, s.drawStep = a.Float("dt_min"), a.Float("dt_max"), true
	if s.lo > s.hi {
		return s, paramErrorf(a.preset.Name, "dt_min=%g is above dt_max=%g", s.lo, s.hi)
	}
	return s, nil
}

// step returns the next channel's Δt: log Δt uniform in [log dt_min, log dt_max] (LSSL paper, B.3).
func (s stepper) step(rng *rand.Rand) float64 {
	if !s.drawStep {
		return s.fixed
	}
	return logUniform(rng, s.lo, s.hi)
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	if lo == hi {
		return lo
	}
	l, h := math.Log(lo), math.Log(hi)
	return math.Min(hi, math.Max(lo, math.Exp(l+rng.Float64()*(h-l))))
}

// discretize maps a continuous-time system written in the S4 convention to a discrete-time
// filter in the control convention, the channels in turn, and counts those it made unstable
// (note).
func (s stepper) discretize(sys filters.Filter, dt float64) (filters.Filter, error) {
	c := &filters.Continuous{System: sys, Dt: dt, Method: s.method}
	d, err := c.Discretize()
	if err != nil {
		return nil, err
	}
	ch := s.made.channels
	s.made.channels++
	if maxDt, err := c.MaxStableStep(); err == nil && dt >= maxDt {
		if rho, err := filters.SpectralRadius(d); err == nil && !filters.Stable(rho) {
			if s.made.count == 0 {
				s.made.first, s.made.dt, s.made.maxDt, s.made.rho = ch, dt, maxDt, rho
			}
			s.made.count++
		}
	}
	return filters.FromS4(d)
}

// note says which channels the method made unstable, with the step that would have kept
// them stable; "" when it made none.
func (s stepper) note(a Args) string {
	m := s.made
	if m.count == 0 {
		return ""
	}
	const advice = "take a smaller dt, or method=bilinear, zoh or backward_euler"
	if m.channels == 1 {
		return fmt.Sprintf("%s: method=%s at dt=%.3g made the filter unstable (spectral radius %s, %s) although its continuous-time system is stable: it stays stable only for dt < %.3g; %s",
			a.preset.Name, s.method, m.dt, filters.FormatModulus(m.rho), filters.CirclePlace(m.rho), m.maxDt, advice)
	}
	return fmt.Sprintf("%s: method=%s made %d of %d channels unstable although their continuous-time systems are stable (first: channel %d at dt=%.3g, spectral radius %s; it stays stable only for dt < %.3g); %s",
		a.preset.Name, s.method, m.count, m.channels, m.first, m.dt, filters.FormatModulus(m.rho), m.maxDt, advice)
}

// joinNotes joins a result's notes into its one line.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// channels builds a.Int("channels") filters with one, in order, and returns a single filter
// or a bank.
func channels(a Args, valuesPerChannel int, one func(i int) (filters.Filter, error)) (Result, error) {
	n := a.Int("channels")
	if n*valuesPerChannel > MaxBankValues {
		return Result{}, paramErrorf(a.preset.Name, "channels=%d × %d numbers per channel is above the limit of %d numbers: ask for fewer channels or a lower order",
			n, valuesPerChannel, MaxBankValues)
	}
	out := make([]filters.Filter, n)
	for i := range out {
		f, err := one(i)
		if err != nil {
			return Result{}, err
		}
		out[i] = f
	}
	if n == 1 {
		return Result{Filter: out[0]}, nil
	}
	b, err := filters.NewBank(out)
	if err != nil {
		return Result{}, err
	}
	return Result{Bank: b}, nil
}

// complexNormal draws a complex number whose real and imaginary parts are N(0, v/2), so that
// E|z|² = v (torch.randn with a complex dtype, for v = 1).
func complexNormal(rng *rand.Rand, v float64) complex128 {
	s := math.Sqrt(v / 2)
	re := rng.NormFloat64() * s
	return complex(re, rng.NormFloat64()*s)
}

func normals(rng *rand.Rand, n int, std float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * std
	}
	return v
}

func uniforms(rng *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// statesNote returns the note of a result whose filter, or some of whose channels, came out
// with fewer than want states, the number the preset's parameters give when no state is lost;
// why says how states were lost. It returns "" when every channel has want states.
func statesNote(a Args, r Result, want int, why string) string {
	var orders []int
	switch {
	case r.Filter != nil:
		orders = []int{r.Filter.Order()}
	case r.Bank != nil:
		for _, f := range r.Bank.Channels {
			orders = append(orders, f.Order())
		}
	}
	short, fewest, first := 0, want, -1
	for i, k := range orders {
		if k < want {
			short++
			if k < fewest {
				fewest, first = k, i
			}
		}
	}
	asked := fmt.Sprintf("order=%d", a.Int("order"))
	switch {
	case short == 0:
		return ""
	case r.Filter != nil:
		return fmt.Sprintf("%s: the filter has %s where %s gives %d: %s", a.preset.Name, plural.Count(fewest, "state"), asked, want, why)
	}
	return fmt.Sprintf("%s: %d of %s have fewer than the %d states %s gives (fewest: %d, channel %d): %s",
		a.preset.Name, short, plural.Count(len(orders), "channel"), want, asked, fewest, first, why)
}
