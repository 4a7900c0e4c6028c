package train

import (
	"errors"
	"strings"
)

// SelectBackend returns the backend a job names:
//
//   - "cpu" (or ""): the CPU backend;
//   - "gpu": the GPU backend, or DetectGPU's error (it wraps ErrNoGPU) when there is none;
//   - "gpu64": likewise, with the Adam recipe in float64 on the device (BackendGPU64);
//   - "auto": the GPU backend when DetectGPU finds a GPU, else the CPU backend. On a machine
//     with a GPU, variable projection (faster on the CPU: projectionBackend) and a job the
//     GPU does not run (ErrGPUUnsupported) or cannot start run on the CPU instead.
//
// Under auto, note (if not nil) is told once, in one line, which backend runs the job and
// why: "gpu (DEVICE)" or "cpu (REASON)". The returned backend serves one job at a time.
func SelectBackend(name BackendName, note func(string)) (Backend, error) {
	if note == nil {
		note = func(string) {}
	}
	switch name {
	case "", BackendCPU:
		return CPU{}, nil
	case BackendAuto:
		info, err := DetectGPU()
		if err != nil {
			note("cpu (" + NoGPUReason(err) + ")")
			return CPU{}, nil
		}
		return &autoBackend{gpu: GPU{}, device: info.Device, note: note}, nil
	case BackendGPU, BackendGPU64:
		if _, err := DetectGPU(); err != nil {
			return nil, err
		}
		return gpuNamed(name), nil
	}
	_, err := ParseBackend(string(name))
	return nil, err
}

// gpuNamed is the GPU backend of name (gpu or gpu64).
func gpuNamed(name BackendName) GPU { return GPU{Float64: name == BackendGPU64} }

// NoGPUReason is DetectGPU's error as one line, without the ErrNoGPU prefix.
func NoGPUReason(err error) string {
	return oneLine(strings.TrimPrefix(err.Error(), ErrNoGPU.Error()+": "))
}

// oneLine joins a message's lines with "; " and collapses its spaces.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

// autoBackend is "auto" on a machine with a GPU: the GPU backend for the jobs it runs, the
// CPU backend for the others and when the GPU fails to start. Its name, and so the report's
// backend, is the one that ran.
type autoBackend struct {
	gpu    Backend
	device string
	note   func(string)
	chosen string
}

func (a *autoBackend) Name() string {
	if a.chosen == "" {
		return "gpu"
	}
	return a.chosen
}

func (a *autoBackend) Start(p *Problem) (Trainer, error) {
	if a.chosen != "cpu" {
		tr, err := a.gpu.Start(p)
		if err == nil {
			if a.chosen == "" {
				a.note("gpu (" + a.device + ")")
			}
			a.chosen = "gpu"
			return tr, nil
		}
		if a.chosen == "gpu" {
			return nil, err // the job already runs on the GPU: a later failure is the job's
		}
		why := err.Error()
		if errors.Is(err, ErrGPUUnsupported) {
			why = strings.TrimSuffix(why, " (use the cpu backend)")
		}
		a.note("cpu (" + oneLine(why) + ")")
		a.chosen = "cpu"
	}
	return CPU{}.Start(p)
}
