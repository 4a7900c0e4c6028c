//go:build unix

package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// hermetic is a Search that sees only the given environment: no system directories, no
// wheels, no system loader.
func hermetic(env map[string]string) Search {
	return Search{
		Getenv:         func(k string) string { return env[k] },
		Dirs:           []string{},
		Wheels:         []string{},
		NoSystemLoader: true,
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFindRejectsFakeLibraries: files named like the sonames that are not libraries give a
// *LibraryError naming each file and why, never a panic or a hang.
func TestFindRejectsFakeLibraries(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "libcuda.so.1"), "this is not a shared library\n")
	write(t, filepath.Join(dir, "libcuda.so"), "\x7fELF but not really one: dlopen must refuse it")
	if err := os.Mkdir(filepath.Join(dir, "libnvrtc.so.12"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "libcufft.so.11"), "")
	fifo := filepath.Join(dir, "libcufft.so.12")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Logf("no FIFO on this system: %v", err)
		fifo = ""
	}
	s := hermetic(map[string]string{EnvLibDir: dir})

	_, err := s.Find(LibCUDA, 0)
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Fatalf("libcuda: %v (%T), want *LibraryError", err, err)
	}
	if le.Library != "libcuda" || !slices.Equal(le.Searched, []string{dir}) || len(le.Rejected) != 2 {
		t.Fatalf("libcuda: %+v", le)
	}
	if le.Rejected[0].Reason != "not an ELF shared library" {
		t.Errorf("text file: %q", le.Rejected[0].Reason)
	}
	if Supported && (le.Rejected[1].Reason == "" || strings.Contains(le.Rejected[1].Reason, "\n")) {
		t.Errorf("fake ELF: dlopen's reason %q", le.Rejected[1].Reason)
	}
	msg := err.Error()
	for _, want := range []string{"libcuda: ", dir + "/libcuda.so.1: not an ELF shared library", "searched " + dir, "SSMLAB_LIBCUDA", EnvLibDir} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("message is not one line: %q", msg)
	}

	if _, err := s.Find(LibNVRTC, 0); !errors.As(err, &le) || len(le.Rejected) != 1 || le.Rejected[0].Reason != "not a regular file" {
		t.Errorf("a directory named libnvrtc.so.12: %v", err)
	}
	_, err = s.Find(LibCUFFT, 0)
	if !errors.As(err, &le) {
		t.Fatalf("libcufft: %v", err)
	}
	reasons := map[string]string{}
	for _, a := range le.Rejected {
		reasons[filepath.Base(a.Path)] = a.Reason
	}
	if reasons["libcufft.so.11"] != "not an ELF shared library" {
		t.Errorf("empty file: %q", reasons["libcufft.so.11"])
	}
	if fifo != "" && reasons["libcufft.so.12"] != "not a regular file" {
		t.Errorf("FIFO: %q", reasons["libcufft.so.12"])
	}
}

func TestFindNothing(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	s := hermetic(map[string]string{EnvLibDir: strings.Join(dirs, string(os.PathListSeparator))})
	_, err := s.Find(LibNVRTC, 0)
	var le *LibraryError
	if !errors.As(err, &le) || len(le.Rejected) != 0 {
		t.Fatalf("%v", err)
	}
	if msg := err.Error(); msg != "libnvrtc not found (searched "+dirs[0]+" and "+dirs[1]+"; set SSMLAB_LIBNVRTC to the file or SSMLAB_CUDA_LIB_DIR to its directory)" {
		t.Errorf("%s", msg)
	}
}

func TestSearchOrder(t *testing.T) {
	env := map[string]string{
		EnvLibDir:         "/opt/a:/opt/b",
		"LD_LIBRARY_PATH": "/opt/b:/opt/c/", // repeats and trailing slashes collapse
		"HOME":            "/home/u",
		"VIRTUAL_ENV":     "/venv",
	}
	var globbed []string
	s := Search{
		Getenv: func(k string) string { return env[k] },
		Glob: func(p string) ([]string, error) {
			globbed = append(globbed, p)
			switch p {
			case "/usr/local/cuda-*/lib64":
				return []string{"/usr/local/cuda-11.8/lib64", "/usr/local/cuda-12.10/lib64", "/usr/local/cuda-12.9/lib64"}, nil
			case "/home/u/.local/lib/python3*/site-packages/nvidia/*/lib":
				return []string{"/home/u/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib"}, nil
			}
			return nil, nil
		},
		Dirs:   []string{"/usr/local/cuda/lib64", "/usr/local/cuda-*/lib64", "/usr/lib64"},
		Wheels: []string{"~/.local/lib/python3*/site-packages/nvidia/*/lib", "$VIRTUAL_ENV/lib/python3*/site-packages/nvidia/*/lib", "$CONDA_PREFIX/lib"},
	}
	var got []string
	for _, p := range s.places() {
		got = append(got, p.origin+" "+p.dir)
	}
	want := []string{
		"$SSMLAB_CUDA_LIB_DIR /opt/a", "$SSMLAB_CUDA_LIB_DIR /opt/b", "$LD_LIBRARY_PATH /opt/c",
		"system /usr/local/cuda/lib64", "system /usr/local/cuda-12.10/lib64", "system /usr/local/cuda-12.9/lib64",
		"system /usr/local/cuda-11.8/lib64", "system /usr/lib64",
		"python /home/u/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib",
	}
	if !slices.Equal(got, want) {
		t.Errorf("search order\n got %q\nwant %q", got, want)
	}
	// $CONDA_PREFIX is unset: its pattern is skipped, not globbed from the root.
	if !slices.Contains(globbed, "/venv/lib/python3*/site-packages/nvidia/*/lib") || slices.ContainsFunc(globbed, func(p string) bool { return strings.HasPrefix(p, "/lib") }) {
		t.Errorf("globbed %q", globbed)
	}
}

// TestEnvFileOverridesEverything: a library's own variable names the only candidate.
func TestEnvFileOverridesEverything(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "libnvrtc.so.12"), "fake")
	missing := filepath.Join(t.TempDir(), "libnvrtc.so.12")
	s := hermetic(map[string]string{EnvLibDir: dir, "SSMLAB_LIBNVRTC": missing})
	_, err := s.Find(LibNVRTC, 0)
	var le *LibraryError
	if !errors.As(err, &le) {
		t.Fatal(err)
	}
	if !slices.Equal(le.Searched, []string{"$SSMLAB_LIBNVRTC"}) || len(le.Rejected) != 1 || le.Rejected[0] != (Attempt{missing, "no such file"}) {
		t.Errorf("%+v", le)
	}
}

// TestFindSkipsNewerCUDA: sonames of a newer CUDA major than the driver's are not loaded.
func TestFindSkipsNewerCUDA(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "libnvrtc.so.13"), "\x7fELF")
	write(t, filepath.Join(dir, "libcufft.so.12"), "\x7fELF")
	s := hermetic(map[string]string{EnvLibDir: dir})
	for _, lib := range []Library{LibNVRTC, LibCUFFT} {
		_, err := s.Find(lib, 12)
		var le *LibraryError
		if !errors.As(err, &le) || len(le.Rejected) != 1 || !strings.Contains(le.Rejected[0].Reason, "skipped: built for CUDA 13, the driver supports CUDA 12") {
			t.Errorf("%s: %v", lib.Name, err)
		}
	}
}

// TestFindLoadsARealLibrary loads the C math library through the same path, binds a function
// and calls it: purego works in this build (CGO_ENABLED=0 included).
func TestFindLoadsARealLibrary(t *testing.T) {
	if !Supported {
		t.Skip("no dynamic loading on " + runtime.GOOS + "/" + runtime.GOARCH)
	}
	libm := Library{Name: "libm", EnvFile: "SSMLAB_TEST_LIBM", Symbol: "cos", Sonames: []Soname{{"libm.so.6", 0}}}
	h, err := Search{Getenv: func(string) string { return "" }, Dirs: []string{}, Wheels: []string{}}.Find(libm, 0)
	if err != nil {
		t.Skipf("no libm.so.6 here: %v", err)
	}
	var cos func(float64) float64
	if err := bind(h, &cos, "cos"); err != nil {
		t.Fatal(err)
	}
	if got := cos(0); got != 1 {
		t.Errorf("cos(0) = %v through %s", got, h.Path)
	}
	if err := bind(h, &cos, "no_such_function"); err == nil || !strings.Contains(err.Error(), "does not export no_such_function") {
		t.Errorf("missing symbol: %v", err)
	}
}

func TestNewestFirst(t *testing.T) {
	got := newestFirst([]string{"/x/cuda-11.8/lib64", "/x/cuda-12.9/lib64", "/x/cuda-12.10/lib64", "/x/cuda-12/lib64"})
	want := []string{"/x/cuda-12.10/lib64", "/x/cuda-12.9/lib64", "/x/cuda-12/lib64", "/x/cuda-11.8/lib64"}
	if !slices.Equal(got, want) {
		t.Errorf("%q", got)
	}
}

func TestSystemDirsSkipStubs(t *testing.T) {
	for _, d := range append(SystemDirs(), WheelPatterns()...) {
		if strings.Contains(d, "stubs") {
			t.Errorf("%s: the toolkit's stubs hold a link-time libcuda that cannot run", d)
		}
	}
}
