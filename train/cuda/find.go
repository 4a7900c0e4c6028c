package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Library is a shared library to find: the file names it goes by, newest first, and the
// environment variable that names its file outright.
type Library struct {
	Name    string   // "libcuda", "libnvrtc", "libcufft"
	EnvFile string   // e.g. SSMLAB_LIBCUDA: the library's file; when set, nothing else is tried
	Symbol  string   // a function every usable version exports, checked after loading
	Sonames []Soname // newest first
}

// Soname is one file name of a library and the CUDA major version it belongs to (0 when the
// name does not tell, as for the unversioned development symlink).
type Soname struct {
	File      string
	CUDAMajor int
}

// The three libraries. cuFFT's soname follows its own numbering: cuFFT 10 shipped with CUDA
// 11, cuFFT 11 with CUDA 12 and cuFFT 12 with CUDA 13. NVRTC's follows CUDA's (11.2 was the
// first with a versioned soname).
var (
	LibCUDA = Library{Name: "libcuda", EnvFile: "SSMLAB_LIBCUDA", Symbol: "cuInit",
		Sonames: []Soname{{"libcuda.so.1", 0}, {"libcuda.so", 0}}}
	LibNVRTC = Library{Name: "libnvrtc", EnvFile: "SSMLAB_LIBNVRTC", Symbol: "nvrtcCompileProgram",
		Sonames: []Soname{{"libnvrtc.so.13", 13}, {"libnvrtc.so.12", 12}, {"libnvrtc.so.11.2", 11}, {"libnvrtc.so", 0}}}
	LibCUFFT = Library{Name: "libcufft", EnvFile: "SSMLAB_LIBCUFFT", Symbol: "cufftExecR2C",
		Sonames: []Soname{{"libcufft.so.12", 13}, {"libcufft.so.11", 12}, {"libcufft.so.10", 11}, {"libcufft.so", 0}}}
)

// EnvLibDir names directories (a list like PATH) searched before all others.
const EnvLibDir = "SSMLAB_CUDA_LIB_DIR"

// Search says where to look for the libraries. Its zero value searches this machine: the
// environment (SSMLAB_CUDA_LIB_DIR, then LD_LIBRARY_PATH), the CUDA toolkit's directories, the
// system's library directories, the nvidia/*/lib folders of Python wheels (system, user,
// virtualenv, conda and pyenv installs), and last the directories the dynamic loader's
// configuration names (/etc/ld.so.conf and its includes).
//
// Only absolute directories are searched and only absolute paths are loaded: a relative or
// empty entry of a list such as LD_LIBRARY_PATH is ignored (the dynamic loader reads an empty
// one as the working directory, where anyone may have put a libcuda.so.1), and no bare
// soname is handed to the dynamic loader's own search, which would honour such entries.
type Search struct {
	Getenv func(string) string            // nil: os.Getenv
	Glob   func(string) ([]string, error) // nil: filepath.Glob
	Dirs   []string                       // fixed directories after the environment's; nil: SystemDirs()
	Wheels []string                       // glob patterns of wheel library folders; nil: WheelPatterns()
	// LoaderDirs are searched last; nil: LoaderConfDirs(LoaderConf).
	LoaderDirs []string
}

// LoaderConf is the dynamic loader's configuration on Linux.
const LoaderConf = "/etc/ld.so.conf"

// SystemDirs returns the fixed directories searched after the environment's, in order. The
// toolkit's stubs directory is deliberately absent: its libcuda.so is a link-time stub.
func SystemDirs() []string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	dirs := []string{"/usr/local/cuda/lib64", "/usr/local/cuda-*/lib64"}
	if arch != "" {
		dirs = append(dirs, "/usr/lib/"+arch+"-linux-gnu")
	}
	return append(dirs, "/usr/lib64", "/usr/lib", "/usr/lib/wsl/lib")
}

// WheelPatterns returns the glob patterns of Python wheel folders that hold CUDA libraries
// (nvidia-cuda-nvrtc-cu12 puts libnvrtc.so.12 in site-packages/nvidia/cuda_nvrtc/lib; the
// CUDA 13 wheels share site-packages/nvidia/cu13/lib). "~" is the home directory and "$X" an
// environment variable; patterns whose variable is unset are skipped.
func WheelPatterns() []string {
	var out []string
	for _, root := range []string{
		"/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages",
		"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
		"~/.local/lib/python3*/site-packages", "$VIRTUAL_ENV/lib/python3*/site-packages",
		"$CONDA_PREFIX/lib/python3*/site-packages", "~/.pyenv/versions/*/lib/python3*/site-packages",
	} {
		out = append(out, root+"/nvidia/*/lib")
	}
	// conda's cuda-nvrtc and libcufft packages install into the environment's lib.
	return append(out, "$CONDA_PREFIX/lib")
}

// LoaderConfDirs returns the absolute directories named by the dynamic loader's
// configuration file conf and the files it includes (glob patterns, relative to the including
// file's directory), in order; nil when conf cannot be read. Relative entries are dropped.
func LoaderConfDirs(conf string) []string {
	var dirs []string
	seen := map[string]bool{}
	var read func(file string, depth int)
	read = func(file string, depth int) {
		if depth > 8 || seen[file] {
			return
		}
		seen[file] = true
		data, err := os.ReadFile(file)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			f := strings.Fields(line)
			switch {
			case len(f) == 0:
			case f[0] == "include":
				for _, pat := range f[1:] {
					if !filepath.IsAbs(pat) {
						pat = filepath.Join(filepath.Dir(file), pat)
					}
					matches, _ := filepath.Glob(pat)
					for _, m := range matches {
						read(m, depth+1)
					}
				}
			case f[0] == "hwcap":
			default:
				// ldconfig separates directories by blanks, colons or commas; "dir=type" is
				// the old libc5 syntax.
				for _, d := range strings.FieldsFunc(line, func(r rune) bool { return r == ':' || r == ',' || r == ' ' || r == '\t' }) {
					d, _, _ = strings.Cut(d, "=")
					if filepath.IsAbs(d) {
						dirs = append(dirs, filepath.Clean(d))
					}
				}
			}
		}
	}
	read(conf, 0)
	return dirs
}

// place is a directory to search and why it is searched.
type place struct {
	dir    string
	origin string // "$SSMLAB_CUDA_LIB_DIR", "$LD_LIBRARY_PATH", "system", "python", "ld.so.conf"
}

func (s Search) getenv(k string) string {
	if s.Getenv != nil {
		return s.Getenv(k)
	}
	return os.Getenv(k)
}

func (s Search) glob(p string) []string {
	g := s.Glob
	if g == nil {
		g = filepath.Glob
	}
	m, err := g(p)
	if err != nil {
		return nil
	}
	return m
}

// expand resolves a leading "~" and "$VAR"; ok is false when the variable is unset.
func (s Search) expand(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "~/"):
		home := s.getenv("HOME")
		if home == "" {
			return "", false
		}
		return filepath.Join(home, p[2:]), true
	case strings.HasPrefix(p, "$"):
		name, rest, _ := strings.Cut(p[1:], "/")
		v := s.getenv(name)
		if v == "" {
			return "", false
		}
		return filepath.Join(v, rest), true
	}
	return p, true
}

// places returns the directories to search, in order, without repeats, and the entries
// ignored for not being absolute.
func (s Search) places() (out []place, ignored []Attempt) {
	seen := map[string]bool{}
	add := func(dir, origin string) {
		if !filepath.IsAbs(dir) {
			ignored = append(ignored, Attempt{fmt.Sprintf("%q in %s", dir, origin), "not an absolute directory: ignored"})
			return
		}
		dir = filepath.Clean(dir)
		if !seen[dir] {
			seen[dir] = true
			out = append(out, place{dir, origin})
		}
	}
	// addPattern adds a directory, or a glob pattern's matches in newestFirst order.
	addPattern := func(pat, origin string) {
		if !strings.ContainsAny(pat, "*?[") {
			add(pat, origin)
			return
		}
		for _, m := range newestFirst(s.glob(pat)) {
			add(m, origin)
		}
	}
	for _, d := range filepath.SplitList(s.getenv(EnvLibDir)) {
		add(d, "$"+EnvLibDir)
	}
	for _, d := range filepath.SplitList(s.getenv("LD_LIBRARY_PATH")) {
		add(d, "$LD_LIBRARY_PATH")
	}
	dirs := s.Dirs
	if dirs == nil {
		dirs = SystemDirs()
	}
	for _, d := range dirs {
		addPattern(d, "system")
	}
	wheels := s.Wheels
	if wheels == nil {
		wheels = WheelPatterns()
	}
	for _, pat := range wheels {
		p, ok := s.expand(pat)
		if !ok {
			continue
		}
		addPattern(p, "python")
	}
	loader := s.LoaderDirs
	if loader == nil {
		loader = LoaderConfDirs(LoaderConf)
	}
	for _, d := range loader {
		add(d, "ld.so.conf")
	}
	return out, ignored
}

// newestFirst orders glob matches such as /usr/local/cuda-12.4/lib64 by the version numbers
// in them (the last element, lib64, aside), highest first (cuda-12.10 before cuda-12.9),
// then by name.
func newestFirst(paths []string) []string {
	key := func(p string) []int {
		var v []int
		for _, f := range strings.FieldsFunc(filepath.Dir(p), func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(f)
			v = append(v, n)
		}
		return v
	}
	out := slices.Clone(paths)
	slices.SortStableFunc(out, func(a, b string) int {
		if c := slices.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// Attempt is one file discovery looked at and why it was not used.
type Attempt struct {
	Path   string
	Reason string
}

// LibraryError says that a library could not be loaded: which, where discovery looked, and
// what was wrong with the files it found.
type LibraryError struct {
	Library  string
	EnvFile  string
	Searched []string  // directories, in order
	Rejected []Attempt // files that exist but could not be used, and entries not searched
}

func (e *LibraryError) Error() string {
	var b strings.Builder
	b.WriteString(e.Library)
	if len(e.Rejected) > 0 {
		b.WriteString(": ")
		for i, a := range e.Rejected {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", a.Path, a.Reason)
		}
		b.WriteString(" (")
	} else {
		b.WriteString(" not found (")
	}
	const shown = 4
	where := slices.Clone(e.Searched[:min(shown, len(e.Searched))])
	switch n := len(e.Searched) - shown; {
	case n == 1:
		where = append(where, "1 more directory")
	case n > 1:
		where = append(where, fmt.Sprintf("%d more directories", n))
	}
	switch len(where) {
	case 0:
		b.WriteString("nowhere to search")
	case 1:
		b.WriteString("searched " + where[0])
	default:
		b.WriteString("searched " + strings.Join(where[:len(where)-1], ", ") + " and " + where[len(where)-1])
	}
	fmt.Fprintf(&b, "; set %s to the file or %s to its directory)", e.EnvFile, EnvLibDir)
	return b.String()
}

// Handle is a loaded library.
type Handle struct {
	Path   string // the file that was loaded, an absolute path
	Soname Soname
	h      uintptr
}

// symbol is a function variable and the name under which a library exports its function.
type symbol struct {
	ptr  any
	name string
}

// bindAll binds every symbol, failing at the first one that h does not export.
func bindAll(h *Handle, syms []symbol) error {
	for _, sym := range syms {
		if err := bind(h, sym.ptr, sym.name); err != nil {
			return err
		}
	}
	return nil
}

// Find loads lib from the first place that has a usable file. A file is usable when it is a
// regular ELF file that the dynamic loader accepts and that exports lib.Symbol. maxCUDA > 0
// skips sonames of a newer CUDA major version than the driver supports. Find never panics on a
// missing, unreadable or fake file: it returns a *LibraryError that lists where it looked and
// what it rejected. It loads absolute paths only (see Search).
func (s Search) Find(lib Library, maxCUDA int) (*Handle, error) {
	e := &LibraryError{Library: lib.Name, EnvFile: lib.EnvFile}
	if file := s.getenv(lib.EnvFile); file != "" {
		// An explicit file is the only candidate: falling back elsewhere would hide the mistake.
		e.Searched = []string{"$" + lib.EnvFile}
		if !filepath.IsAbs(file) {
			e.Rejected = append(e.Rejected, Attempt{file, "not an absolute path"})
			return nil, e
		}
		h, reason := tryFile(file, lib, Soname{File: filepath.Base(file)})
		if h != nil {
			return h, nil
		}
		if reason == "" {
			reason = "no such file"
		}
		e.Rejected = append(e.Rejected, Attempt{file, reason})
		return nil, e
	}
	places, ignored := s.places()
	for _, p := range places {
		e.Searched = append(e.Searched, p.dir)
		for _, so := range lib.Sonames {
			path := filepath.Join(p.dir, so.File)
			if maxCUDA > 0 && so.CUDAMajor > maxCUDA {
				if _, err := os.Stat(path); err == nil {
					e.Rejected = append(e.Rejected, Attempt{path, fmt.Sprintf("skipped: built for CUDA %d, the driver supports CUDA %d", so.CUDAMajor, maxCUDA)})
				}
				continue
			}
			h, reason := tryFile(path, lib, so)
			if h != nil {
				return h, nil
			}
			if reason != "" {
				e.Rejected = append(e.Rejected, Attempt{path, reason})
			}
		}
	}
	e.Rejected = append(e.Rejected, ignored...)
	return nil, e
}

// tryFile loads path if it is a usable copy of lib. It returns reason "" when the file does
// not exist (nothing to report) and a short reason when it exists but cannot be used.
func tryFile(path string, lib Library, so Soname) (*Handle, string) {
	if !filepath.IsAbs(path) {
		// dlopen would look a name without a slash up in LD_LIBRARY_PATH, whose empty entries
		// mean the working directory.
		return nil, "not an absolute path"
	}
	if reason, exists := checkFile(path); reason != "" || !exists {
		return nil, reason
	}
	h, err := dlopen(path)
	if err != nil {
		return nil, strings.TrimPrefix(oneLine(err.Error()), path+": ") // dlerror repeats the path
	}
	if _, err := dlsym(h, lib.Symbol); err != nil {
		dlclose(h)
		return nil, "does not export " + lib.Symbol
	}
	return &Handle{Path: path, Soname: so, h: h}, ""
}

// checkFile looks at path before the dynamic loader does, so that a directory, a FIFO (which
// would block the loader) or a file that is not ELF gives a clear reason and no surprise.
func checkFile(path string) (reason string, exists bool) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		return oneLine(err.Error()), true
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file", true
	}
	f, err := os.Open(path)
	if err != nil {
		return oneLine(err.Error()), true
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte("\x7fELF")) {
		return "not an ELF shared library", true
	}
	return "", true
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
