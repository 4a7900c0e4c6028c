//go:build !nogpu

package train

import (
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/train/cuda"
)

// TestNVRTCCompilesKernels compiles the kernel source with the NVRTC found on this machine,
// which needs no GPU (pip's nvidia-cuda-nvrtc-cu12 is enough); it skips where there is none.
func TestNVRTCCompilesKernels(t *testing.T) {
	rtc, err := cuda.OpenNVRTC(cuda.Search{}, 0)
	if err != nil {
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
	t.Logf("NVRTC %d.%d from %s, architectures %v", major, minor, rtc.Lib.Path, archs)
	for _, real := range []string{"float", "double"} {
		// compute_70 (Volta, the oldest CUDA 12 and 13 support alike) as PTX, and machine code
		// for an H100 when this NVRTC can emit it.
		for _, arch := range []string{"--gpu-architecture=compute_70", rtc.ArchOption(90, archs)} {
			code, log, err := rtc.Compile(gpuSource, "ssmlab_gpu.cu", []string{arch, "-DREAL=" + real})
			if err != nil {
				t.Fatalf("REAL=%s %s: %v\n%s", real, arch, err, log)
			}
			if log != "" {
				t.Errorf("REAL=%s %s: warnings:\n%s", real, arch, log)
			}
			if strings.Contains(arch, "compute_") {
				for _, name := range gpuKernelNames {
					if !strings.Contains(string(code), ".entry "+name) {
						t.Errorf("REAL=%s: the PTX has no entry %s", real, name)
					}
				}
			} else if len(code) < 4 || string(code[:4]) != "\x7fELF" {
				t.Errorf("REAL=%s %s: not a CUBIN", real, arch)
			}
		}
	}
}
