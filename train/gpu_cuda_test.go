//go:build !nogpu

package train

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/train/cuda"
)

// TestNVRTCCompilesKernels compiles the kernel source with the backend's own options
// (gpuOptions) and the NVRTC found on this machine, which needs no GPU: Debian's
// libnvrtc11.2 (CUDA 11.8, the oldest NVRTC the backend supports, which `.ci/run` installs)
// or pip's nvidia-cuda-nvrtc-cu12 is enough. Both precisions are compiled to PTX for the
// oldest and the newest architecture that NVRTC offers, every kernel must be an entry of the
// PTX, and machine code for the newest architecture must be a CUBIN. NVRTC 11 rejected the
// source (alignas) until the options named the C++ dialect. It skips where there is no
// NVRTC, unless SSMLAB_CI_CUDA says that the CI script installed one (it lists libnvrtc).
func TestNVRTCCompilesKernels(t *testing.T) {
	rtc, err := cuda.OpenNVRTC(cuda.Search{}, 0)
	if err != nil {
		if slices.Contains(strings.Fields(os.Getenv("SSMLAB_CI_CUDA")), cuda.LibNVRTC.Name) {
			t.Fatalf("SSMLAB_CI_CUDA says libnvrtc is installed, but it does not load: %v", err)
		}
		t.Skipf("no NVRTC to compile with: %v", err)
	}
	major, minor, err := rtc.Version()
	if err != nil {
		t.Fatal(err)
	}
	archs, err := rtc.SupportedArchs()
	if err != nil {
		t.Fatal(err)
	}
	if len(archs) == 0 {
		t.Fatalf("NVRTC %d.%d cannot list its architectures (nvrtcGetSupportedArchs is CUDA 11.2's)", major, minor)
	}
	oldest, newest := slices.Min(archs), slices.Max(archs)
	t.Logf("NVRTC %d.%d from %s, architectures %v", major, minor, rtc.Lib.Path, archs)
	for _, f64 := range []bool{false, true} {
		for _, arch := range []string{
			fmt.Sprintf("--gpu-architecture=compute_%d", oldest),
			fmt.Sprintf("--gpu-architecture=compute_%d", newest),
			fmt.Sprintf("--gpu-architecture=sm_%d", newest),
		} {
			opts := gpuOptions(arch, f64)
			code, log, err := rtc.Compile(gpuSource, gpuSourceName, opts)
			if err != nil {
				t.Fatalf("%v: %v\n%s", opts, err, log)
			}
			if log != "" {
				t.Errorf("%v: warnings:\n%s", opts, log)
			}
			if strings.Contains(arch, "=sm_") {
				if len(code) < 4 || string(code[:4]) != "\x7fELF" {
					t.Errorf("%v: not a CUBIN", opts)
				}
				continue
			}
			ptx := string(code)
			for _, name := range gpuKernelNames {
				if !strings.Contains(ptx, ".entry "+name+"(") {
					t.Errorf("%v: the PTX has no entry %s", opts, name)
				}
			}
			t.Logf("%v: %d kernels, %d bytes of PTX", opts, len(gpuKernelNames), len(ptx))
		}
	}
}

// TestGPUOptionsNameTheDialect: the options of every compilation name the C++ standard the
// source is written in, and the precision (NVRTC 11.8 without them: "expected an
// identifier" at alignas).
func TestGPUOptionsNameTheDialect(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		opts := gpuOptions("--gpu-architecture=compute_70", f64)
		want := []string{"--gpu-architecture=compute_70", "--std=c++17", "-DREAL=" + gpuReal(f64)}
		if !slices.Equal(opts, want) {
			t.Errorf("f64 %v: options %q, want %q", f64, opts, want)
		}
	}
}

// TestDetectGPUSaysWhatTheDriverSays: where the driver library loads but sees no device
// (Debian's libcuda1 without a GPU), DetectGPU's reason, which `ssmlab backends` prints, is
// the driver's error whole: "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is
// visible (…)".
func TestDetectGPUSaysWhatTheDriverSays(t *testing.T) {
	drv, err := cuda.OpenDriver(cuda.Search{})
	if err != nil {
		t.Skipf("no driver library: %v", err)
	}
	initErr := drv.Init()
	if initErr == nil {
		t.Skip("the driver sees a device")
	}
	_, err = DetectGPU()
	if err == nil || NoGPUReason(err) != initErr.Error() {
		t.Errorf("DetectGPU: %v, want the reason %q", err, initErr)
	}
}
