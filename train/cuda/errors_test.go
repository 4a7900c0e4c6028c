package cuda

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorNames(t *testing.T) {
	for _, c := range []struct {
		name func(int) string
		code int
		want string
	}{
		{DriverErrorName, 0, "CUDA_SUCCESS"},
		{DriverErrorName, 1, "CUDA_ERROR_INVALID_VALUE"},
		{DriverErrorName, ErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{DriverErrorName, ErrorStubLibrary, "CUDA_ERROR_STUB_LIBRARY"},
		{DriverErrorName, ErrorNoDevice, "CUDA_ERROR_NO_DEVICE"},
		{DriverErrorName, 209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{DriverErrorName, ErrorInvalidPTX, "CUDA_ERROR_INVALID_PTX"},
		{DriverErrorName, ErrorUnsupportedPTXVer, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
		{DriverErrorName, 700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{DriverErrorName, 719, "CUDA_ERROR_LAUNCH_FAILED"},
		{DriverErrorName, 999, "CUDA_ERROR_UNKNOWN"},
		{DriverErrorName, 4242, "CUresult(4242)"},
		{NVRTCErrorName, 0, "NVRTC_SUCCESS"},
		{NVRTCErrorName, NVRTCErrorCompilation, "NVRTC_ERROR_COMPILATION"},
		{NVRTCErrorName, 5, "NVRTC_ERROR_INVALID_OPTION"},
		{NVRTCErrorName, 11, "NVRTC_ERROR_INTERNAL_ERROR"},
		{NVRTCErrorName, -1, "nvrtcResult(-1)"},
		{CUFFTErrorName, 0, "CUFFT_SUCCESS"},
		{CUFFTErrorName, CUFFTAllocFailed, "CUFFT_ALLOC_FAILED"},
		{CUFFTErrorName, 8, "CUFFT_INVALID_SIZE"},
		{CUFFTErrorName, 16, "CUFFT_NOT_SUPPORTED"},
		{CUFFTErrorName, 99, "cufftResult(99)"},
	} {
		if got := c.name(c.code); got != c.want {
			t.Errorf("code %d: %s, want %s", c.code, got, c.want)
		}
	}
	// Every name is spelled as the headers spell them.
	for code, name := range driverNames {
		if !strings.HasPrefix(name, "CUDA_") || strings.ToUpper(name) != name {
			t.Errorf("driver code %d: %q", code, name)
		}
	}
	for code, name := range nvrtcNames {
		if !strings.HasPrefix(name, "NVRTC_") {
			t.Errorf("nvrtc code %d: %q", code, name)
		}
	}
	for code, name := range cufftNames {
		if !strings.HasPrefix(name, "CUFFT_") {
			t.Errorf("cufft code %d: %q", code, name)
		}
	}
}

func TestStatusToError(t *testing.T) {
	if driverError("cuInit", 0) != nil || nvrtcError("nvrtcVersion", 0) != nil || cufftError("cufftCreate", 0) != nil {
		t.Error("success is an error")
	}
	err := driverError("cuMemAlloc_v2", ErrorOutOfMemory)
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorOutOfMemory || e.Call != "cuMemAlloc_v2" {
		t.Fatalf("%#v", err)
	}
	if got := err.Error(); got != "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY: the device is out of memory" {
		t.Errorf("%q", got)
	}
	if got := driverError("cuInit", ErrorStubLibrary).Error(); !strings.Contains(got, "CUDA_ERROR_STUB_LIBRARY") || !strings.Contains(got, "SSMLAB_LIBCUDA") {
		t.Errorf("%q", got)
	}
	if got := nvrtcError("nvrtcCompileProgram", 6).Error(); got != "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION" {
		t.Errorf("%q", got)
	}
	if got := cufftError("cufftExecR2C", 6).Error(); got != "cufftExecR2C: CUFFT_EXEC_FAILED" {
		t.Errorf("%q", got)
	}
}

func TestVersionStrings(t *testing.T) {
	for v, want := range map[int]string{12040: "12.4", 13000: "13.0", 11020: "11.2", 12090: "12.9"} {
		if got := VersionString(v); got != want {
			t.Errorf("VersionString(%d) = %s, want %s", v, got, want)
		}
	}
	for v, want := range map[int]string{11201: "11.2.1", 12000: "12.0.0", 10900: "10.9.0", 11303: "11.3.3"} {
		if got := CUFFTVersionString(v); got != want {
			t.Errorf("CUFFTVersionString(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestArchOption(t *testing.T) {
	supported := []int{50, 60, 70, 75, 80, 86, 89, 90}
	for _, c := range []struct {
		cc    int
		archs []int
		cubin bool
		want  string
	}{
		{90, supported, true, "--gpu-architecture=sm_90"}, // machine code for an H100
		{90, supported, false, "--gpu-architecture=compute_90"},
		{100, supported, true, "--gpu-architecture=compute_90"}, // newer than NVRTC knows: PTX the driver JITs
		{87, supported, true, "--gpu-architecture=compute_86"},
		{80, nil, true, "--gpu-architecture=compute_80"}, // an NVRTC that cannot list its architectures
	} {
		if got := archOption(c.cc, c.archs, c.cubin); got != c.want {
			t.Errorf("cc %d cubin %v: %s, want %s", c.cc, c.cubin, got, c.want)
		}
	}
	if !emitsCUBIN([]string{"-DREAL=float", "--gpu-architecture=sm_90"}) || emitsCUBIN([]string{"--gpu-architecture=compute_90"}) {
		t.Error("emitsCUBIN")
	}
}

func TestFirstLines(t *testing.T) {
	log := "a.cu(3): error: x\n  detail\n\na.cu(9): error: y\n"
	if got := firstLines(log, 2); got != "a.cu(3): error: x | detail … (2 more lines)" {
		t.Errorf("%q", got)
	}
}
