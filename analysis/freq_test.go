package analysis

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

func TestGrids(t *testing.T) {
	if g := LinearGrid(1); len(g) != 1 || g[0] != 0 {
		t.Errorf("LinearGrid(1) = %v", g)
	}
	g := LinearGrid(5)
	if g[0] != 0 || g[4] != math.Pi || math.Abs(g[2]-math.Pi/2) > 1e-16 {
		t.Errorf("LinearGrid(5) = %v", g)
	}
	lg := LogGrid(4, 1e-3)
	if lg[0] != 1e-3 || lg[3] != math.Pi || math.Abs(lg[1]/lg[0]-lg[2]/lg[1]) > 1e-12 {
		t.Errorf("LogGrid = %v", lg)
	}
	if len(LinearGrid(0)) != 0 || len(LogGrid(0, 0.1)) != 0 || LogGrid(1, 0.1)[0] != 0.1 {
		t.Error("empty or single-point grids")
	}
	for _, bad := range []func(){func() { LogGrid(3, 0) }, func() { LogGrid(3, 4) }, func() { LinearGrid(-1) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}

// TestFreqResponseModal checks the package's modal evaluation against filters' for every
// form of one system: the pair-at-once sum and the reciprocal divisions lose nothing.
func TestFreqResponseModal(t *testing.T) {
	f := randomStable(rand.New(rand.NewPCG(1, 9)), 20, 0.98)
	w := LogGrid(300, 1e-4)
	want := f.FreqResponse(w)
	for _, form := range filters.Forms {
		g, _, err := filters.Convert(f, form)
		if err != nil {
			t.Fatal(err)
		}
		r := FreqResponse(g, w)
		if e := numtest.RelErrC(r.H, want); e > 1e-11 {
			t.Errorf("%s: H differs by %.3g", form, e)
		}
		for i := range w {
			if r.Masked[i] || math.IsNaN(r.MagDB[i]) || math.IsNaN(r.Phase[i]) {
				t.Fatalf("%s: point %d masked or NaN", form, i)
			}
		}
	}
}

// TestFreqResponseCircle: a pole on the unit circle at a grid point is masked (H infinite),
// a zero there floors the magnitude; every number stays finite. Only z = 1 (ω = 0) is exactly
// on the grid: e^{jπ} = -1 + 1.2e-16i, so a zero at -1 leaves H small but finite (a pole there:
// TestFreqResponsePoleOnGrid).
func TestFreqResponseCircle(t *testing.T) {
	w := LinearGrid(9)
	pole, err := filters.NewZPK([]complex128{-1}, []complex128{1, 0.5}, 1, 0) // (z + 1)/((z - 1)(z - 0.5))
	if err != nil {
		t.Fatal(err)
	}
	zero, err := filters.NewZPK([]complex128{1}, []complex128{0.5}, 1, 0) // (z - 1)/(z - 0.5)
	if err != nil {
		t.Fatal(err)
	}
	r := FreqResponse(pole, w)
	if !r.Masked[0] || r.H[0] != 0 || len(r.Notes) != 1 || r.Notes[0].Root != "pole" {
		t.Fatalf("pole: masks %v, H %v, notes %+v", r.Masked, r.H, r.Notes)
	}
	hi := math.Inf(-1)
	for i := 1; i < len(w); i++ {
		hi = math.Max(hi, r.MagDB[i])
	}
	if r.MagDB[0] != hi {
		t.Errorf("MagDB at the pole = %v, want the largest finite value %v", r.MagDB[0], hi)
	}
	if r.Phase[0] != 0 {
		t.Errorf("masked first point: phase %v, want 0 (unwrapping starts after it)", r.Phase[0])
	}
	// A stable filter of gain beyond float64: the same mask, called an overflow, not a pole.
	huge, err := filters.NewZPK(nil, []complex128{0.5}, 1e308, 0)
	if err != nil {
		t.Fatal(err)
	}
	ro := FreqResponse(huge, w)
	if !ro.Masked[0] || ro.H[0] != 0 || len(ro.Notes) != 1 || ro.Notes[0].Root != "" || !ro.Notes[0].Overflow {
		t.Errorf("overflow: masks %v, H %v, notes %+v", ro.Masked, ro.H, ro.Notes)
	}
	r2 := FreqResponse(zero, w)
	if !r2.Masked[0] || r2.MagDB[0] != MagFloorDB || len(r2.Notes) != 1 || r2.Notes[0].Root != "zero" {
		t.Errorf("zero: masks %v, MagDB %v, notes %+v", r2.Masked, r2.MagDB, r2.Notes)
	}
	for _, rr := range []*Response{r, r2} {
		for i := range w {
			for _, v := range []float64{rr.MagDB[i], rr.Phase[i], real(rr.H[i]), imag(rr.H[i])} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("point %d is not finite", i)
				}
			}
		}
	}
	// A gain of zero: every point is H = 0.
	r3 := FreqResponse(mustDense(t, nil, nil, nil, 0), w)
	for i := range w {
		if !r3.Masked[i] || r3.MagDB[i] != MagFloorDB {
			t.Fatalf("zero gain: %+v", r3)
		}
	}
}

// TestFreqResponsePoleOnGrid: a pole on the circle at a grid point other than ω = 0 is
// masked as a pole in every form, as z = 1 is, although rounding leaves H finite there
// (1/(e^{j·fl(π)} + 1) = -8.2e15j, QA finding 6); a grid point 1e-9 from it is not.
func TestFreqResponsePoleOnGrid(t *testing.T) {
	w := LinearGrid(5) // 0, π/4, π/2, 3π/4, π
	// 1/(z + 1) and 1/(z² + 1).
	minus1, err := filters.NewTransferFunction([]float64{1}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pmj, err := filters.NewZPK(nil, []complex128{1i, -1i}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fs []filters.Filter
	for _, f := range []filters.Filter{minus1, pmj} {
		for _, form := range filters.Forms {
			g, _, err := filters.Convert(f, form)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, g)
		}
	}
	for k, f := range fs {
		at := 4 // ω = π
		if k >= len(filters.Forms) {
			at = 2 // ω = π/2
		}
		r := FreqResponse(f, w)
		for i := range w {
			if r.Masked[i] != (i == at) {
				t.Errorf("%s (order %d): masks %v, H %v", f.Form(), f.Order(), r.Masked, r.H)
				break
			}
		}
		if len(r.Notes) != 1 || r.Notes[0].Index != at || r.Notes[0].Root != "pole" || r.H[at] != 0 {
			t.Errorf("%s (order %d): notes %+v, H %v", f.Form(), f.Order(), r.Notes, r.H)
		}
	}
	near := FreqResponse(minus1, []float64{0, math.Pi - 1e-9})
	if near.Masked[1] || cmplx.Abs(near.H[1]) < 1e8 || cmplx.Abs(near.H[1]) > 1e10 {
		t.Errorf("1e-9 from the pole: masked %v, H %v", near.Masked[1], near.H[1])
	}
}

// TestPhaseUnwrap: a pure delay z^-k has phase -kω exactly when the grid resolves it.
func TestPhaseUnwrap(t *testing.T) {
	f, err := filters.NewZPK(nil, []complex128{0, 0, 0, 0, 0, 0, 0}, 1, 0) // z^-7
	if err != nil {
		t.Fatal(err)
	}
	w := LinearGrid(200)
	r := FreqResponse(f, w)
	for i, v := range r.Phase {
		if math.Abs(v+7*w[i]) > 1e-12 {
			t.Fatalf("phase at ω = %v is %v, want %v", w[i], v, -7*w[i])
		}
	}
}

// TestGroupDelayNumeric checks τ against -dφ/dω by central differences of the unwrapped phase.
func TestGroupDelayNumeric(t *testing.T) {
	f := randomStable(rand.New(rand.NewPCG(2, 9)), 8, 0.9)
	const h = 1e-5
	w := LinearGrid(50)[1:49]
	g, err := GroupDelayOf(f, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range w {
		ph := FreqResponse(f, []float64{x - h, x + h}).Phase
		num := -(ph[1] - ph[0]) / (2 * h)
		// Central differences: error h²·τ'''/6 plus eps·|φ|/h ≈ 1e-10.
		if math.Abs(g.Tau[i]-num) > 1e-6*(1+math.Abs(num)) {
			t.Errorf("τ(%v) = %v, numeric %v", x, g.Tau[i], num)
		}
	}
}

// TestGroupDelayNearCircle: zeros on and just inside the unit circle keep τ finite; on the
// circle the grid point is masked with the two-sided limit, which its neighbours approach.
func TestGroupDelayNearCircle(t *testing.T) {
	theta := math.Pi / 4
	for _, rz := range []float64{1, 1 - 1e-12, 1 + 1e-12, 0.999} {
		zs := []complex128{cmplx.Rect(rz, theta), cmplx.Rect(rz, -theta)}
		f, err := filters.NewZPK(zs, []complex128{0.5i, -0.5i}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		w := LinearGrid(9) // ω = π/4 is grid point 2
		g, err := GroupDelayOf(f, w)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range g.Tau {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("r=%v: τ[%d] = %v", rz, i, v)
			}
		}
		onCircle := math.Abs(rz-1) <= CircleTol
		if g.Masked[2] != onCircle {
			t.Errorf("r=%v: masked = %v, want %v", rz, g.Masked[2], onCircle)
		}
		if onCircle {
			// The zeros contribute -1/2 each; the poles ±0.5i give Re(z/(z - p)).
			z := cmplx.Rect(1, theta)
			want := real(z/(z-0.5i)) + real(z/(z+0.5i)) - 1
			if math.Abs(g.Tau[2]-want) > 1e-14 || len(g.Notes) != 1 || g.Notes[0].Root != "zero" || g.Notes[0].Index != 2 {
				t.Errorf("r=%v: τ at the zero = %v, want the limit %v; notes %+v", rz, g.Tau[2], want, g.Notes)
			}
		}
	}
}

func TestGroupDelaySpecial(t *testing.T) {
	w := LinearGrid(5)
	// Order 0: τ = 0; a zero gain is masked everywhere.
	for _, d := range []float64{2, 0} {
		g, err := GroupDelayOf(mustDense(t, nil, nil, nil, d), w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			if g.Tau[i] != 0 || g.Masked[i] != (d == 0) {
				t.Errorf("gain %v: τ %v masked %v", d, g.Tau, g.Masked)
			}
		}
	}
	// B = 0: H is the constant D.
	g, err := GroupDelayOf(mustDense(t, [][]float64{{0.5}}, []float64{0}, []float64{1}, 3), w)
	if err != nil || g.Tau[1] != 0 || g.Masked[1] {
		t.Errorf("constant H: %v %v", g, err)
	}
	// A ZPK with an offset: H = 1 + 1/(z - 0.5) = (z + 0.5)/(z - 0.5): one zero at -0.5.
	f, _ := filters.NewZPK(nil, []complex128{0.5}, 1, 1)
	g, err = GroupDelayOf(f, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range w {
		z := cmplx.Rect(1, x)
		want := real(z/(z-0.5)) - real(z/(z+0.5))
		if math.Abs(g.Tau[i]-want) > 1e-14 {
			t.Errorf("ZPK with offset: τ(%v) = %v, want %v", x, g.Tau[i], want)
		}
	}
	if zs, err := Zeros(f); err != nil || len(zs) != 1 || cmplx.Abs(zs[0]+0.5) > 1e-14 {
		t.Errorf("Zeros of the ZPK with offset = %v, %v; want [-0.5]", zs, err)
	}
}

// TestSteadyStateNote: a frequency response of a filter that is not stable says that H on the
// unit circle is not the response it settles to, in StabilityOf's words of its spectral
// radius; a stable one says nothing (analysis QA N6).
func TestSteadyStateNote(t *testing.T) {
	for _, c := range []struct {
		rho  float64
		want string
	}{
		{0.9, ""},
		{1 - 2*filters.MarginalTol, ""},
		{1, "marginal, ρ = 1: H on the unit circle is not its steady-state response"},
		{1.2, "unstable, ρ = 1.2: H on the unit circle is not its steady-state response"},
	} {
		// a pole at ρ beside one at 0.5, in the zpk form and as a dense realisation
		z, err := filters.NewZPK(nil, []complex128{0.5, complex(c.rho, 0)}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := filters.Convert(z, filters.FormDense)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []filters.Filter{z, d} {
			if got := SteadyStateNote(f); got != c.want {
				t.Errorf("ρ = %v, %s: %q, want %q", c.rho, f.Form(), got, c.want)
			}
		}
	}
}
