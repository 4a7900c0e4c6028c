// Package numtest holds what the tests of several packages share to read golden files,
// compare numbers and list what a test left in a directory. It imports nothing of ssmlab but
// internal/cplx (which imports nothing), so that the tests of filters and internal/fft can
// use it too (internal/filtertest builds filters: a filters test importing it would be a
// cycle). The relative error of real vectors is filters.RelDiff.
package numtest

import (
	"encoding/json"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/internal/cplx"
)

// RelErrC returns ‖got − want‖₂/‖want‖₂ (absolute when want is zero), by running
// hypotenuses, so that neither sum overflows.
func RelErrC(got, want []complex128) float64 {
	var num, den float64
	for i := range want {
		num = math.Hypot(num, cmplx.Abs(got[i]-want[i]))
		den = math.Hypot(den, cmplx.Abs(want[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// MaxAbsDiff returns max |a[i] − b[i]|.
func MaxAbsDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// Complexes returns the complex numbers of golden files, which JSON holds as [re, im] pairs.
func Complexes(v [][2]float64) []complex128 { return cplx.FromPairs(v) }

// RootsDist compares roots as multisets: it pairs each root of want, in order, with the
// nearest unused root of got and returns the largest distance (+Inf when the counts differ).
func RootsDist(got, want []complex128) float64 {
	return rootsDist(got, want, func(complex128) float64 { return 1 })
}

// RootsRelDist is RootsDist with each distance relative to 1 + |wanted root|.
func RootsRelDist(got, want []complex128) float64 {
	return rootsDist(got, want, func(w complex128) float64 { return 1 + cmplx.Abs(w) })
}

func rootsDist(got, want []complex128, scale func(complex128) float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	used := make([]bool, len(got))
	worst := 0.0
	for _, w := range want {
		best, dist := -1, math.Inf(1)
		for j, g := range got {
			if !used[j] && cmplx.Abs(g-w) < dist {
				best, dist = j, cmplx.Abs(g-w)
			}
		}
		used[best] = true
		worst = math.Max(worst, dist/scale(w))
	}
	return worst
}

// ReadJSON decodes the JSON file at path, a golden file, into v; it fails t when it cannot.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// GoldenArray is an array of a golden file: its shape and its values in C order.
type GoldenArray struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// NumPyExpected reads expected.json in dir, testdata/golden/numpy: the arrays that
// gen_numpy.py wrote to the files beside it, by file and array name.
func NumPyExpected(t testing.TB, dir string) map[string]map[string]GoldenArray {
	t.Helper()
	var exp struct {
		Files map[string]map[string]GoldenArray `json:"files"`
	}
	ReadJSON(t, filepath.Join(dir, "expected.json"), &exp)
	return exp.Files
}

// DirNames lists the names in dir, sorted, for checking what a command or a write left
// behind there.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
