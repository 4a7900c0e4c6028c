package analysis

import (
	"encoding/json"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// TestKernelGolden checks KernelResponse and KernelGroupDelay against SciPy's freqz and
// group_delay (testdata/golden/analysis/gen_kernel_delay.py), and that the grid points SciPy
// cannot give a delay at (zeros of H on the unit circle) are masked and finite here.
func TestKernelGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "analysis", "kernel_delay.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Omega   []float64 `json:"omega"`
		Kernels []struct {
			Name       string       `json:"name"`
			H          [][2]float64 `json:"H"`
			Kernel     []float64    `json:"h"`
			GroupDelay []float64    `json:"group_delay"`
			Singular   []int        `json:"singular"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, k := range g.Kernels {
		r := KernelResponse(k.Kernel, g.Omega)
		gd := KernelGroupDelay(k.Kernel, g.Omega)
		singular := map[int]bool{}
		for _, i := range k.Singular {
			singular[i] = true
		}
		scale := 0.0
		for _, v := range k.Kernel {
			scale += math.Abs(v)
		}
		for i := range g.Omega {
			want := complex(k.H[i][0], k.H[i][1])
			if d := cmplx.Abs(r.H[i] - want); d > goldenHTol*scale {
				t.Errorf("%s: H[%d] = %v, SciPy %v", k.Name, i, r.H[i], want)
			}
			if math.IsNaN(gd.Tau[i]) || math.IsInf(gd.Tau[i], 0) {
				t.Errorf("%s: τ[%d] = %v", k.Name, i, gd.Tau[i])
			}
			if gd.Masked[i] != singular[i] {
				t.Errorf("%s: point %d masked %v, SciPy singular %v", k.Name, i, gd.Masked[i], singular[i])
			}
			if !singular[i] && math.Abs(gd.Tau[i]-k.GroupDelay[i]) > goldenGDTol*(1+math.Abs(k.GroupDelay[i])) {
				t.Errorf("%s: τ[%d] = %.15g, SciPy %.15g", k.Name, i, gd.Tau[i], k.GroupDelay[i])
			}
		}
	}
	// The zero kernel: masked everywhere, τ = 0, one note.
	gd := KernelGroupDelay([]float64{0, 0}, g.Omega)
	for i := range gd.Tau {
		if !gd.Masked[i] || gd.Tau[i] != 0 {
			t.Fatalf("zero kernel: point %d masked %v τ %v", i, gd.Masked[i], gd.Tau[i])
		}
	}
	if len(gd.Notes) != 1 {
		t.Errorf("zero kernel: %d notes", len(gd.Notes))
	}
}

// kernelDelayTol bounds the difference between KernelGroupDelay and GroupDelayOf on a short
// FIR: both are sums of a few terms of size ≤ 10 (a few hundred roundings at most).
const kernelDelayTol = 1e-12

// TestKernelDelayMatchesRoots: the exact derivative of a kernel's phase equals the sum over
// the zeros of its FIR transfer function, and a pure delay of 3 samples is 3 everywhere.
func TestKernelDelayMatchesRoots(t *testing.T) {
	h := []float64{1, -0.5, 0.25, 2, 0.1}
	fir, err := filters.NewTransferFunction(make([]float64, len(h)-1), h[1:], h[0])
	if err != nil {
		t.Fatal(err)
	}
	omega := LinearGrid(33)
	want, err := GroupDelayOf(fir, omega)
	if err != nil {
		t.Fatal(err)
	}
	got := KernelGroupDelay(h, omega)
	for i := range omega {
		if math.Abs(got.Tau[i]-want.Tau[i]) > kernelDelayTol || got.Masked[i] {
			t.Fatalf("τ(%g) = %.15g, from the roots %.15g", omega[i], got.Tau[i], want.Tau[i])
		}
	}
	for _, v := range KernelGroupDelay([]float64{0, 0, 0, 1}, omega).Tau {
		if math.Abs(v-3) > kernelDelayTol {
			t.Fatalf("delay of z⁻³: %g, want 3", v)
		}
	}
}
