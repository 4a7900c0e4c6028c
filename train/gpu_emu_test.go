//go:build linux && (amd64 || arm64)

package train

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"gonum.org/v1/gonum/dsp/fourier"
)

// The emulated device runs the GPU backend's real kernel source (gpuSource) on the CPU, so
// the launcher, the index arithmetic, the reductions and barriers, and the kernels' maths are
// tested against the CPU backend on any machine with a C++ compiler. The source is compiled
// as C++17 with a small shim: the blockDim.x threads of a block are fibers (ucontext) run
// round-robin from one barrier to the next, __syncthreads switches back to the scheduler
// (which reports a barrier that some threads skipped by exiting), __shared__ is static
// storage (blocks run one at a time). The FFTs are gonum's. Device memory is Go memory, filled with
// NaN bytes when allocated (as cudaMalloc leaves garbage), and an inverse transform
// overwrites its input with NaNs (as cuFFT's C2R may), so a kernel that reads what nobody
// wrote, or a step that leans on a clobbered spectrum, shows up as NaN.

// emuBlock is the emulated block size: small, so that the reductions and strided loops run
// over several iterations on the tests' short kernels.
const emuBlock = 32

const emuShim = `
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>
#include <ucontext.h>
using std::fabs;
using std::sqrt;
using std::pow;
using std::cos;
using std::sin;
using std::exp;
#define __global__
#define __device__
#define __shared__ static
struct dim3 { unsigned x, y, z; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;
// The threads of a block are fibers on one OS thread; __syncthreads returns to the scheduler.
enum { emu_ready, emu_waiting, emu_done };
static ucontext_t emu_main;
static std::vector<ucontext_t> emu_ctx;
static std::vector<std::vector<char>> emu_stack;
static std::vector<int> emu_state;
static unsigned emu_cur;
static void __syncthreads() {
	emu_state[emu_cur] = emu_waiting;
	swapcontext(&emu_ctx[emu_cur], &emu_main);
}
`

const emuRunner = `
typedef void (*emu_fn)(void**);
static emu_fn emu_f;
static void** emu_args;
static std::mutex emu_mu;

static void emu_entry() {
	emu_f(emu_args);
	emu_state[emu_cur] = emu_done; // returns to emu_main through uc_link
}

// emu_block runs one block: every fiber up to its next barrier, round after round. A round
// in which some threads wait at a barrier while others have exited is a divergent barrier.
static int emu_block(unsigned b) {
	for (unsigned i = 0; i < b; i++) {
		getcontext(&emu_ctx[i]);
		emu_ctx[i].uc_stack.ss_sp = emu_stack[i].data();
		emu_ctx[i].uc_stack.ss_size = emu_stack[i].size();
		emu_ctx[i].uc_link = &emu_main;
		makecontext(&emu_ctx[i], emu_entry, 0);
		emu_state[i] = emu_ready;
	}
	for (;;) {
		unsigned done = 0, waiting = 0;
		for (unsigned i = 0; i < b; i++) {
			if (emu_state[i] == emu_done) {
				done++;
				continue;
			}
			emu_cur = i;
			threadIdx = dim3{i, 0, 0};
			emu_state[i] = emu_ready;
			swapcontext(&emu_main, &emu_ctx[i]);
			if (emu_state[i] == emu_done) done++;
			else waiting++;
		}
		if (done == b) return 0;
		if (done > 0 && waiting > 0) return -3;
	}
}

extern "C" __attribute__((visibility("default"))) int emu_launch(const char* name, unsigned gx, unsigned gy, unsigned bx, void** args) {
	std::lock_guard<std::mutex> lock(emu_mu);
	emu_f = nullptr;
	for (int i = 0; emu_table[i].name; i++)
		if (strcmp(emu_table[i].name, name) == 0) emu_f = emu_table[i].fn;
	if (!emu_f) return -1;
	if (emu_ctx.size() != bx) {
		emu_ctx.assign(bx, ucontext_t{});
		emu_stack.assign(bx, std::vector<char>(1 << 16));
		emu_state.assign(bx, emu_ready);
	}
	emu_args = args;
	gridDim = dim3{gx, gy, 1};
	blockDim = dim3{bx, 1, 1};
	for (unsigned y = 0; y < gy; y++)
		for (unsigned x = 0; x < gx; x++) {
			blockIdx = dim3{x, y, 0};
			if (int rc = emu_block(bx)) return rc;
		}
	return 0;
}
`

var paramRE = regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)

// emuSource is the C++ translation unit: shim, kernels, and one trampoline per kernel that
// unpacks the launcher's argument slots with the parameter types of the source.
func emuSource() string {
	var b strings.Builder
	b.WriteString(emuShim)
	b.WriteString(gpuSource)
	var table strings.Builder
	for _, m := range paramRE.FindAllStringSubmatch(gpuSource, -1) {
		name := m[1]
		var args []string
		for i, param := range strings.Split(m[2], ",") {
			f := strings.Fields(param)
			typ := strings.Join(f[:len(f)-1], " ")
			args = append(args, fmt.Sprintf("*(%s*)a[%d]", typ, i))
		}
		fmt.Fprintf(&b, "static void emu_%s(void** a) { %s(%s); }\n", name, name, strings.Join(args, ", "))
		fmt.Fprintf(&table, "\t{\"%s\", emu_%s},\n", name, name)
	}
	b.WriteString("static struct { const char* name; void (*fn)(void**); } emu_table[] = {\n")
	b.WriteString(table.String())
	b.WriteString("\t{nullptr, nullptr},\n};\n")
	b.WriteString(emuRunner)
	return b.String()
}

type emuLib struct {
	launch func(name string, gx, gy, bx uint32, args unsafe.Pointer) int32
	err    error
}

var (
	emuOnce [2]sync.Once
	emuLibs [2]emuLib
	emuDir  string
)

// TestMain removes the emulator's build directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if emuDir != "" {
		os.RemoveAll(emuDir)
	}
	os.Exit(code)
}

// loadEmu compiles (once per precision) and loads the emulator library.
func loadEmu(f64 bool) (*emuLib, error) {
	i, real := 0, gpuReal(f64)
	if f64 {
		i = 1
	}
	emuOnce[i].Do(func() {
		lib := &emuLibs[i]
		cxx, err := exec.LookPath("g++")
		if err != nil {
			lib.err = fmt.Errorf("no C++ compiler: %w", err)
			return
		}
		if emuDir == "" {
			if emuDir, err = os.MkdirTemp("", "ssmlab-emu-"); err != nil {
				lib.err = err
				return
			}
		}
		src := filepath.Join(emuDir, "emu.cpp")
		if err := os.WriteFile(src, []byte(emuSource()), 0o644); err != nil {
			lib.err = err
			return
		}
		so := filepath.Join(emuDir, "emu_"+real+".so")
		cmd := exec.Command(cxx, "-std="+gpuDialect, "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
			"-Wall", "-Wno-unused-function", "-DREAL="+real, "-o", so, src)
		if out, err := cmd.CombinedOutput(); err != nil {
			lib.err = fmt.Errorf("compiling the kernels as C++: %v\n%s", err, out)
			return
		} else if len(out) > 0 {
			lib.err = fmt.Errorf("the kernels compile as C++ with warnings:\n%s", out)
			return
		}
		h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			lib.err = err
			return
		}
		purego.RegisterLibFunc(&lib.launch, h, "emu_launch")
	})
	lib := &emuLibs[i]
	return lib, lib.err
}

// emuDevice implements device on the CPU with the emulator library.
type emuDevice struct {
	lib    *emuLib
	rng    *rand.Rand // the float32 transforms' rounding noise
	f64    bool
	allocs []emuAlloc
	plans  []emuPlan
	ffts   map[int]*fourier.FFT
}

type emuAlloc struct {
	base uintptr
	mem  []byte // the usable bytes, 64-byte aligned
}

type emuPlan struct {
	dir      fftDir
	n, batch int
}

func openEmu(f64 bool) (device, error) {
	lib, err := loadEmu(f64)
	if err != nil {
		return nil, err
	}
	return &emuDevice{lib: lib, f64: f64, ffts: map[int]*fourier.FFT{}, rng: rand.New(rand.NewPCG(1, 2))}, nil
}

// emuOpener is the tests' deviceOpener, skipping when the emulator cannot be built.
func emuOpener(t *testing.T) deviceOpener {
	t.Helper()
	if _, err := loadEmu(false); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			t.Skipf("no emulated GPU: %v", err)
		}
		t.Fatal(err)
	}
	return openEmu
}

func (d *emuDevice) bind() (func(), error) { return func() {}, nil }
func (d *emuDevice) blockSize() int        { return emuBlock }

func (d *emuDevice) alloc(bytes int64) (devPtr, error) {
	buf := make([]byte, bytes+64)
	addr := uintptr(unsafe.Pointer(&buf[0]))
	off := (64 - addr%64) % 64
	mem := buf[off : off+uintptr(bytes)]
	for i := range mem {
		mem[i] = 0xff // NaN in every float and double
	}
	d.allocs = append(d.allocs, emuAlloc{addr + off, mem})
	return devPtr(addr + off), nil
}

// at returns the n bytes at p, which must lie inside one allocation.
func (d *emuDevice) at(p devPtr, n int64) []byte {
	for _, a := range d.allocs {
		if uintptr(p) >= a.base && uintptr(p) < a.base+uintptr(len(a.mem)) {
			off := int64(uintptr(p) - a.base)
			if off+n > int64(len(a.mem)) {
				panic(fmt.Sprintf("emulated device: %d bytes at offset %d overrun an allocation of %d", n, off, len(a.mem)))
			}
			return a.mem[off : off+n]
		}
	}
	panic(fmt.Sprintf("emulated device: address %#x is in no allocation", uintptr(p)))
}

func (d *emuDevice) upload(dst devPtr, src []byte) error {
	copy(d.at(dst, int64(len(src))), src)
	return nil
}

func (d *emuDevice) download(dst []byte, src devPtr) error {
	copy(dst, d.at(src, int64(len(dst))))
	return nil
}

func (d *emuDevice) copy(dst, src devPtr, bytes int64) error {
	copy(d.at(dst, bytes), d.at(src, bytes))
	return nil
}

func (d *emuDevice) zero(dst devPtr, bytes int64) error {
	clear(d.at(dst, bytes))
	return nil
}

func (d *emuDevice) launch(name string, gx, gy int, args []uint64) error {
	sig := kernelSigs[name]
	for i, kind := range []byte(sig) {
		if kind == 'p' {
			d.at(devPtr(args[i]), 1) // every pointer argument points into an allocation
		}
	}
	slots := make([]unsafe.Pointer, len(args))
	for i := range args {
		slots[i] = unsafe.Pointer(&args[i])
	}
	switch rc := d.lib.launch(name, uint32(gx), uint32(gy), emuBlock, unsafe.Pointer(&slots[0])); rc {
	case 0:
	case -3:
		return fmt.Errorf("emulated launch of %s: divergent __syncthreads (some threads exited while others wait)", name)
	default:
		return fmt.Errorf("emulated launch of %s: status %d", name, rc)
	}
	return nil
}

func (d *emuDevice) plan(dir fftDir, n, batch int) (int, error) {
	d.plans = append(d.plans, emuPlan{dir, n, batch})
	return len(d.plans) - 1, nil
}

// fft runs a batch of real transforms as cuFFT's R2C/C2R (D2Z/Z2D) would: forward to the
// n/2+1 bins of the half spectrum, inverse unnormalised; an inverse leaves NaNs in its input.
func (d *emuDevice) fft(plan int, in, out devPtr) error {
	pl := d.plans[plan]
	n, h := pl.n, pl.n/2+1
	fft, ok := d.ffts[n]
	if !ok {
		fft = fourier.NewFFT(n)
		d.ffts[n] = fft
	}
	rs := int64(4)
	if d.f64 {
		rs = 8
	}
	seq, coef := make([]float64, n), make([]complex128, h)
	for b := 0; b < pl.batch; b++ {
		if pl.dir == fftForward {
			d.getReal(seq, in+devPtr(int64(b*n)*rs), rs)
			fft.Coefficients(coef, seq)
			d.roundoff(nil, coef)
			d.putComplex(out+devPtr(int64(b*h)*2*rs), coef, rs)
		} else {
			d.getComplex(coef, in+devPtr(int64(b*h)*2*rs), rs)
			fft.Sequence(seq, coef)
			d.roundoff(seq, nil)
			d.putReal(out+devPtr(int64(b*n)*rs), seq, rs)
		}
	}
	if pl.dir == fftInverse {
		nan := d.at(in, int64(pl.batch*h)*2*rs)
		for i := range nan {
			nan[i] = 0xff
		}
	}
	return nil
}

// emuFFTError is the normwise relative error of a float32 transform: cuFFT's single
// precision transforms measure about 1e-7 rms (relative to the rms of the output) at the
// lengths used here. A float64 transform is computed as it is.
const emuFFTError = 1e-7

// roundoff models a float32 transform's rounding error: every output gets independent
// noise of emuFFTError times the output's rms. Transforms in double precision are left as
// they are (gonum's error is that of cuFFT's double transforms).
func (d *emuDevice) roundoff(seq []float64, coef []complex128) {
	if d.f64 {
		return
	}
	var ss float64
	for _, v := range seq {
		ss += v * v
	}
	for _, v := range coef {
		ss += real(v)*real(v) + imag(v)*imag(v)
	}
	rms := math.Sqrt(ss / float64(max(len(seq)+len(coef), 1)))
	for i := range seq {
		seq[i] += emuFFTError * rms * d.rng.NormFloat64()
	}
	for i := range coef {
		coef[i] += complex(emuFFTError*rms*d.rng.NormFloat64()/math.Sqrt2, emuFFTError*rms*d.rng.NormFloat64()/math.Sqrt2)
	}
}

func (d *emuDevice) getReal(dst []float64, p devPtr, rs int64) {
	b := d.at(p, int64(len(dst))*rs)
	for i := range dst {
		if rs == 8 {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		} else {
			dst[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
}

func (d *emuDevice) putReal(p devPtr, src []float64, rs int64) {
	b := d.at(p, int64(len(src))*rs)
	for i, v := range src {
		if rs == 8 {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		} else {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		}
	}
}

func (d *emuDevice) getComplex(dst []complex128, p devPtr, rs int64) {
	tmp := make([]float64, 2*len(dst))
	d.getReal(tmp, p, rs)
	for i := range dst {
		dst[i] = complex(tmp[2*i], tmp[2*i+1])
	}
}

func (d *emuDevice) putComplex(p devPtr, src []complex128, rs int64) {
	tmp := make([]float64, 2*len(src))
	for i, v := range src {
		tmp[2*i], tmp[2*i+1] = real(v), imag(v)
	}
	d.putReal(p, tmp, rs)
}

func (d *emuDevice) close() error {
	d.allocs, d.plans = nil, nil
	return nil
}

// The same parity checks as on a real device, on the emulated one.

func TestGPUEmulatedKernels(t *testing.T) {
	open := emuOpener(t)
	t.Run("float32", func(t *testing.T) { checkKernelParity(t, open, false) })
	t.Run("float64", func(t *testing.T) { checkKernelParity(t, open, true) })
}

func TestGPUEmulatedSteps(t *testing.T) {
	checkStepParity(t, emuOpener(t), 1e-9)
}

func TestGPUEmulatedDistill(t *testing.T) {
	open := emuOpener(t)
	checkDistillParity(t, open, false, 128, 80)
}

func TestGPUEmulatedSums(t *testing.T) {
	checkSumsParity(t, emuOpener(t))
}

// TestGPUEmulatedProjection: the default distillation's ladder through the emulated device,
// every sum against the CPU's on the CPU's path, then the fits against the CPU's (short
// kernels: the emulator runs a block's threads one after another).
func TestGPUEmulatedProjection(t *testing.T) {
	targets, orders := projectionParityTargets(t, 256, 3, 2), []int{4, 8, 16}
	checkShadowSums(t, emuOpener(t), targets, orders)
	checkProjectionParity(t, emuOpener(t), targets, orders)
}

func TestGPUEmulatedProjectionBackends(t *testing.T) {
	checkProjectionBackends(t, emuOpener(t))
}

// BenchmarkGPUEmulatedProjection runs BenchmarkGPUProjection's code on the emulated device,
// on two short channels, so that the benchmark is known to work before a GPU runs it.
func BenchmarkGPUEmulatedProjection(b *testing.B) {
	if _, err := loadEmu(true); err != nil {
		b.Skipf("no emulated GPU: %v", err)
	}
	benchProjection(b, []Backend{GPU{open: openEmu}, CPU{}}, projectionParityTargets(b, 256, 2, 0), []int{8})
}

// BenchmarkGPUEmulatedStep runs BenchmarkGPUStep's code on the emulated device, on a small
// bank (the emulator is slow), so that the benchmark is known to work before a GPU runs it.
func BenchmarkGPUEmulatedStep(b *testing.B) {
	if _, err := loadEmu(false); err != nil {
		b.Skipf("no emulated GPU: %v", err)
	}
	benchGPUStep(b, openEmu, []struct{ d, l, n int }{{4, 256, 8}})
}

// TestEmulatorRunsTheCompiledSource: the emulator's translation unit holds the kernel source
// NVRTC compiles (gpuSource) unchanged, between its shim and its trampolines, and g++ gets
// it in the dialect and with the macro NVRTC gets (gpuOptions).
func TestEmulatorRunsTheCompiledSource(t *testing.T) {
	src := emuSource()
	if !strings.HasPrefix(src, emuShim+gpuSource) || strings.Count(src, gpuSource) != 1 {
		t.Error("the emulated translation unit does not hold gpuSource once, unchanged, after the shim")
	}
	rest := strings.TrimPrefix(src, emuShim+gpuSource)
	if strings.Contains(rest, "__global__") || strings.Contains(rest, "#define") {
		t.Error("the trampolines define kernels or macros of their own")
	}
	opts := gpuOptions("--gpu-architecture=compute_70", true)
	if !slices.Contains(opts, "--std="+gpuDialect) || !slices.Contains(opts, "-DREAL="+gpuReal(true)) {
		t.Errorf("NVRTC's options %q lack the emulator's dialect or REAL", opts)
	}
}
