package cli

import (
	"errors"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/ssmlab/ssmlab/presets"
)

// notFinite is the one refusal of a float flag's value that is NaN, infinite or beyond
// float64 (1e999), the same for every such flag (--lr, --tol, --suggest-tol, --cutoff,
// --max-radius, preset's --dt, a layout's number options): a command-line mistake (exit 2)
// that does not echo the value, which is no number to show. flagError words a flag's Set
// error of kind presets.ErrNotFinite with it. The words are presets.WantFinite's, a preset
// parameter's too.
func notFinite(flag string) error {
	return presets.WantFinite("--" + flag)
}

// parseFinite reads a float flag's value as pflag's float64 flags do (strconv.ParseFloat), and
// refuses one that is not finite with presets.ErrNotFinite, as presets.ParseFloat refuses
// a number typed by a user. Any other error is strconv's *NumError, which flagError words.
func parseFinite(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	// ErrRange: beyond float64 (strconv returns ±Inf); an underflow reads as 0 without error.
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, presets.ErrNotFinite
	}
	return x, nil
}

// floatFlag is a float64 flag that refuses a value that is not finite (parseFinite); it
// replaces pflag's Float64Var, which takes NaN and ±Inf.
type floatFlag struct{ p *float64 }

func (f floatFlag) String() string {
	if f.p == nil { // pflag's zero value, for its help
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f floatFlag) Set(v string) error {
	x, err := parseFinite(v)
	if err != nil {
		return err
	}
	*f.p = x
	return nil
}

// Type is pflag's float64 flags' own: the help says "float", and flagError words a
// malformed value as it did ("want a number").
func (floatFlag) Type() string { return "float64" }

// float64Var defines a float flag of default value, refusing a value that is not finite.
func float64Var(f *pflag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	f.Var(floatFlag{p}, name, usage)
}
