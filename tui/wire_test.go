package tui

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/filters"
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

// TestDelayMatchesPlot: the workbench's group delay (the command that computes a plot's
// responses) is the figure's (ssmlab plot, :export-plot) for the same kernel and the same
// filter, point for point, and finite where H has zeros on the unit circle on the grid (the
// central difference the workbench used gave NaN there).
func TestDelayMatchesPlot(t *testing.T) {
	omega := analysis.LinearGrid(65) // holds π/2 and π
	h := []float64{1, 2, 2, 2, 1}    // (1 + z⁻¹)²(1 + z⁻²): zeros at z = -1 and ±i
	zpk, err := filters.NewZPK([]complex128{-1, 1i, -1i}, []complex128{0.5, 0.25i, -0.25i}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		f      filters.Filter
		kernel []float64
	}{{"kernel", nil, h}, {"filter", zpk, nil}} {
		msg := computeResponses(analysisAnalyzer{}, "f1", respKey{length: 5}, c.f, c.kernel, omega)().(respMsg)
		want, err := figures.DelayOf(figures.Series{Filter: c.f, Kernel: c.kernel}, omega)
		if msg.err != nil || err != nil {
			t.Fatalf("%s: %v, %v", c.name, msg.err, err)
		}
		if len(msg.r.Delay) != len(omega) {
			t.Fatalf("%s: %d delays for %d frequencies", c.name, len(msg.r.Delay), len(omega))
		}
		for i, v := range msg.r.Delay {
			if v != want[i] || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: τ(%.4gπ) = %v on screen, %v in the figure", c.name, omega[i]/math.Pi, v, want[i])
			}
		}
	}
}
