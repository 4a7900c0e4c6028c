package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
)

// maxWarningLines caps the warning lines a bank conversion prints; --report has them all.
const maxWarningLines = 20

type convertOptions struct {
	to         string
	out        string
	observable bool
	report     string
	force      bool
}

func newConvert(s *streams) *cobra.Command {
	var o convertOptions
	cmd := &cobra.Command{
		Use:   "convert FILE --to FORM [-o OUT]",
		Short: "Convert a filter or a bank to another form",
		Long: `Convert reads the filter or bank in FILE ("-" reads stdin), converts it to FORM
(dense, diagonal, companion, rotation, tf or zpk) and writes the result to stdout, or
atomically to OUT with -o (stdout then stays empty). The name in FILE is kept.

On stderr it prints how exact the conversion was: the relative L2 difference between the
impulse responses of input and output, over enough samples for them to decay (0 when they
agree bit for bit; a smaller nonzero difference than 2.2e-16, the responses' own rounding,
is printed as 2.2e-16), and a condition number for the step that can lose accuracy. Each warning (unstable filter, error
above 1e-6, condition above 1e8) is its own "warning: " line. --report FILE writes the full
report as JSON (for a bank: {"channels": [report, ...]}); "--report -" writes it to
stdout when -o names a file. An infinite condition number or error (an overflowing
response) is written as 1.8e308, with a warning saying why.

A conversion that cannot be done accurately fails (exit 1) and writes nothing: one that
cannot be done at all (diagonalising a defective matrix, with the condition number that
decided it), one whose measured relative error is above the documented 1e-6 (in any channel
of a bank), and one that makes a stable filter unstable (a tf of order 512 cannot hold
poles clustered near the unit circle). --force writes such a result anyway, with its
warnings, and exits 0.`,
		Example: `  ssmlab convert lru.json --to tf
  ssmlab convert lru.json --to companion --observable -o lru-companion.json
  cat bank.json | ssmlab convert - --to diagonal --report report.json > modal.json`,
		Args: oneFile,
		RunE: func(_ *cobra.Command, args []string) error { return runConvert(s, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "the `FORM` to convert to: dense, diagonal, companion, rotation, tf or zpk (required)")
	f.StringVarP(&o.out, "output", "o", "-", "write the converted filter to `OUT` instead of stdout")
	f.BoolVar(&o.observable, "observable", false, "with --to companion: the observable (transposed) variant")
	f.StringVar(&o.report, "report", "", "write the conversion report as JSON to `FILE`")
	f.BoolVar(&o.force, "force", false, "write a result outside the documented accuracy (relative error above 1e-6, or unstable) instead of failing")
	return cmd
}

func runConvert(s *streams, path string, o convertOptions) error {
	if o.to == "" {
		return fmt.Errorf("--to is required (one of %s)", filters.FormNames())
	}
	to, err := filters.ParseForm(o.to)
	if err != nil {
		return fmt.Errorf("--to %q is not a form (want one of %s)", o.to, filters.FormNames())
	}
	if o.observable && to != filters.FormCompanion {
		return fmt.Errorf("--observable applies only to --to companion")
	}
	if o.report == "-" && o.out == "-" {
		return fmt.Errorf("--report - needs -o OUT: stdout already carries the converted filter")
	}
	if err := checkOutputs([]string{path}, output{"-o", "the filter", o.out}, output{"--report", "the report", o.report}); err != nil {
		return err
	}

	doc, name, err := s.read(path)
	if err != nil {
		return err
	}
	out := filters.Document{Name: doc.Name}
	var reports []filters.Report
	if doc.Bank != nil {
		out.Bank, reports, err = filters.ConvertBank(doc.Bank, to)
		if err != nil {
			return failf("%s: %w", name, err)
		}
		if o.observable {
			for _, c := range out.Bank.Channels {
				c.(*filters.Companion).Observable = true
			}
		}
	} else {
		var rep filters.Report
		out.Filter, rep, err = filters.Convert(doc.Filter, to)
		if err != nil {
			return failf("%s: %w", name, err)
		}
		if o.observable {
			out.Filter.(*filters.Companion).Observable = true
		}
		reports = []filters.Report{rep}
	}

	if err := filters.CheckAccuracy(reports); err != nil && !o.force {
		return failf("%s: %w; nothing was written (--force writes it anyway)", name, err)
	}
	if err := s.write(o.out, out); err != nil {
		return err
	}
	if o.report != "" {
		if err := s.writeReport(o.report, reports, doc.Bank != nil); err != nil {
			return err
		}
	}
	// Last, so that a failure above leaves its error as the only line on stderr.
	summarize(s.err, reports, doc.Bank != nil)
	return nil
}

// summarize prints a one-line account of the conversion and one line per warning.
func summarize(w io.Writer, reports []filters.Report, bank bool) {
	if !bank {
		r := reports[0]
		fmt.Fprintf(w, "converted %s → %s: rel error %s over %d samples", r.From, r.To, filters.RelErrorText(r.RelError), r.Length)
		// A conversion without a step that can lose digits has no condition to give (as the
		// workbench shows it): "condition 1: none (coefficients copied exactly)" read as one.
		if r.Conditioned {
			fmt.Fprintf(w, "; condition %.3g: %s", r.Condition, r.ConditionOf)
		}
		fmt.Fprintln(w)
		for _, msg := range r.Warnings {
			fmt.Fprintf(w, "warning: %s\n", oneLine(msg))
		}
		return
	}
	worstErr, worstCond := 0, -1
	for i, r := range reports {
		if r.RelError > reports[worstErr].RelError {
			worstErr = i
		}
		if r.Conditioned && (worstCond < 0 || r.Condition > reports[worstCond].Condition) {
			worstCond = i
		}
	}
	e := reports[worstErr]
	fmt.Fprintf(w, "converted %s %s → %s: worst rel error %s over %d samples (channel %d)",
		plural.Count(len(reports), "channel"), e.From, e.To, filters.RelErrorText(e.RelError), e.Length, worstErr)
	if worstCond >= 0 {
		c := reports[worstCond]
		fmt.Fprintf(w, "; worst condition %.3g (channel %d): %s", c.Condition, worstCond, c.ConditionOf)
	}
	fmt.Fprintln(w)
	printed, total := 0, 0
	for i, r := range reports {
		for _, msg := range r.Warnings {
			total++
			if printed < maxWarningLines {
				fmt.Fprintf(w, "warning: channel %d: %s\n", i, oneLine(msg))
				printed++
			}
		}
	}
	if total > printed {
		fmt.Fprintf(w, "warning: %d more warnings (--report FILE writes them all)\n", total-printed)
	}
}

func (s *streams) writeReport(path string, reports []filters.Report, bank bool) error {
	// A Report's numbers are finite (filters saturates them), so it always encodes.
	var v any = reports[0]
	if bank {
		v = struct {
			Channels []filters.Report `json:"channels"`
		}{reports}
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return failf("%s: %w", path, err)
	}
	data = append(data, '\n')
	if path == "-" {
		return s.writeOut(data)
	}
	return s.put(path, data)
}
