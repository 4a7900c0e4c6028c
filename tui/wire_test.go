package tui

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/train"
)

// TestTrainRunnerBackends: on a machine without a GPU the form offers the CPU alone, a job
// that names the GPU fails with the reason, and one that names auto runs on the CPU and says
// why.
func TestTrainRunnerBackends(t *testing.T) {
	info, err := train.DetectGPU()
	if err == nil {
		t.Skipf("this machine has a GPU (%s)", info)
	}
	reason := train.NoGPUReason(err)
	var r trainRunner
	if got := r.Backends(); !slices.Equal(got, []train.BackendName{train.BackendCPU}) {
		t.Errorf("backends %q", got)
	}
	d, err := ringDiagonal(2, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	targets := [][]float64{d.Impulse(64)}
	spec := r.Defaults()
	spec.Order, spec.Steps, spec.Target.Length = 2, 5, 64
	progress := func(JobProgress) {}
	for _, c := range []struct {
		backend train.BackendName
		ran     string
	}{{"cpu", "cpu"}, {"", "cpu"}, {"auto", "cpu (" + reason + ")"}} {
		spec.Backend = c.backend
		res, err := r.Run(context.Background(), spec, targets, progress)
		if err != nil || res.Backend != c.ran || len(res.Filters) != 1 {
			t.Errorf("backend %q: %+v, %v; want it run on %q", c.backend, res, err, c.ran)
		}
	}
	spec.Backend = "gpu"
	if _, err := r.Run(context.Background(), spec, targets, progress); err == nil || !strings.Contains(err.Error(), "no GPU backend on this machine: "+reason) {
		t.Errorf("gpu: %v", err)
	}
}
