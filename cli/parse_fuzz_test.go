package cli

import (
	"context"
	"testing"

	"github.com/ssmlab/ssmlab/train"
)

// FuzzParseIOData feeds system-identification data files to the parser and what it accepts
// to a job: neither panics, an accepted file has as many inputs as outputs, and a job on it
// either runs or fails with an error (here it is cancelled before it starts).
func FuzzParseIOData(f *testing.F) {
	for _, seed := range []string{
		`{"u": [1, 0, 0], "y": [0.5, 0.25, 0.125]}`,
		`{"channels": [{"u": [1, 2], "y": [3, 4]}, {"u": [1], "y": []}]}`,
		`{"u": [], "y": []}`, `{"u": [1e308, -1e308], "y": [0, 0]}`, `{"u": [1]} []`,
		`{"v": [1]}`, `{"channels": null}`, `[`, ``,
	} {
		f.Add([]byte(seed))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := parseIOData(data, "data.json")
		if err != nil {
			return
		}
		if len(task.U) == 0 || len(task.U) != len(task.Y) {
			t.Fatalf("accepted %d inputs and %d outputs", len(task.U), len(task.Y))
		}
		spec := train.DefaultSpec()
		spec.Order, spec.Steps = 2, 4
		if _, err := train.Run(ctx, train.Job{Spec: spec, Task: task}, train.CPU{}, nil); err == nil {
			t.Fatal("a cancelled job returned a result")
		}
	})
}

// FuzzParseReport feeds distill reports to the parser behind plot --report: it never panics
// and what it accepts has channels.
func FuzzParseReport(f *testing.F) {
	for _, seed := range []string{
		`{"model": "rtf", "order": 4, "channels": [{"mse": 1e-8, "rel_error": 0.01, "max_pole_radius": 0.9, "stable": true}]}`,
		`{"channels": []}`, `{"channels": [{"rel_error": "x"}]}`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseReport(data, "report.json")
		if err == nil && len(r.Channels) == 0 {
			t.Fatal("accepted a report without channels")
		}
	})
}
