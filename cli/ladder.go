package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/train"
)

// ladderReport is what distill --orders writes as JSON: each order's report.
type ladderReport struct {
	Orders  []int          `json:"orders"`
	Reports []train.Report `json:"reports"`
}

// fitOutputs are the files a fit writes, in that order: --report, then the filter, or one
// filter per order of a ladder whose -o holds {n} (runJob, runLadder); an order given twice
// is fitted once (train.FitLadder), to its one file.
func fitOutputs(out, report string, orders []int) []output {
	outs := []output{{"--report", "the report", report}}
	if len(orders) == 0 || !strings.Contains(out, "{n}") {
		return append(outs, output{"-o", "the filter", out})
	}
	for i, n := range orders {
		if slices.Contains(orders[:i], n) {
			continue
		}
		outs = append(outs, output{"-o", fmt.Sprintf("the filter of order %d", n), strings.ReplaceAll(out, "{n}", strconv.Itoa(n))})
	}
	return outs
}

// checkLadderOut checks that -o, when it names a file, has the {n} that each order's file
// needs (a command-line mistake: exit 2).
func checkLadderOut(out string) error {
	if out != "-" && !strings.Contains(out, "{n}") {
		return fmt.Errorf("--orders fits one filter per order: give -o a name with {n} in it (e.g. -o rtf{n}.json), or leave -o out for the ladder's reports as JSON")
	}
	return nil
}

// runLadder fits the job at every order, prints the table of errors and bounds on stderr and
// writes the filters (-o with {n}: one file per order) or the ladder's reports as JSON (-o
// left out or "-"), and the same JSON to --report.
// distill checks -o's {n} before it reads the target (checkLadderOut).
func (s *streams) runLadder(name string, spec train.Spec, job train.Job, orders []int, backend train.Backend, j *jobFlags) error {
	progress, done := s.progressPrinter()
	l, err := train.FitLadder(s.context(), job, orders, backend, progress)
	done()
	if errors.Is(err, context.Canceled) {
		return failf("%s: cancelled; nothing was written", name)
	}
	if err != nil {
		return failf("%s: %w", name, err)
	}
	rep := ladderReport{Orders: l.Orders}
	for _, r := range l.Results {
		rep.Reports = append(rep.Reports, r.Report)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return failf("report: %w", err)
	}
	data = append(data, '\n')
	if j.report != "" {
		if err := s.put(j.report, data); err != nil {
			return err
		}
	}
	if j.out == "-" {
		if err := s.put("-", data); err != nil {
			return err
		}
	} else {
		for k, r := range l.Results {
			doc := filters.Document{Name: fmt.Sprintf("%s %d (%s)", spec.Model, l.Orders[k], strings.TrimSuffix(name, ".json"))}
			if len(r.Filters) == 1 {
				doc.Filter = r.Filters[0]
			} else {
				doc.Bank = &filters.Bank{Channels: r.Filters}
			}
			if err := s.write(strings.ReplaceAll(j.out, "{n}", strconv.Itoa(l.Orders[k])), doc); err != nil {
				return err
			}
		}
	}
	s.printLadder(rep)
	return nil
}

// printLadder prints a ladder's table on stderr: per order the form, the mean and worst
// relative error, the mean lower bound and the worst channel's ratio to its bound ("-" where
// every bound is 0).
func (s *streams) printLadder(rep ladderReport) {
	w := tabwriter.NewWriter(s.err, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "order\tform\tmean error\tworst error\tmean bound\tworst ratio\tstable")
	for k, r := range rep.Reports {
		ratio := 0.0
		for _, c := range r.Channels {
			ratio = max(ratio, c.BoundRatio)
		}
		rs := "-"
		if ratio > 0 {
			rs = fmt.Sprintf("%.3g", ratio)
		}
		fmt.Fprintf(w, "%d\t%s\t%.3g\t%.3g\t%.3g\t%s\t%v\n", rep.Orders[k], r.Form, r.MeanRelError, r.MaxRelError, r.MeanLowerBound, rs, r.Stable)
	}
	w.Flush()
	if n := len(rep.Reports); n > 0 {
		last := rep.Reports[n-1]
		fmt.Fprintf(s.err, "fitted %d channel(s), %s at %s, in %.2fs on %s\n", len(last.Channels), last.Model, plural.Count(n, "order"), last.Seconds, last.Backend)
		if a := last.AutoRadiusText(); a != "" {
			fmt.Fprintln(s.err, a)
		}
	}
	for _, r := range rep.Reports {
		for _, warn := range r.Warnings {
			fmt.Fprintf(s.err, "warning: order %d: %s\n", r.Order, warn)
		}
	}
	if n := len(rep.Reports); n > 0 && rep.Reports[n-1].FormNote != "" {
		fmt.Fprintf(s.err, "form at order %d: %s\n", rep.Orders[n-1], rep.Reports[n-1].FormNote)
	}
}
