package train

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// TestSelectBackend: the names, and auto and gpu on a machine without a GPU.
func TestSelectBackend(t *testing.T) {
	for _, name := range []BackendName{"", "cpu"} {
		if b, err := SelectBackend(name, nil); err != nil || b.Name() != "cpu" {
			t.Errorf("%q: %v, %v", name, b, err)
		}
	}
	if _, err := SelectBackend("tpu", nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "want auto, cpu, gpu or gpu64") {
		t.Errorf("tpu: %v", err)
	}
	info, gpuErr := DetectGPU()
	if gpuErr == nil {
		t.Skipf("this machine has a GPU (%s)", info)
	}
	reason := NoGPUReason(gpuErr)
	if reason == "" || strings.HasPrefix(reason, "no GPU") || strings.Contains(reason, "\n") {
		t.Errorf("reason %q", reason)
	}
	var said []string
	if b, err := SelectBackend("auto", func(l string) { said = append(said, l) }); err != nil || b.Name() != "cpu" || len(said) != 1 || said[0] != "cpu ("+reason+")" {
		t.Errorf("auto: %v, %v, said %q", b, err, said)
	}
	for _, name := range []BackendName{"gpu", "gpu64"} {
		if _, err := SelectBackend(name, nil); !errors.Is(err, ErrNoGPU) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestGPUNamed: gpu is the float32 device, gpu64 the float64 one (which a machine with a
// GPU would select; see TestSelectBackend for the names without one).
func TestGPUNamed(t *testing.T) {
	if gpuNamed(BackendGPU).Float64 || !gpuNamed(BackendGPU64).Float64 {
		t.Errorf("gpu: %+v, gpu64: %+v", gpuNamed(BackendGPU), gpuNamed(BackendGPU64))
	}
}

// fakeGPU is a GPU backend that either fails to start or trains on the CPU.
type fakeGPU struct{ err error }

func (fakeGPU) Name() string { return "gpu" }

func (f fakeGPU) Start(p *Problem) (Trainer, error) {
	if f.err != nil {
		return nil, f.err
	}
	return CPU{}.Start(p)
}

// TestAutoBackend: auto runs a job on the GPU when it can, and on the CPU, saying why once,
// when the GPU does not run the job or fails to start; the report names what ran.
func TestAutoBackend(t *testing.T) {
	d, err := filters.NewDiagonal([]complex128{0.9, 0.5 + 0.3i, 0.5 - 0.3i}, []complex128{1, 0.2 - 0.1i, 0.2 + 0.1i}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	targets := [][]float64{d.Impulse(64)}
	spec := DefaultSpec()
	spec.Order, spec.Steps = 3, 40 // hankel init: the race, two Starts on a backend that cannot narrow
	spec.Constraint = "l1_montel"  // on the optimiser, not by variable projection
	for _, c := range []struct {
		name      string
		gpu       fakeGPU
		ran, said string
	}{
		{"gpu", fakeGPU{}, "gpu", "gpu (Fake GPU)\n"},
		{"unsupported", fakeGPU{gpuUnsupported("the modal model")}, "cpu",
			"cpu (the modal model: not supported by the GPU backend)\n"},
		{"failed", fakeGPU{errors.New("compiling the GPU kernels: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION")}, "cpu",
			"cpu (compiling the GPU kernels: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			said := ""
			b := &autoBackend{gpu: c.gpu, device: "Fake GPU", note: func(l string) { said += l + "\n" }}
			res, err := Run(context.Background(), Job{Spec: spec, Targets: targets}, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Report.Backend != c.ran || said != c.said {
				t.Errorf("ran on %s, said %q; want %s, %q", res.Report.Backend, said, c.ran, c.said)
			}
		})
	}
	// A job fitted by variable projection runs on the CPU under auto, which says so
	// (checkProjectionBackends: whatever the device), and a GPU backend that cannot run it
	// (fakeGPU is not the CUDA one) named explicitly refuses it rather than run another
	// algorithm.
	said := ""
	b := &autoBackend{gpu: fakeGPU{}, device: "Fake GPU", note: func(l string) { said += l + "\n" }}
	res, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 3), Targets: targets}, b, nil)
	if err != nil || res.Report.Backend != "cpu" || said != "cpu ("+autoProjectionNote+")\n" {
		t.Errorf("variable projection under auto: %v, said %q", err, said)
	}
	if _, err := Run(context.Background(), Job{Spec: withOrder(DefaultSpec(), 3), Targets: targets}, fakeGPU{}, nil); !errors.Is(err, ErrGPUUnsupported) {
		t.Errorf("variable projection on the GPU backend: %v", err)
	}
}
