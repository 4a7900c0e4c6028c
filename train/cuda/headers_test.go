package cuda

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The bindings against CUDA's C headers: testdata/cuda_headers.txt holds what CUDA 11.8's
// cuda.h, nvrtc.h and cufft.h declare for every function this package binds and every
// constant it names (written by testdata/cuda_headers.py from Debian's nvidia-cuda-dev), so
// that a wrong argument count, width or constant fails here, on any machine, rather than as
// a crash or a wrong result on a GPU.

// headerFunc is one function as the headers declare it: the kinds (ptr, i32, u64, f32, e32
// for an enum of 32 bits, void) of its result and arguments.
type headerFunc struct {
	result string
	args   []string
	proto  string
}

type headerConst struct {
	enum  string
	value int
}

type headerTable struct {
	funcs  map[string]headerFunc
	absent map[string]bool
	consts map[string]headerConst
}

func readHeaderTable(t *testing.T) headerTable {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "cuda_headers.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := headerTable{funcs: map[string]headerFunc{}, absent: map[string]bool{}, consts: map[string]headerConst{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		kinds, proto, _ := strings.Cut(text, " | ")
		fields := strings.Fields(kinds)
		switch {
		case fields[0] == "func" && len(fields) >= 3:
			h.funcs[fields[1]] = headerFunc{result: fields[2], args: fields[3:], proto: proto}
		case fields[0] == "absent" && len(fields) == 2:
			h.absent[fields[1]] = true
		case fields[0] == "enum" && len(fields) == 4:
			v, err := strconv.Atoi(fields[3])
			if err != nil {
				t.Fatalf("cuda_headers.txt:%d: %v", line, err)
			}
			h.consts[fields[2]] = headerConst{enum: fields[1], value: v}
		default:
			t.Fatalf("cuda_headers.txt:%d: cannot read %q", line, text)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(h.funcs) == 0 || len(h.consts) == 0 {
		t.Fatalf("cuda_headers.txt: %d functions, %d constants", len(h.funcs), len(h.consts))
	}
	return h
}

// goKind is how purego passes a Go argument or result of type t, in the table's terms.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int32:
		return "i32"
	case reflect.Uint32:
		return "u32"
	case reflect.Int64:
		return "i64"
	case reflect.Uint64:
		return "u64"
	case reflect.Uint8:
		return "u8"
	case reflect.Float32:
		return "f32"
	case reflect.Float64:
		return "f64"
	case reflect.Uintptr:
		return "uintptr"
	case reflect.Pointer, reflect.UnsafePointer, reflect.String: // a string goes as char*
		return "ptr"
	}
	return "Go " + t.String()
}

// compatible reports whether a C value of kind c can be passed as a Go value of kind g: the
// same class and width, an enum as either 32-bit integer, and a pointer the Go side treats
// as an opaque 64-bit handle or device address (uintptr, uint64) as a pointer.
func compatible(c, g string) bool {
	switch c {
	case g:
		return true
	case "e32":
		return g == "i32" || g == "u32"
	case "ptr":
		return g == "uintptr" || g == "u64"
	}
	return false
}

// TestBindingsMatchHeaders compares every func field of Driver, NVRTC and CUFFT (named
// after the C function it is bound to) with the headers' prototype.
func TestBindingsMatchHeaders(t *testing.T) {
	h := readHeaderTable(t)
	bound := map[string]bool{}
	for _, v := range []any{Driver{}, NVRTC{}, CUFFT{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type.Kind() != reflect.Func {
				continue
			}
			bound[f.Name] = true
			c, ok := h.funcs[f.Name]
			switch {
			case h.absent[f.Name]:
				t.Errorf("%s.%s: CUDA 11.8's headers do not declare %s", typ.Name(), f.Name, f.Name)
				continue
			case !ok:
				t.Errorf("%s.%s is not in testdata/cuda_headers.txt: run testdata/cuda_headers.py", typ.Name(), f.Name)
				continue
			}
			ft := f.Type
			if ft.NumIn() != len(c.args) {
				t.Errorf("%s: %d arguments in Go, %d in C: %s", f.Name, ft.NumIn(), len(c.args), c.proto)
				continue
			}
			for j, ck := range c.args {
				if g := goKind(ft.In(j)); !compatible(ck, g) {
					t.Errorf("%s: argument %d is %s in Go (%s), %s in C: %s", f.Name, j+1, ft.In(j), g, ck, c.proto)
				}
			}
			switch {
			case c.result == "void" && ft.NumOut() != 0:
				t.Errorf("%s: returns %d values in Go, void in C", f.Name, ft.NumOut())
			case c.result != "void" && (ft.NumOut() != 1 || !compatible(c.result, goKind(ft.Out(0)))):
				t.Errorf("%s: returns %v in Go, %s in C: %s", f.Name, ft, c.result, c.proto)
			}
		}
	}
	for name := range h.funcs {
		if !bound[name] {
			t.Errorf("cuda_headers.txt has %s, which nothing binds: run testdata/cuda_headers.py", name)
		}
	}
}

// bindRE finds the pairs of a func field and the C name bound to it in the package's source.
var bindRE = regexp.MustCompile(`&\w+\.(\w+), "(\w+)"`)

// TestBindNamesMatchFields: each func field is bound to the C function it is named after
// (TestBindingsMatchHeaders checks the field's type against that name), or to its _v2
// where the headers give the two one prototype.
func TestBindNamesMatchFields(t *testing.T) {
	h := readHeaderTable(t)
	// CUDA 12.8 added cuEventElapsedTime_v2 with cuEventElapsedTime's prototype (cuda.h).
	sameAs := map[string]string{"cuEventElapsedTime_v2": "cuEventElapsedTime"}
	n := 0
	for _, file := range []string{"driver.go", "nvrtc.go", "cufft.go"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bindRE.FindAllStringSubmatch(string(src), -1) {
			field, name := m[1], m[2]
			n++
			if name != field && sameAs[name] != field {
				t.Errorf("%s: field %s is bound to %s", file, field, name)
			}
			if _, ok := h.funcs[name]; !ok && !h.absent[name] {
				t.Errorf("%s: %s is not in testdata/cuda_headers.txt: run testdata/cuda_headers.py", file, name)
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d bindings in the source; the pattern no longer matches how bind is called", n)
	}
}

// cNameRE is a comment naming the C enumerator a Go constant stands for.
var cNameRE = regexp.MustCompile(`^((?:CU|CUDA|NVRTC|CUFFT)_[A-Z0-9_]+)\b`)

// TestConstantsMatchHeaders: every integer constant of the package names its C enumerator
// in its comment, and has the headers' value.
func TestConstantsMatchHeaders(t *testing.T) {
	h := readHeaderTable(t)
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	checked := 0
	for _, file := range files {
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Values) != 1 || len(vs.Names) != 1 {
					continue
				}
				lit, ok := vs.Values[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.INT {
					continue
				}
				goName := vs.Names[0].Name
				m := cNameRE.FindStringSubmatch(strings.TrimSpace(vs.Comment.Text()))
				if m == nil {
					t.Errorf("%s: constant %s = %s does not name its C enumerator in a comment", fset.Position(vs.Pos()), goName, lit.Value)
					continue
				}
				v, err := strconv.ParseInt(lit.Value, 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				c, ok := h.consts[m[1]]
				switch {
				case !ok:
					t.Errorf("%s: %s is not in testdata/cuda_headers.txt: run testdata/cuda_headers.py", goName, m[1])
				case int(v) != c.value:
					t.Errorf("%s = %d, but the headers' %s is %d", goName, v, m[1], c.value)
				}
				checked++
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked %d constants", checked)
	}
}

// TestStatusNamesMatchHeaders: every status the headers define gets its own name from
// DriverErrorName, NVRTCErrorName and CUFFTErrorName.
func TestStatusNamesMatchHeaders(t *testing.T) {
	h := readHeaderTable(t)
	namers := map[string]func(int) string{
		"CUresult": DriverErrorName, "nvrtcResult": NVRTCErrorName, "cufftResult": CUFFTErrorName,
	}
	count := map[string]int{}
	for name, c := range h.consts {
		namer, ok := namers[c.enum]
		if !ok {
			continue
		}
		count[c.enum]++
		if got := namer(c.value); got != name {
			t.Errorf("%s %d is named %s, the headers call it %s", c.enum, c.value, got, name)
		}
	}
	for enum := range namers {
		if count[enum] < 10 {
			t.Errorf("%d values of %s in the table", count[enum], enum)
		}
	}
}
