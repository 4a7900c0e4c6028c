package cuda

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The real libraries, loaded through Search{} as the backend loads them, where they are
// installed (on Debian: libcuda1, libnvrtc11.2, libcufft10 from non-free, which `.ci/run`
// installs where it can). None of this needs a GPU.

// skipWithout skips a test that needs lib, which could not be loaded: unless the CI script
// installed it (SSMLAB_CI_CUDA lists what it installed), in which case the test fails.
func skipWithout(t *testing.T, lib Library, err error) {
	t.Helper()
	if slices.Contains(strings.Fields(os.Getenv("SSMLAB_CI_CUDA")), lib.Name) {
		t.Fatalf("SSMLAB_CI_CUDA says %s is installed, but it does not load: %v", lib.Name, err)
	}
	t.Skipf("no %s here: %v", lib.Name, err)
}

// unbound returns the func fields of the struct *p that are nil.
func unbound(p any) []string {
	v := reflect.ValueOf(p).Elem()
	var out []string
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Func && f.IsNil() {
			out = append(out, v.Type().Field(i).Name)
		}
	}
	return out
}

// TestDriverLibrary loads libcuda, resolves every symbol the backend uses, and, on a machine
// without a GPU, checks the error that `ssmlab backends` shows: cuInit fails with
// CUDA_ERROR_NO_DEVICE and a hint.
func TestDriverLibrary(t *testing.T) {
	d, err := OpenDriver(Search{})
	if err != nil {
		skipWithout(t, LibCUDA, err)
	}
	if missing := unbound(d); len(missing) > 0 {
		t.Errorf("%s: unresolved %v", d.Lib.Path, missing)
	}
	v, err := d.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: CUDA %s driver API", d.Lib.Path, VersionString(v))
	err = d.Init()
	if err == nil {
		n, err := d.DeviceCount()
		t.Logf("cuInit succeeded (%d devices, %v): the no-device path is not checked here", n, err)
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorNoDevice {
		t.Fatalf("cuInit without a device: %v, want CUDA_ERROR_NO_DEVICE", err)
	}
	want := "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// Calls after a failed cuInit fail cleanly too.
	if _, err := d.DeviceCount(); err == nil || !strings.HasPrefix(err.Error(), "cuDeviceGetCount: CUDA_ERROR_") {
		t.Errorf("cuDeviceGetCount after a failed cuInit: %v", err)
	}
}

// TestNVRTCLibrary loads libnvrtc and resolves every symbol, the optional ones of CUDA 11.2
// and later included (the backend's minimum: see the README's Backends section).
func TestNVRTCLibrary(t *testing.T) {
	n, err := OpenNVRTC(Search{}, 0)
	if err != nil {
		skipWithout(t, LibNVRTC, err)
	}
	if missing := unbound(n); len(missing) > 0 {
		t.Errorf("%s: unresolved %v", n.Lib.Path, missing)
	}
	major, minor, err := n.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: NVRTC %d.%d", n.Lib.Path, major, minor)
	if major*100+minor < 1102 {
		t.Errorf("NVRTC %d.%d is older than the 11.2 the backend supports", major, minor)
	}
}

// TestCUFFTLibrary loads libcufft and resolves every symbol.
func TestCUFFTLibrary(t *testing.T) {
	c, err := OpenCUFFT(Search{}, 0)
	if err != nil {
		skipWithout(t, LibCUFFT, err)
	}
	if missing := unbound(c); len(missing) > 0 {
		t.Errorf("%s: unresolved %v", c.Lib.Path, missing)
	}
	v, err := c.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: cuFFT %s", c.Lib.Path, CUFFTVersionString(v))
}
