package presets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
)

// Errors wrapped by the failures of Lookup, Parse and New. Both mark a mistake in what was
// asked for (a usage error), not a numerical failure.
var (
	// ErrUnknownPreset marks a preset name that is not in the registry.
	ErrUnknownPreset = errors.New("unknown preset")
	// ErrParam marks an unknown parameter, a malformed or out-of-range value, or a
	// combination of values that does not make sense.
	ErrParam = errors.New("bad preset parameter")
)

// usageError is an error with a complete message that wraps ErrUnknownPreset or ErrParam.
type usageError struct {
	kind error
	msg  string
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.kind }

// paramErrorf returns an error wrapping ErrParam whose message starts with the preset's name.
func paramErrorf(preset, format string, args ...any) error {
	return &usageError{ErrParam, preset + ": " + fmt.Sprintf(format, args...)}
}

// Kind is the type of a parameter's value.
type Kind int

// The kinds of parameter values.
const (
	// Int is a decimal integer.
	Int Kind = iota + 1
	// Float is a real number: a decimal number, or an expression in π such as "pi/4",
	// "3pi/4", "2*pi" or "π/10" (see ParseFloat).
	Float
	// Choice is one of a fixed list of words.
	Choice
)

// Param describes one parameter of a preset.
type Param struct {
	Name string
	Kind Kind
	// Default is the value used when the parameter is not given, written as a user would
	// write it. An empty Default makes the parameter optional: Build then sees it unset and
	// derives the value itself (Help says how).
	Default string
	// Min and Max bound an Int or Float value (±Inf for no bound); OpenMin and OpenMax
	// exclude the bound itself.
	Min, Max         float64
	OpenMin, OpenMax bool
	// Choices lists the accepted words of a Choice parameter.
	Choices []string
	// Help is a one-line description.
	Help string
}

// Range describes the accepted values: "integer in [1, 64]", "number in (0, π)",
// "one of lowpass, highpass".
func (p Param) Range() string {
	switch p.Kind {
	case Choice:
		return "one of " + strings.Join(p.Choices, ", ")
	case Int:
		return "integer " + interval(p.Min, p.Max, p.OpenMin, p.OpenMax)
	}
	return "number " + interval(p.Min, p.Max, p.OpenMin, p.OpenMax)
}

// interval writes a range; integral ends are written in full ("4294967295", not "4.3e+09").
func interval(lo, hi float64, openLo, openHi bool) string {
	if math.IsInf(lo, -1) && math.IsInf(hi, 1) {
		return "(any)"
	}
	l, r := "[", "]"
	if openLo || math.IsInf(lo, -1) {
		l = "("
	}
	if openHi || math.IsInf(hi, 1) {
		r = ")"
	}
	return "in " + l + bound(lo) + ", " + bound(hi) + r
}

// bound writes a range end, naming the multiples of π the parameters use.
func bound(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	case x == math.Pi:
		return "π"
	case x == 2*math.Pi:
		return "2π"
	case x == -2*math.Pi:
		return "-2π"
	case x == math.Trunc(x) && math.Abs(x) < 1<<53:
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// parse reads and checks one value.
func (p Param) parse(preset, text string) (value, error) {
	v := value{text: text}
	switch p.Kind {
	case Choice:
		if !slices.Contains(p.Choices, text) {
			return v, paramErrorf(preset, "%s=%s: want one of %s", p.Name, text, strings.Join(p.Choices, ", "))
		}
		v.word = text
		return v, nil
	case Int:
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			// a whole number in another notation (1e3, 64.0) is one: checked against the
			// range below, so that order=1e9 is out of range rather than "not an integer"
			x, ferr := ParseFloat(text)
			if ferr != nil || x != math.Trunc(x) {
				return v, paramErrorf(preset, "%s=%s is not an integer: want an integer %s", p.Name, text, interval(p.Min, p.Max, p.OpenMin, p.OpenMax))
			}
			if math.Abs(x) >= 1<<53 {
				return v, paramErrorf(preset, "%s=%s is out of range: want %s", p.Name, text, p.Range())
			}
			i = int64(x)
		}
		v.num = float64(i)
		v.integer = i
	case Float:
		x, err := ParseFloat(text)
		if errors.Is(err, ErrNotFinite) {
			return v, paramErrorf(preset, "%v", WantFinite(p.Name)) // as every float flag
		}
		if err != nil {
			return v, paramErrorf(preset, "%s=%s is not a number (%v): want a number %s", p.Name, text, err, interval(p.Min, p.Max, p.OpenMin, p.OpenMax))
		}
		v.num = x
	default:
		panic("presets: parameter " + p.Name + " has no kind")
	}
	if v.num < p.Min || v.num > p.Max || (p.OpenMin && v.num == p.Min) || (p.OpenMax && v.num == p.Max) {
		return v, paramErrorf(preset, "%s=%s is out of range: want %s", p.Name, text, p.Range())
	}
	return v, nil
}

// value is one parsed parameter value.
type value struct {
	text    string
	num     float64
	integer int64
	word    string
}

// Args holds the parsed and checked parameters of one preset: every given value, and the
// default of every parameter not given.
type Args struct {
	preset *Preset
	vals   map[string]value
	given  map[string]bool
}

func (a Args) get(name string, kind Kind) (value, bool) {
	p := a.preset.param(name)
	if p == nil {
		panic("presets: " + a.preset.Name + " has no parameter " + name)
	}
	if p.Kind != kind {
		panic("presets: parameter " + name + " of " + a.preset.Name + " read as the wrong kind")
	}
	v, ok := a.vals[name]
	return v, ok
}

// Int returns an Int parameter's value (0 when it is unset).
func (a Args) Int(name string) int { v, _ := a.get(name, Int); return int(v.integer) }

// Float returns a Float parameter's value (0 when it is unset).
func (a Args) Float(name string) float64 { v, _ := a.get(name, Float); return v.num }

// Choice returns a Choice parameter's word ("" when it is unset).
func (a Args) Choice(name string) string { v, _ := a.get(name, Choice); return v.word }

// fill gives an optional parameter the value text (as a user would write it) when it has none,
// so that the result's name records a value that Build derived from the others. It panics if
// text does not parse: that is a bug in the preset.
func (a Args) fill(name, text string) {
	p := a.preset.param(name)
	if p == nil {
		panic("presets: " + a.preset.Name + " has no parameter " + name)
	}
	if _, ok := a.vals[name]; ok {
		return
	}
	v, err := p.parse(a.preset.Name, text)
	if err != nil {
		panic("presets: " + err.Error())
	}
	a.vals[name] = v
}

// Has reports whether a parameter has a value, given or by default.
func (a Args) Has(name string) bool {
	if a.preset.param(name) == nil {
		panic("presets: " + a.preset.Name + " has no parameter " + name)
	}
	_, ok := a.vals[name]
	return ok
}

// Given reports whether a parameter was given explicitly.
func (a Args) Given(name string) bool {
	if a.preset.param(name) == nil {
		panic("presets: " + a.preset.Name + " has no parameter " + name)
	}
	return a.given[name]
}

// rng returns the preset's random source, a PCG seeded from the "seed" parameter.
func (a Args) rng() *rand.Rand { return NewRand(uint64(a.Int("seed"))) }

// String lists the values in the order of the preset's parameters, "name=value" separated by
// spaces; numbers are written in full precision, unset optional parameters are left out.
// Parsing the list again gives the same Args: the result's Name rebuilds the result.
func (a Args) String() string {
	var parts []string
	for _, p := range a.preset.Params {
		v, ok := a.vals[p.Name]
		if !ok {
			continue
		}
		var s string
		switch p.Kind {
		case Choice:
			s = v.word
		case Int:
			s = strconv.FormatInt(v.integer, 10)
		default:
			s = strconv.FormatFloat(v.num, 'g', -1, 64)
		}
		parts = append(parts, p.Name+"="+s)
	}
	return strings.Join(parts, " ")
}

// pcgStream is the second PCG word; any fixed value would do.
const pcgStream = 0x73736d6c6162 // "ssmlab"

// NewRand returns the random source of the presets: a PCG generator seeded with seed, so the
// same seed always gives the same filters.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, pcgStream)) }

// Result is what a preset builds: exactly one of a filter, a bank, or time-domain kernels.
type Result struct {
	// Name describes the preset and its parameters, "butter order=4 band=lowpass …".
	Name string
	// Filter is set for a single filter, in the control convention.
	Filter filters.Filter
	// Bank is set for a bank of channels (the d_model filters of a layer).
	Bank *filters.Bank
	// Kernels holds time-domain kernels h[0..L-1], one per channel, for presets that are
	// not state-space filters (the Hyena implicit filter).
	Kernels [][]float64
	// Note, when not empty, is one line for the user on how the result falls short of what
	// its parameters normally give: a filter with fewer states than the order asked gives,
	// and why (poles that came out real, each kept once without a conjugate).
	Note string
}

// Document returns the result as a filter document; ok is false for kernels.
func (r Result) Document() (doc filters.Document, ok bool) {
	if r.Filter == nil && r.Bank == nil {
		return filters.Document{}, false
	}
	return filters.Document{Name: r.Name, Filter: r.Filter, Bank: r.Bank}, true
}

// Preset is one entry of the registry.
type Preset struct {
	// Name is what the CLI takes: lower case, words joined by "-".
	Name string
	// Description is one line for listings.
	Description string
	// Source cites the paper (by its short name in docs/maths.md) and equation, or the
	// textbook design.
	Source string
	// Output says what Build returns: a form ("zpk"), "bank of FORM" or "kernels".
	Output string
	Params []Param
	// Build makes the result from checked arguments. Its errors wrap ErrParam for a
	// combination of values that does not make sense, and are numerical failures otherwise.
	Build func(Args) (Result, error)
}

func (p *Preset) param(name string) *Param {
	for i := range p.Params {
		if p.Params[i].Name == name {
			return &p.Params[i]
		}
	}
	return nil
}

// ParamNames lists the names of the parameters, in order.
func (p *Preset) ParamNames() []string {
	names := make([]string, len(p.Params))
	for i, q := range p.Params {
		names[i] = q.Name
	}
	return names
}

// Parse checks values (parameter name → value as written) against the parameters and fills in
// the defaults. An unknown name, a malformed value or one out of range is an error wrapping
// ErrParam that lists what is accepted.
func (p *Preset) Parse(values map[string]string) (Args, error) {
	a := Args{preset: p, vals: map[string]value{}, given: map[string]bool{}}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names) // report the first problem deterministically
	for _, name := range names {
		q := p.param(name)
		if q == nil {
			accepted := "no parameters"
			if len(p.Params) > 0 {
				accepted = strings.Join(p.ParamNames(), ", ")
			}
			return Args{}, paramErrorf(p.Name, "unknown parameter %q (%s accepts: %s)", name, p.Name, accepted)
		}
		v, err := q.parse(p.Name, values[name])
		if err != nil {
			return Args{}, err
		}
		a.vals[name] = v
		a.given[name] = true
	}
	for _, q := range p.Params {
		if _, ok := a.vals[q.Name]; ok || q.Default == "" {
			continue
		}
		v, err := q.parse(p.Name, q.Default)
		if err != nil {
			panic("presets: default of " + p.Name + " " + q.Name + ": " + err.Error())
		}
		a.vals[q.Name] = v
	}
	return a, nil
}

// New parses values and builds the preset; the result's Name records every value used.
func (p *Preset) New(values map[string]string) (Result, error) {
	a, err := p.Parse(values)
	if err != nil {
		return Result{}, err
	}
	r, err := p.Build(a)
	if err != nil {
		return Result{}, err
	}
	r.Name = strings.TrimSpace(p.Name + " " + a.String())
	return r, nil
}

// All returns the registry, in the order listings show it. The slice is a copy; the presets
// are shared and must not be modified.
func All() []*Preset { return slices.Clone(registry) }

// Names lists the preset names, in registry order.
func Names() []string {
	names := make([]string, len(registry))
	for i, p := range registry {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the preset called name, or an error wrapping ErrUnknownPreset that lists the
// names.
func Lookup(name string) (*Preset, error) {
	for _, p := range registry {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, &usageError{ErrUnknownPreset, fmt.Sprintf("unknown preset %q (the presets are: %s)", name, strings.Join(Names(), ", "))}
}

// New builds the preset called name with the given parameter values.
func New(name string, values map[string]string) (Result, error) {
	p, err := Lookup(name)
	if err != nil {
		return Result{}, err
	}
	return p.New(values)
}
