//go:build unix

package cuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// hermetic is a Search that sees only the given environment: no system directories, no
// wheels, no loader configuration.
func hermetic(env map[string]string) Search {
	return Search{
		Getenv:     func(k string) string { return env[k] },
		Dirs:       []string{},
		Wheels:     []string{},
		LoaderDirs: []string{},
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
		Dirs:       []string{"/usr/local/cuda/lib64", "/usr/local/cuda-*/lib64", "/usr/lib64"},
		Wheels:     []string{"~/.local/lib/python3*/site-packages/nvidia/*/lib", "$VIRTUAL_ENV/lib/python3*/site-packages/nvidia/*/lib", "$CONDA_PREFIX/lib"},
		LoaderDirs: []string{"/opt/conf", "/usr/lib64"},
	}
	var got []string
	places, ignored := s.places()
	for _, p := range places {
		got = append(got, p.origin+" "+p.dir)
	}
	want := []string{
		"$SSMLAB_CUDA_LIB_DIR /opt/a", "$SSMLAB_CUDA_LIB_DIR /opt/b", "$LD_LIBRARY_PATH /opt/c",
		"system /usr/local/cuda/lib64", "system /usr/local/cuda-12.10/lib64", "system /usr/local/cuda-12.9/lib64",
		"system /usr/local/cuda-11.8/lib64", "system /usr/lib64",
		"python /home/u/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib",
		"ld.so.conf /opt/conf",
	}
	if !slices.Equal(got, want) {
		t.Errorf("search order\n got %q\nwant %q", got, want)
	}
	if len(ignored) != 0 {
		t.Errorf("ignored %v", ignored)
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
	// Found through the loader's configuration (/etc/ld.so.conf), as an absolute path.
	h, err := Search{Getenv: func(string) string { return "" }, Dirs: []string{}, Wheels: []string{}}.Find(libm, 0)
	if err != nil {
		t.Skipf("no libm.so.6 here: %v", err)
	}
	if !filepath.IsAbs(h.Path) {
		t.Errorf("loaded %s, not an absolute path", h.Path)
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

// plantLibcuda writes a libcuda.so.1 into dir: a real shared library exporting cuInit when a
// C compiler is at hand (so that only the search keeps it out), else a file that merely
// starts like one. It reports which.
func plantLibcuda(t *testing.T, dir string) (real bool) {
	t.Helper()
	path := filepath.Join(dir, "libcuda.so.1")
	if cc, err := exec.LookPath("cc"); err == nil && Supported {
		cmd := exec.Command(cc, "-shared", "-fPIC", "-o", path, "-x", "c", "-")
		cmd.Stdin = strings.NewReader("int cuInit(unsigned flags) { return 999; }\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building a planted libcuda: %v\n%s", err, out)
		}
		return true
	}
	write(t, path, "\x7fELF planted")
	return false
}

// TestFindIgnoresRelativeDirectories: a libcuda.so.1 planted in the working directory (or
// below it) is never loaded, whether LD_LIBRARY_PATH has an empty entry (which the dynamic
// loader reads as the working directory), "." or a relative directory, or
// SSMLAB_CUDA_LIB_DIR or SSMLAB_LIBCUDA is relative. Only absolute paths are loaded.
func TestFindIgnoresRelativeDirectories(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	if err := os.Mkdir("lib", 0o755); err != nil {
		t.Fatal(err)
	}
	real := plantLibcuda(t, wd)
	plantLibcuda(t, filepath.Join(wd, "lib"))

	for name, env := range map[string]map[string]string{
		"empty entries": {"LD_LIBRARY_PATH": ":" + string(os.PathListSeparator)},
		"dot":           {"LD_LIBRARY_PATH": "."},
		"relative":      {"LD_LIBRARY_PATH": "lib", EnvLibDir: "lib:./"},
		"home":          {"HOME": "lib"},
	} {
		s := hermetic(env)
		s.Wheels = []string{"~/"}
		h, err := s.Find(LibCUDA, 0)
		if h != nil {
			t.Errorf("%s: loaded %s", name, h.Path)
			continue
		}
		var le *LibraryError
		if !errors.As(err, &le) {
			t.Fatalf("%s: %v", name, err)
		}
		if len(le.Searched) != 0 {
			t.Errorf("%s: searched %q", name, le.Searched)
		}
		for _, a := range le.Rejected {
			if a.Reason != "not an absolute directory: ignored" {
				t.Errorf("%s: %s: %s", name, a.Path, a.Reason)
			}
		}
		if len(le.Rejected) == 0 || !strings.Contains(err.Error(), "not an absolute directory: ignored") {
			t.Errorf("%s: the error does not say what was ignored: %v", name, err)
		}
	}
	_, err := hermetic(map[string]string{"SSMLAB_LIBCUDA": "./libcuda.so.1"}).Find(LibCUDA, 0)
	var le *LibraryError
	if !errors.As(err, &le) || len(le.Rejected) != 1 || le.Rejected[0] != (Attempt{"./libcuda.so.1", "not an absolute path"}) {
		t.Errorf("a relative SSMLAB_LIBCUDA: %v", err)
	}
	if !real {
		return
	}
	// The planted library is loadable: the search alone kept it out.
	h, err := hermetic(map[string]string{EnvLibDir: filepath.Join(wd, "lib")}).Find(LibCUDA, 0)
	if err != nil || h.Path != filepath.Join(wd, "lib", "libcuda.so.1") {
		t.Errorf("the planted library by its absolute directory: %v %v", h, err)
	}
}

func TestLoaderConfDirs(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "ld.so.conf")
	write(t, conf, "# comment\n/opt/one # trailing comment\ninclude conf.d/*.conf\nhwcap 0 nosegneg\nrelative/dir\n\n/opt/two:/opt/three,/opt/four\n")
	write(t, filepath.Join(dir, "conf.d", "a.conf"), "/opt/a\ninclude "+conf+"\n") // a loop
	write(t, filepath.Join(dir, "conf.d", "b.conf"), "/opt/b=libc5\n")
	write(t, filepath.Join(dir, "conf.d", "c.txt"), "/opt/not-included\n")
	got := LoaderConfDirs(conf)
	want := []string{"/opt/one", "/opt/a", "/opt/b", "/opt/two", "/opt/three", "/opt/four"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := LoaderConfDirs(filepath.Join(dir, "missing")); got != nil {
		t.Errorf("a missing file gives %q", got)
	}
}

// TestFindNeverAsksTheLoaderByName reproduces the planted-library attack end to end: a
// process started with an empty LD_LIBRARY_PATH entry, in a directory holding a libcuda.so.1
// that exports cuInit. The dynamic loader, asked for "libcuda.so.1" by name, loads the planted
// file (as Find did when it fell back to the loader); Find, which loads absolute paths only,
// does not.
func TestFindNeverAsksTheLoaderByName(t *testing.T) {
	if os.Getenv("SSMLAB_TEST_PLANTED") != "" {
		plantedChild()
		return
	}
	if !Supported {
		t.Skip("no dynamic loading on " + runtime.GOOS + "/" + runtime.GOARCH)
	}
	dir := t.TempDir()
	if !plantLibcuda(t, dir) {
		t.Skip("no C compiler to build a library to plant")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFindNeverAsksTheLoaderByName$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH=:", "SSMLAB_TEST_PLANTED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	if !strings.Contains(got, "loader: planted\n") {
		t.Fatalf("the loader did not pick up the planted library, so this test shows nothing:\n%s", got)
	}
	if !strings.Contains(got, "find: not found\n") {
		t.Errorf("Find with no directories to search:\n%s", got)
	}
}

// plantedChild runs in the child process of TestFindNeverAsksTheLoaderByName.
func plantedChild() {
	if h, err := dlopen("libcuda.so.1"); err == nil {
		var cuInit func(uint32) int32
		if bind(&Handle{Path: "libcuda.so.1", Soname: LibCUDA.Sonames[0], h: h}, &cuInit, "cuInit") == nil && cuInit(0) == 999 {
			fmt.Println("loader: planted")
		}
	}
	env := func(k string) string { return map[string]string{"LD_LIBRARY_PATH": os.Getenv("LD_LIBRARY_PATH")}[k] }
	h, err := Search{Getenv: env, Dirs: []string{}, Wheels: []string{}, LoaderDirs: []string{}}.Find(LibCUDA, 0)
	switch {
	case err == nil:
		fmt.Println("find: loaded " + h.Path)
	default:
		fmt.Println("find: not found")
	}
}
