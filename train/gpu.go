package train

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoGPU marks DetectGPU's answer on a machine (or a build) without a usable GPU; the
// error's text says why in one line.
var ErrNoGPU = errors.New("no GPU")

// ErrGPUUnsupported marks a job the GPU backend does not run (the modal or rotation model on
// the optimiser, a training task, the freq loss); the CPU backend runs every job.
var ErrGPUUnsupported = errors.New("not supported by the GPU backend")

// Info describes the GPU that DetectGPU found and the libraries it loaded.
type Info struct {
	Device            string   `json:"device"`
	MemoryBytes       uint64   `json:"memory_bytes"`
	ComputeCapability string   `json:"compute_capability"`
	Multiprocessors   int      `json:"multiprocessors"`
	Driver            string   `json:"driver"` // the CUDA version the driver supports
	NVRTC             string   `json:"nvrtc"`
	CUFFT             string   `json:"cufft"`
	Libraries         []string `json:"libraries"` // the files loaded: libcuda, libnvrtc, libcufft
}

// String is the one-line description ssmlab backends prints.
func (i Info) String() string {
	return fmt.Sprintf("%s, %.1f GiB, compute capability %s, %d SMs; driver CUDA %s, NVRTC %s, cuFFT %s",
		i.Device, float64(i.MemoryBytes)/(1<<30), i.ComputeCapability, i.Multiprocessors, i.Driver, i.NVRTC, i.CUFFT)
}

// DetectGPU loads the CUDA driver, NVRTC and cuFFT (once per process) and describes device 0
// (CUDA_VISIBLE_DEVICES picks which device that is). Without one, the error wraps ErrNoGPU
// and says why in one line: a library not found (and where it was looked for), no device.
func DetectGPU() (Info, error) { return detectGPU() }

// GPU is the CUDA backend. It runs two algorithms:
//
//   - the default distillation, variable projection (the hankel init, an rtf or modal model,
//     the mse or relative loss): the same Go driver as on the CPU (fitProjection: the ladder,
//     its starts, Levenberg–Marquardt, the QR fallback, the deployment), with its sums over
//     the samples, the O(n·L) work of every evaluation, in float64 kernels on the device,
//     the channels' requests batched into one launch (gpuSums);
//   - the RTF paper's Adam recipe for the rtf model (other inits; losses mse and relative,
//     constraints none, l1_montel and radius) with the whole bank on the device: the
//     state-free kernel and its analytic gradient through batched cuFFT transforms, the
//     loss, Adam and the stability check in kernels of its own, one launch sequence per step
//     on one stream.
//
// Other jobs fail with ErrGPUUnsupported. Both are checked against the CPU backend on the
// tests' emulated device and, where there is one, on a GPU (an H200, 2026-11-28: README).
//
// The Adam recipe's arithmetic mirrors the CPU backend's. Parameters, Adam's moments, the pointwise
// spectral products and every sum are float64; the transforms and the L-long arrays are
// float32 unless Float64 is set. A float32 transform's normwise error of about 1e-7 reaches
// the kernel and the gradient multiplied by up to the condition max|A|/min|A| of the
// denominator on the unit circle, so float32 runs agree with the CPU to about 1e-7 times
// that condition.
type GPU struct {
	// Float64 runs the transforms and the L-long arrays in double precision.
	Float64 bool

	open func(f64 bool) (device, error) // nil: the CUDA device; tests put an emulator here
}

// Name returns "gpu".
func (GPU) Name() string { return "gpu" }

// Start uploads the problem, compiles the kernels on first use and plans the transforms.
func (g GPU) Start(p *Problem) (Trainer, error) {
	job, err := gpuJobOf(p)
	if err != nil {
		return nil, err
	}
	dev, err := g.openDevice()
	if err != nil {
		return nil, err
	}
	t := &gpuTrainer{dev: dev, job: job, spec: p.Spec, total: p.Spec.Steps, f64: g.Float64}
	release, err := dev.bind()
	if err != nil {
		dev.close()
		return nil, err
	}
	defer release()
	if err := t.setup(p); err != nil {
		dev.close()
		return nil, err
	}
	return t, nil
}

// openSums opens the device for a variable-projection job (fitProjection).
func (g GPU) openSums() (*gpuSums, error) {
	dev, err := g.openDevice()
	if err != nil {
		return nil, err
	}
	return newGPUSums(dev), nil
}

// openDevice opens the CUDA device, or the emulator a test put in g.open.
func (g GPU) openDevice() (device, error) {
	if g.open != nil {
		return g.open(g.Float64)
	}
	return openCUDA(g.Float64)
}

// gpuJob is a Problem the GPU backend can run: rtf channels of one shape against distillation
// targets (targets[ch]; a race of two starts per channel serves each target twice).
type gpuJob struct {
	m       *rtfModel
	targets [][]float64
	norms   []float64 // ‖y‖² per channel
	escale  []float64 // ∂loss/∂k = 2(k − y)·escale, loss = Σ(k − y)²·escale
}

func gpuUnsupported(what string) error {
	return fmt.Errorf("%s: %w (use the cpu backend)", what, ErrGPUUnsupported)
}

func gpuJobOf(p *Problem) (*gpuJob, error) {
	if len(p.models) == 0 {
		return nil, invalidf("the problem has no channels")
	}
	m, ok := p.models[0].(*rtfModel)
	if !ok {
		return nil, gpuUnsupported("the " + string(p.Spec.Model) + " model")
	}
	if m.n > gpuMaxOrder {
		return nil, gpuUnsupported(fmt.Sprintf("order %d (its kernels take orders up to %d)", m.n, gpuMaxOrder))
	}
	for i, mi := range p.models {
		r, ok := mi.(*rtfModel)
		if !ok || r.n != m.n || r.length != m.length || r.montel != m.montel {
			return nil, gpuUnsupported(fmt.Sprintf("channel %d's model differs from channel 0's", i))
		}
		if len(p.Params[i]) != m.numParams() {
			return nil, fmt.Errorf("train: channel %d has %d parameters, its model takes %d", i, len(p.Params[i]), m.numParams())
		}
	}
	obj, period := p.obj, len(p.models)
	if o, ok := obj.(*doubled); ok {
		obj, period = o.objective, o.d
	}
	dist, ok := obj.(*distill)
	if !ok {
		return nil, gpuUnsupported("training tasks (sysid, delay)")
	}
	if dist.kind != "mse" && dist.kind != "relative" {
		return nil, gpuUnsupported("the " + string(dist.kind) + " loss")
	}
	job := &gpuJob{m: m}
	for ch := range p.models {
		i := ch % period
		y := dist.targets[i]
		if len(y) != m.length {
			return nil, fmt.Errorf("train: target %d has %d samples, the model %d", i, len(y), m.length)
		}
		es := 1 / float64(m.length)
		if dist.kind == "relative" {
			es = 1 / math.Max(dist.norms[i], 1e-300)
		}
		job.targets = append(job.targets, y)
		job.norms = append(job.norms, dist.norms[i])
		job.escale = append(job.escale, es)
	}
	return job, nil
}
