package train

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unsafe"
)

// devPtr is a device address; arithmetic on it addresses into an allocation.
type devPtr uint64

// fftDir is the direction of a batched real transform: forward (real → half spectrum) or
// inverse (half spectrum → real, unnormalised, possibly overwriting its input).
type fftDir int

const (
	fftForward fftDir = iota
	fftInverse
)

// device is what the GPU trainer needs of a device: memory, launches of the kernels in
// gpuSource by name, and batched real FFTs (in the precision the device was opened with).
// Work is queued in order on one stream; download waits for it. The CUDA implementation is
// in gpu_cuda.go, a CPU emulation for tests in gpu_emu_test.go.
type device interface {
	// bind readies the calling goroutine for the device's calls (locks it to its thread and
	// makes the context current) until release is called.
	bind() (release func(), err error)
	alloc(bytes int64) (devPtr, error)
	upload(dst devPtr, src []byte) error
	download(dst []byte, src devPtr) error
	copy(dst, src devPtr, bytes int64) error
	zero(dst devPtr, bytes int64) error
	// launch queues kernel name on a grid of gx × gy blocks of blockSize() threads; args
	// holds one 8-byte slot per parameter (see packArgs).
	launch(name string, gx, gy int, args []uint64) error
	blockSize() int
	// plan makes a batch of transforms of n points, batch elements contiguous.
	plan(dir fftDir, n, batch int) (int, error)
	fft(plan int, in, out devPtr) error
	// close waits for the queued work and frees everything.
	close() error
}

// kernelSig is a kernel's parameter kinds, one letter each: p a pointer, i an int, d a double.
type kernelSig string

var kernelSigs = parseKernelSigs(gpuSource)

var kernelRE = regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)

// parseKernelSigs reads the extern "C" __global__ functions of src and their parameters.
func parseKernelSigs(src string) map[string]kernelSig {
	out := map[string]kernelSig{}
	for _, m := range kernelRE.FindAllStringSubmatch(src, -1) {
		var sig strings.Builder
		for _, param := range strings.Split(m[2], ",") {
			f := strings.Fields(param)
			typ := strings.Join(f[:len(f)-1], " ")
			switch {
			case strings.Contains(typ, "*"):
				sig.WriteByte('p')
			case typ == "int":
				sig.WriteByte('i')
			case typ == "double":
				sig.WriteByte('d')
			default:
				panic("train: gpu kernel " + m[1] + ": parameter type " + typ + " has no launcher kind")
			}
		}
		out[m[1]] = kernelSig(sig.String())
	}
	return out
}

// packArgs checks args against kernel name's parameters and packs them into 8-byte slots:
// a devPtr as its address, an int as int32 in the low four bytes (little-endian), a float64
// as its bits. A mismatch is a bug in the launcher and panics.
func packArgs(name string, args ...any) []uint64 {
	sig, ok := kernelSigs[name]
	if !ok {
		panic("train: gpu: no kernel " + name)
	}
	if len(args) != len(sig) {
		panic(fmt.Sprintf("train: gpu: kernel %s takes %d arguments, got %d", name, len(sig), len(args)))
	}
	slots := make([]uint64, len(args))
	for i, a := range args {
		want := sig[i]
		switch v := a.(type) {
		case devPtr:
			if want == 'p' {
				slots[i] = uint64(v)
				continue
			}
		case int:
			if want == 'i' && v == int(int32(v)) {
				slots[i] = uint64(uint32(int32(v)))
				continue
			}
		case float64:
			if want == 'd' {
				slots[i] = math.Float64bits(v)
				continue
			}
		}
		panic(fmt.Sprintf("train: gpu: kernel %s argument %d is %T(%v), want kind %c", name, i, a, a, want))
	}
	return slots
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// i32Bytes views v's memory as bytes.
func i32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// realBytes converts host float64 values to the device's real type.
func (t *gpuTrainer) realBytes(v []float64) []byte {
	if t.f64 {
		return f64Bytes(v)
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// fromReal converts device reals back to float64.
func (t *gpuTrainer) fromReal(b []byte) []float64 {
	if t.f64 {
		out := make([]float64, len(b)/8)
		copy(f64Bytes(out), b)
		return out
	}
	f := make([]float32, len(b)/4)
	if len(f) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(b)), b)
	}
	out := make([]float64, len(f))
	for i, x := range f {
		out[i] = float64(x)
	}
	return out
}

// f64Bytes views v's memory as bytes (host byte order, which the device shares).
func f64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}
