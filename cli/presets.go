package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/presets"
)

func newPresets(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "presets [NAME]",
		Short: "List the preset filters and their parameters",
		Long: `Presets lists every preset filter with a one-line description, what it writes and its
parameters: name=default, the accepted values and what the parameter does. A parameter
without a default is optional; its help says what is used instead. With NAME, only that
preset is shown, with the source it follows (paper and equation, or the textbook design).

Numbers may be written as multiples of π: pi/4, 3pi/4, 2*pi, π/10. docs/presets.md
describes every preset; 'ssmlab preset NAME' builds one.`,
		Example: `  ssmlab presets
  ssmlab presets butter`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("want at most one preset NAME, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error { return runPresets(s, args) },
	}
}

func runPresets(s *streams, args []string) error {
	list := presets.All()
	detail := len(args) == 1
	if detail {
		p, err := presets.Lookup(args[0])
		if err != nil {
			return err
		}
		list = []*presets.Preset{p}
	}
	var b strings.Builder
	for i, p := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		describePreset(&b, p, detail)
	}
	return s.writeOut([]byte(b.String()))
}

// describePreset writes a preset's entry: its name and description, what it writes, and one
// line per parameter in three aligned columns.
func describePreset(b *strings.Builder, p *presets.Preset, source bool) {
	fmt.Fprintf(b, "%s: %s\n", p.Name, p.Description)
	if source {
		fmt.Fprintf(b, "  source: %s\n", p.Source)
	}
	fmt.Fprintf(b, "  writes: %s\n", p.Output)
	if len(p.Params) == 0 {
		return
	}
	names := make([]string, len(p.Params))
	w0, w1 := 0, 0
	for i, q := range p.Params {
		names[i] = q.Name
		if q.Default != "" {
			names[i] += "=" + q.Default
		}
		w0 = max(w0, utf8.RuneCountInString(names[i]))
		w1 = max(w1, utf8.RuneCountInString(q.Range()))
	}
	for i, q := range p.Params {
		fmt.Fprintf(b, "  %s  %s  %s\n", pad(names[i], w0), pad(q.Range(), w1), q.Help)
	}
}

// wrapList joins words with ", " into lines of at most width runes, each starting with indent.
func wrapList(words []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, w := range words {
		item := w
		if i < len(words)-1 {
			item += ","
		}
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(item) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += item
	}
	b.WriteString(line)
	return b.String()
}

func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

type presetOptions struct {
	order, dt, seed string
	out             string
}

func newPreset(s *streams) *cobra.Command {
	var o presetOptions
	cmd := &cobra.Command{
		Use:   "preset NAME [--order N] [--dt DT] [--seed S] [param=value ...] [-o OUT]",
		Short: "Write a preset filter, bank or kernel as JSON",
		Long: `Preset builds the preset NAME with the given parameters and writes it to stdout, or
atomically to OUT with -o (stdout then stays empty). Parameters are written name=value;
--order, --dt and --seed are shorthands for order=, dt= and seed=. Every parameter not given
takes its default; 'ssmlab presets NAME' lists them. Numbers may be written as multiples of
π: wc=pi/4, theta=3pi/4, max_phase=2*pi.

A filter or a bank is written in the filter file format (docs/formats.md), in the control
convention, and its "name" records the preset and every parameter value used, so the same
line rebuilds it. The same seed always gives the same filter. The hyena preset is a kernel,
not a state-space filter: it writes {"kernels": [[h[0], ..., h[L-1]], ...]}, one kernel per
channel, which convert and analyze do not read. A filter that comes out with fewer states than
the order normally gives (pole pairs that fall on the real axis or underflow, each kept as one
real pole) is written with a note on stderr that says so and why.

NAME is one of:
` + wrapList(presets.Names(), "  ", 90) + `

An unknown NAME or parameter, a malformed value or one out of range is a command-line
mistake (exit 2) and the message lists what is accepted.`,
		Example: `  ssmlab preset butter --order 6 wc=pi/8 -o butter.json
  ssmlab preset cheby1 band=bandpass wlo=0.2 whi=0.4 ripple=0.5
  ssmlab preset hippo-legs --order 16 --dt 0.01 method=zoh
  ssmlab preset s4d-lin --order 64 channels=8 --seed 3 -o s4d-bank.json
  ssmlab preset rotrnn heads=4 | ssmlab analyze - --poles`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 {
				return errors.New("want a preset NAME ('ssmlab presets' lists them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			values, err := presetValues(cmd, args[1:], o)
			if err != nil {
				return err
			}
			return runPreset(s, args[0], values, o.out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.order, "order", "", "the preset's order `N` (the same as order=N)")
	f.StringVar(&o.dt, "dt", "", "the step `DT` of a continuous-time preset (the same as dt=DT)")
	f.StringVar(&o.seed, "seed", "", "the seed `S` of a random preset (the same as seed=S)")
	f.StringVarP(&o.out, "output", "o", "-", "write the result to `OUT` instead of stdout")
	return cmd
}

// presetValues collects the name=value arguments and the shorthand flags, refusing a parameter
// given twice.
func presetValues(cmd *cobra.Command, assignments []string, o presetOptions) (map[string]string, error) {
	values := map[string]string{}
	for _, a := range assignments {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not a parameter: write name=value", a)
		}
		if _, dup := values[name]; dup {
			return nil, fmt.Errorf("parameter %s is given twice", name)
		}
		values[name] = value
	}
	for _, fl := range []struct{ name, value string }{{"order", o.order}, {"dt", o.dt}, {"seed", o.seed}} {
		if !cmd.Flags().Changed(fl.name) {
			continue
		}
		if _, dup := values[fl.name]; dup {
			return nil, fmt.Errorf("--%s and %s= both given", fl.name, fl.name)
		}
		if fl.name == "dt" {
			if _, err := presets.ParseFloat(fl.value); errors.Is(err, presets.ErrNotFinite) {
				return nil, notFinite(fl.name) // as every float flag
			}
		}
		values[fl.name] = fl.value
	}
	return values, nil
}

func runPreset(s *streams, name string, values map[string]string, out string) error {
	p, err := presets.Lookup(name)
	if err != nil {
		return err
	}
	r, err := p.New(values)
	if err != nil {
		if errors.Is(err, presets.ErrParam) {
			return err // a command-line mistake: exit 2
		}
		return failf("%s: %w", p.Name, err)
	}
	if err := checkOutputs(nil, output{"-o", "the filter", out}); err != nil {
		return err
	}
	if doc, ok := r.Document(); ok {
		if err := s.write(out, doc); err != nil {
			return err
		}
		if r.Note != "" {
			fmt.Fprintf(s.err, "note: %s\n", r.Note)
		}
		return nil
	}
	data, err := encodePresetKernels(r.Kernels)
	if err != nil {
		return failf("%s: %w", p.Name, err)
	}
	if out == "-" {
		return s.writeOut(data)
	}
	return s.put(out, data)
}

// encodePresetKernels writes kernels as {"kernels": [[...], ...]}, one kernel per line, with
// numbers as encoding/json writes float64 (the shortest decimal that reads back the same).
func encodePresetKernels(kernels [][]float64) ([]byte, error) {
	var b strings.Builder
	b.WriteString("{\"kernels\": [")
	for i, k := range kernels {
		for j, x := range k {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("kernel %d sample %d is %v", i, j, x)
			}
		}
		row, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(row)
	}
	b.WriteString("\n]}\n")
	if b.Len() > userfile.MaxSize {
		return nil, fmt.Errorf("the kernels take %d bytes, above the file limit of %d", b.Len(), userfile.MaxSize)
	}
	return []byte(b.String()), nil
}
