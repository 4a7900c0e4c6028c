package arrays_test

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// goldenDir holds the files written by NumPy (testdata/golden/numpy/gen_numpy.py) and the
// values they hold, in expected.json.
const goldenDir = "../../testdata/golden/numpy"

// sameBits reports whether got holds exactly the golden values.
func sameBits(got *arrays.Array, want numtest.GoldenArray) bool {
	if !slices.Equal(got.Shape, want.Shape) || len(got.Data) != len(want.Data) {
		return false
	}
	for i := range got.Data {
		if math.Float64bits(got.Data[i]) != math.Float64bits(want.Data[i]) {
			return false
		}
	}
	return true
}

// TestGoldenNumPy reads every file NumPy wrote (and the safetensors files built to the
// published format) and compares each array bit for bit with the values NumPy recorded.
func TestGoldenNumPy(t *testing.T) {
	files := numtest.NumPyExpected(t, goldenDir)
	if len(files) < 20 {
		t.Fatalf("expected.json lists %d files", len(files))
	}
	for fname, want := range files {
		t.Run(fname, func(t *testing.T) {
			af, err := arrays.Open(filepath.Join(goldenDir, fname))
			if err != nil {
				t.Fatal(err)
			}
			defer af.Close()
			var names []string
			for _, in := range af.Arrays() {
				if in.Supported {
					names = append(names, in.Name)
				}
			}
			var wantNames []string
			for name := range want {
				wantNames = append(wantNames, name)
			}
			sort.Strings(names)
			sort.Strings(wantNames)
			if !slices.Equal(names, wantNames) {
				t.Errorf("supported arrays %q, want %q", names, wantNames)
			}
			for name, w := range want {
				a, err := af.Read(name)
				if err != nil {
					t.Fatalf("%q: %v", name, err)
				}
				if !sameBits(a, w) {
					t.Errorf("%q: got shape %v %v, want %v %v", name, a.Shape, head(a.Data), w.Shape, head(w.Data))
				}
			}
		})
	}
}

func head(v []float64) []float64 { return v[:min(len(v), 4)] }

func TestGoldenFormats(t *testing.T) {
	for fname, want := range map[string]arrays.Format{
		"k_f8_le.npy":          arrays.FormatNPY,
		"multi_compressed.npz": arrays.FormatNPZ,
		"rtf.safetensors":      arrays.FormatSafetensors,
		"bank.csv":             arrays.FormatCSV,
		"bank_savetxt.txt":     arrays.FormatCSV,
	} {
		af, err := arrays.Open(filepath.Join(goldenDir, fname))
		if err != nil {
			t.Fatal(err)
		}
		if af.Format != want {
			t.Errorf("%s: format %s, want %s", fname, af.Format, want)
		}
		af.Close()
	}
}

// TestGoldenUnsupported checks the messages for files NumPy wrote with dtypes ssmlab does
// not read: each names the dtype.
func TestGoldenUnsupported(t *testing.T) {
	for _, tc := range []struct{ file, name, want string }{
		{"int64.npy", "", `dtype "<i8" (signed integer)`},
		{"rtf.safetensors", "step", `tensor "step" has dtype I64`},
	} {
		af, err := arrays.Open(filepath.Join(goldenDir, tc.file))
		if err == nil {
			_, err = af.Read(tc.name)
			af.Close()
		}
		if !errors.Is(err, arrays.ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrUnsupported naming %s", tc.file, err, tc.want)
		}
	}
}

// TestGoldenComplex: a complex array reads as real and imaginary parts in a trailing
// dimension 2, and is listed so.
func TestGoldenComplex(t *testing.T) {
	af, err := arrays.Open(filepath.Join(goldenDir, "complex.npy"))
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	if in := af.Arrays()[0]; !in.Complex || !slices.Equal(in.Shape, []int{2, 2}) {
		t.Errorf("listing %+v, want complex of shape (2, 2)", in)
	}
	a, err := af.Read("")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Shape, []int{2, 2}) || !slices.Equal(a.Data, []float64{1, 2, 3, -1}) {
		t.Errorf("read %v %v, want (2, 2) [1 2 3 -1] (NumPy: [1+2j, 3-1j])", a.Shape, a.Data)
	}
}

func TestGoldenMetadataAndListing(t *testing.T) {
	af, err := arrays.Open(filepath.Join(goldenDir, "rtf.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	if got := af.Metadata()["format"]; got != "pt" {
		t.Errorf(`metadata["format"] = %q, want "pt"`, got)
	}
	infos := af.Arrays()
	if len(infos) != 4 || infos[3].Name != "step" || infos[3].DType != "int64" || infos[3].Supported || len(infos[3].Shape) != 0 {
		t.Errorf("listing = %+v", infos)
	}
	if _, err := af.Read("nope"); !errors.Is(err, arrays.ErrNotFound) || !strings.Contains(err.Error(), `"layers.0.filter.ab"`) {
		t.Errorf("missing tensor: %v", err)
	}
}
