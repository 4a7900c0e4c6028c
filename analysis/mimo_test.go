package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// ReduceMIMO's tolerances.
const (
	// mimoFullOrderTol: at full order the reduction is a similarity by the balancing
	// transformation, whose condition √(σ₁/σₙ) (about 100 here) times ε, and the modal basis's
	// (about 7), bound the change; measured 4e-15 and 6e-14, relative L2 over all pairs.
	mimoFullOrderTol = 1e-10
	// mimoBoundSlack: the H∞ error is at most the bound up to rounding of the reduced system
	// (κ·ε relative) and of the transfer matrices on the grid; measured margins are far larger.
	mimoBoundSlack = 1e-9
	// mimoHSVTol, relative, for σᵢ ≥ 1e-3·σ₁: SciPy's sqrt(eig(P·Q)) carries ε·σ₁²/σᵢ² (1e-10
	// there). Measured 1.3e-12.
	mimoHSVTol = 1e-9
)

// layerImpulse is every pair's response, h_oi[t] = Re Σₖ C_ok·pₖᵗ·B_ki + D_oi·δ[t], all
// pairs concatenated.
func layerImpulse(m *filters.MIMO, length int) []float64 {
	var h []float64
	for _, rows := range filtertest.MIMOImpulse(m, length) {
		for _, r := range rows {
			h = append(h, r...)
		}
	}
	return h
}

// layerFreq returns H(e^{jω}) = D + Σₜ h[t]·e^{−jωt}, outputs × inputs: each mode gives
// (c·b/(1 − p·e^{−jω}) + conj(c·b)/(1 − p̄·e^{−jω}))/2.
func layerFreq(m *filters.MIMO, w float64) []complex128 {
	n := len(m.Poles)
	z := cmplx.Exp(complex(0, -w))
	h := make([]complex128, m.Outputs*m.Inputs)
	for o := 0; o < m.Outputs; o++ {
		for i := 0; i < m.Inputs; i++ {
			s := complex(m.D[o*m.Inputs+i], 0)
			for k, p := range m.Poles {
				cb := m.C[o*n+k] * m.B[k*m.Inputs+i]
				s += (cb/(1-p*z) + cmplx.Conj(cb)/(1-cmplx.Conj(p)*z)) / 2
			}
			h[o*m.Inputs+i] = s
		}
	}
	return h
}

// largestSV is the largest singular value of a complex r×c matrix, that of the real
// [[Re, −Im], [Im, Re]] (whose singular values are the complex one's, each twice).
func largestSV(h []complex128, r, c int) float64 {
	x := mat.NewDense(2*r, 2*c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := h[i*c+j]
			x.Set(i, j, real(v))
			x.Set(i, c+j, -imag(v))
			x.Set(r+i, j, imag(v))
			x.Set(r+i, c+j, real(v))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDNone) {
		panic("analysis: SVD failed")
	}
	return svd.Values(nil)[0]
}

func TestReduceMIMOFullOrder(t *testing.T) {
	const length = 512
	rng := rand.New(rand.NewPCG(5, 8))
	for _, rmax := range []float64{0.9, 0.999} {
		m := filtertest.RandomMIMO(rng, 7, 3, 2, rmax)
		red, err := ReduceMIMO(m, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(red.HSV) != 12 || red.Order != 12 {
			t.Fatalf("ρ %g: %d HSV, order %d; want 12 real states (5 pairs, 2 real modes)", rmax, len(red.HSV), red.Order)
		}
		if e := relErr(layerImpulse(red.System, length), layerImpulse(m, length)); e > mimoFullOrderTol {
			t.Errorf("ρ %g: full-order reduction changes the responses by %.3g (cond %.3g)", rmax, e, red.Condition)
		}
		// filters.MIMODiff, from the closed-form finite-horizon Gramians, says the same to
		// its rounding floor (√ε).
		if _, tot, err := filters.MIMODiff(m, red.System, length); err != nil || tot > 1e-7 {
			t.Errorf("ρ %g: MIMODiff of the full-order reduction %.3g, %v", rmax, tot, err)
		}
		if red.Bound != 0 {
			t.Errorf("ρ %g: full order, bound %g", rmax, red.Bound)
		}
	}
}

func TestReduceMIMOBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	m := filtertest.RandomMIMO(rng, 10, 3, 4, 0.98)
	grid := LinearGrid(512)
	for _, order := range []int{1, 2, 3, 5, 8, 12} {
		red, err := ReduceMIMO(m, order)
		if err != nil {
			t.Fatalf("order %d: %v", order, err)
		}
		// At most order real states in at most ⌈order/2⌉ modes: where the truncation has real
		// poles, fewer states.
		if red.Order > order || red.Order < len(red.System.Poles) || len(red.System.Poles) > (order+1)/2 {
			t.Errorf("order %d: kept %d in %d modes", order, red.Order, len(red.System.Poles))
		}
		if got := 2*len(red.System.Poles) - countReal(red.System.Poles); got != red.Order {
			t.Errorf("order %d: %d modes make %d real states", order, len(red.System.Poles), got)
		}
		worst, scale := 0.0, 0.0
		for _, w := range grid {
			h, g := layerFreq(m, w), layerFreq(red.System, w)
			scale = math.Max(scale, largestSV(h, m.Outputs, m.Inputs))
			for i := range h {
				h[i] -= g[i]
			}
			worst = math.Max(worst, largestSV(h, m.Outputs, m.Inputs))
		}
		if worst > red.Bound*(1+mimoBoundSlack)+1e-12*scale {
			t.Errorf("order %d: H∞ error %.6g above the bound %.6g", order, worst, red.Bound)
		}
		// No reduction of order r does better than σ_{r+1} (the grid may miss the peak a little).
		if worst < 0.5*red.HSV[red.Order] {
			t.Errorf("order %d: H∞ error %.6g below σ_{r+1}/2 = %.6g: the grid or the bound is wrong", order, worst, red.HSV[red.Order]/2)
		}
		t.Logf("order %d: kept %d in %d modes: H∞ error %.4g, bound %.4g, σ_{r+1} %.4g, condition %.3g", order, red.Order, len(red.System.Poles), worst, red.Bound, red.HSV[red.Order], red.Condition)
	}
}

func countReal(p []complex128) int {
	c := 0
	for _, z := range p {
		if imag(z) == 0 {
			c++
		}
	}
	return c
}

// mimoFile is a MIMO layer as gen_mimo_hsv.py and bench/mimo_bt_scipy.py write it, with
// SciPy's Hankel singular values where the golden file has them.
type mimoFile struct {
	Inputs  int          `json:"inputs"`
	Outputs int          `json:"outputs"`
	Poles   [][2]float64 `json:"poles"`
	B       [][2]float64 `json:"B"`
	C       [][2]float64 `json:"C"`
	D       []float64    `json:"D"`
	HSV     []float64    `json:"hsv"`
}

// readMIMOFile reads the layer at path.
func readMIMOFile(t testing.TB, path string) (*filters.MIMO, mimoFile) {
	t.Helper()
	var g mimoFile
	numtest.ReadJSON(t, path, &g)
	m, err := filters.NewMIMO(numtest.Complexes(g.Poles), numtest.Complexes(g.B), numtest.Complexes(g.C), g.D, g.Inputs, g.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	return m, g
}

// The golden values come from SciPy: testdata/golden/analysis/gen_mimo_hsv.py.
func TestReduceMIMOGoldenHSV(t *testing.T) {
	m, g := readMIMOFile(t, filepath.Join("..", "testdata", "golden", "analysis", "mimo_hsv.json"))
	red, err := ReduceMIMO(m, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(red.HSV) != len(g.HSV) {
		t.Fatalf("%d Hankel singular values, SciPy %d", len(red.HSV), len(g.HSV))
	}
	worst := 0.0
	for i, want := range g.HSV {
		if want < 1e-3*g.HSV[0] {
			break
		}
		worst = math.Max(worst, math.Abs(red.HSV[i]-want)/want)
	}
	if worst > mimoHSVTol {
		t.Errorf("HSV differ from SciPy's by %.3g relative:\n got %v\nwant %v", worst, red.HSV, g.HSV)
	}
	t.Logf("largest relative difference from SciPy: %.3g", worst)
}

// mimoExactTol is the agreement of ReduceMIMO's Hankel singular values and error bounds
// with the exact values of gen_mimo_hsv_exact.py, relative to each value however small next to
// σ₁. Hammarling's factors keep each entry to a few ulps but for the Householder step that
// turns a row of several columns into one, which cancels between clustered poles: about ε/δ
// relative for each level of a cluster, δ = |p − q|/|1 − p̄·q| between neighbours, 1e-5 in
// these cases (2e-11). Measured 6.4e-11 (mixed_real's σ₁₂ = 2e-13·σ₁); the Gramians formed
// and factored before gave 0 for every σ below 1e-13·σ₁, 1e-3 relative at 6e-8·σ₁, and so
// bounds of 0 for reductions whose exact bound is 3.3e-18 (cluster_r90 at order 8).
const mimoExactTol = 2e-10

// exactHSVCase is a layer with its exact Hankel singular values (nil where not known).
type exactHSVCase struct {
	name string
	m    *filters.MIMO
	hsv  []float64
}

// exactHSVCases reads the layers of gen_mimo_hsv_exact.py.
func exactHSVCases(t *testing.T) []exactHSVCase {
	var g struct {
		Cases []struct {
			Name string `json:"name"`
			mimoFile
		} `json:"cases"`
	}
	numtest.ReadJSON(t, filepath.Join("..", "testdata", "golden", "analysis", "mimo_hsv_exact.json"), &g)
	var out []exactHSVCase
	for _, c := range g.Cases {
		m, err := filters.NewMIMO(numtest.Complexes(c.Poles), numtest.Complexes(c.B), numtest.Complexes(c.C), c.D, c.Inputs, c.Outputs)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, exactHSVCase{c.Name, m, c.HSV})
	}
	return out
}

// TestReduceMIMOExactHSV checks the Hankel singular values of layers whose values span 1e-21
// of the largest (clustered poles near the circle, real poles of one and two states, a pole
// stored with its conjugate, more inputs than states) against mpmath, and the error bound
// 2·Σ_{i>r} σᵢ of every reduction, however small.
func TestReduceMIMOExactHSV(t *testing.T) {
	smallest := 1.0
	for _, c := range exactHSVCases(t) {
		for r := 1; r <= len(c.hsv); r++ {
			red, err := ReduceMIMO(c.m, r)
			if err != nil {
				t.Fatalf("%s order %d: %v", c.name, r, err)
			}
			if len(red.HSV) != len(c.hsv) {
				t.Fatalf("%s: %d Hankel singular values, want %d", c.name, len(red.HSV), len(c.hsv))
			}
			if r == 1 {
				for i, want := range c.hsv {
					if e := math.Abs(red.HSV[i]-want) / want; !(e <= mimoExactTol) {
						t.Errorf("%s: σ%d = %.16g, exact %.16g (%.2g of σ₁): relative error %.2g", c.name, i+1, red.HSV[i], want, want/c.hsv[0], e)
					}
				}
				smallest = math.Min(smallest, c.hsv[len(c.hsv)-1]/c.hsv[0])
			}
			want := 0.0
			for _, s := range c.hsv[red.Order:] {
				want += 2 * s
			}
			if e := math.Abs(red.Bound-want) / want; want > 0 && !(e <= mimoExactTol) || want == 0 && red.Bound != 0 {
				t.Errorf("%s order %d: kept %d, bound %.16g, exact 2Σσ = %.16g", c.name, r, red.Order, red.Bound, want)
			}
		}
	}
	if smallest > 1e-20 {
		t.Errorf("the smallest value is %.2g of σ₁: the cases no longer reach below 1e-20", smallest)
	}
}

// mimoRankTol is how close a reduction at the numerical rank is to its layer, relative L2
// (filters.MIMODiff, sample by sample): the rounding of the modal basis (condition up to
// 3.3e2 near the circle) over the response. Measured 6.9e-15 to 7.0e-13, and 5e-15 to
// 5.2e-13 for the same layers truncated with every state kept.
const mimoRankTol = 1e-11

// TestReduceMIMORank: a reduction asked for every state keeps those whose Hankel singular
// value is above n·ε·σ₁ (Rank, derived here from the exact values of
// gen_mimo_hsv_exact.py), is within rounding of the layer, and says why it kept fewer, with
// the first value dropped and the threshold, or the modes its real poles need. Two modes at
// one pole of a one-input, one-output layer have σ₃ = 0: the cut keeps its Σ^{-1/2} finite.
func TestReduceMIMORank(t *testing.T) {
	cases := append(exactHSVCases(t), exactHSVCase{"two modes at 0.5 and one at 0.8", &filters.MIMO{Poles: []complex128{0.5, 0.5, 0.8}, B: []complex128{1, 2, 1}, C: []complex128{1, 3, 1}, D: []float64{0}, Inputs: 1, Outputs: 1}, nil})
	cut := 0
	for _, c := range cases {
		n := 2*len(c.m.Poles) + 1 // more than the real states: every state asked for
		red, err := ReduceMIMO(c.m, n)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		states := len(red.HSV)
		rank := states
		if c.hsv != nil {
			rank = 0
			for _, s := range c.hsv {
				if s > float64(states)*eps*c.hsv[0] {
					rank++
				}
			}
		} else {
			rank = 2 // the modes at 0.5 are one state of the Hankel operator
		}
		if red.Rank != rank || red.Order > rank {
			t.Errorf("%s: rank %d, order %d; want rank %d", c.name, red.Rank, red.Order, rank)
		}
		rho := red.System.MaxRadius()
		length := int(math.Log(1e-17)/math.Log(rho)) + 1
		if _, e, err := filters.MIMODiff(c.m, red.System, length); err != nil || !(e <= mimoRankTol) {
			t.Errorf("%s: order %d is %.3g from the layer over %d samples (%v)", c.name, red.Order, e, length, err)
		}
		why := red.Shortfall(n)
		if rank < states {
			cut++
			first := "0" // the modes at 0.5: exactly
			if c.hsv != nil {
				first = fmt.Sprintf("%.2g·σ₁", c.hsv[rank]/c.hsv[0])
			}
			for _, want := range []string{
				fmt.Sprintf("σ%d = %s", rank+1, first),
				fmt.Sprintf("at or below the numerical rank's threshold n·ε·σ₁ = %.2g·σ₁ (n = %d real states)", float64(states)*eps, states),
			} {
				if !strings.Contains(why, want) {
					t.Errorf("%s: shortfall %q, want %q", c.name, why, want)
				}
			}
		}
		if red.Order < min(n, rank) && !strings.Contains(why, "real poles, each a mode for one state") {
			t.Errorf("%s: order %d of rank %d, shortfall %q: the modes' budget is not named", c.name, red.Order, rank, why)
		}
		if red.Order >= n && why != "" || red.Order < n && why == "" {
			t.Errorf("%s: order %d of %d asked, shortfall %q", c.name, red.Order, n, why)
		}
	}
	if cut < 4 {
		t.Errorf("only %d cases are cut by the numerical rank", cut)
	}
}

func TestReduceMIMORefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	m := filtertest.RandomMIMO(rng, 4, 2, 2, 0.9)
	if _, err := ReduceMIMO(m, 0); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("order 0: %v", err)
	}
	un := filtertest.RandomMIMO(rng, 4, 2, 2, 0.9)
	un.Poles[2] = 1.25
	_, err := ReduceMIMO(un, 2)
	if !errors.Is(err, ErrUnstable) || !strings.Contains(err.Error(), "mode 2") || !strings.Contains(err.Error(), "|p| = 1.25") {
		t.Errorf("pole 1.25 at mode 2: %v", err)
	}
}

// The condition refusal, on a reduced A that is a Jordan block to working accuracy (the
// eigenvalues 0.5 and 0.5 + 1e-12 coupled by 1: eigenvectors at an angle of 1e-12). A diagonal
// layer does not reach it through ReduceMIMO: the Gramians of two modes that close carry
// residues of 1/δ and lose the small Hankel singular value to cancellation first, so the
// numerical rank drops the state and the kept order is 1.
func TestModalLayerRefusesNearJordan(t *testing.T) {
	m := &filters.MIMO{Poles: []complex128{0.5, 0.6}, B: []complex128{1, 1}, C: []complex128{1, 1}, D: []float64{0}, Inputs: 1, Outputs: 1}
	a := mat.NewDense(2, 2, []float64{0.5, 1, 0, 0.5 + 1e-12})
	_, cond, err := modalLayer(a, mat.NewDense(2, 1, []float64{0, 1}), mat.NewDense(1, 2, []float64{1, 0}), m)
	var ce *filters.ConditionError
	if !errors.As(err, &ce) || !errors.Is(err, filters.ErrIllConditioned) || ce.Condition <= MIMOCondLimit || cond != ce.Condition {
		t.Errorf("a near Jordan block: condition %.3g, %v", cond, err)
	}
}

// A layer whose B or C is zero has no controllable or observable state: its reduction is D,
// and its shortfall says so.
func TestReduceMIMOZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m := filtertest.RandomMIMO(rng, 3, 2, 2, 0.9)
	for i := range m.C {
		m.C[i] = 0
	}
	red, err := ReduceMIMO(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	if red.Order != 0 || len(red.System.Poles) != 0 || red.System.D[1] != m.D[1] {
		t.Errorf("order %d, %d modes, D %v", red.Order, len(red.System.Poles), red.System.D)
	}
	if why := red.Shortfall(2); red.Rank != 0 || !strings.Contains(why, "all 0") {
		t.Errorf("rank %d, shortfall %q", red.Rank, why)
	}
}

// BenchmarkReduceMIMO reduces a layer of the LRU's size: 256 modes (512 real states), 128
// inputs and outputs, to 64 real states.
func BenchmarkReduceMIMO(b *testing.B) {
	m := filtertest.RandomMIMO(rand.New(rand.NewPCG(2, 2)), 256, 128, 128, 0.999)
	for b.Loop() {
		if _, err := ReduceMIMO(m, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReduceMIMOFile reduces the layer bench/mimo_bt_scipy.py writes (an LRU layer as
// minimal-LRU initialises it, 256 modes, 128 inputs and outputs) to order 64, beside that
// script's SciPy timing of the same reduction; it logs the leading Hankel singular values,
// which the script prints too. Skipped without SSMLAB_MIMO_JSON.
func BenchmarkReduceMIMOFile(b *testing.B) {
	path := os.Getenv("SSMLAB_MIMO_JSON")
	if path == "" {
		b.Skip("SSMLAB_MIMO_JSON names the layer bench/mimo_bt_scipy.py wrote")
	}
	m, _ := readMIMOFile(b, path)
	var red *MIMOReduction
	var err error
	for b.Loop() {
		if red, err = ReduceMIMO(m, 64); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("leading Hankel singular values: %.10g", red.HSV[:5])
}

// ReduceMIMOWithin finds the smallest order whose every output is within the tolerance: its
// errors are MIMODiff's and within it, one order less (asked) misses it, a tighter tolerance
// needs at least as many states, and a tolerance beyond the largest order allowed is
// reported as not reached, at that order.
func TestReduceMIMOWithin(t *testing.T) {
	const length = 512
	rng := rand.New(rand.NewPCG(4, 4))
	m := filtertest.RandomMIMO(rng, 12, 3, 3, 0.97)
	prev := 0
	for _, tol := range []float64{0.5, 0.2, 0.05, 0.01, 1e-4} {
		red, errs, reached, err := ReduceMIMOWithin(m, tol, length, 24)
		if err != nil {
			t.Fatalf("tol %g: %v", tol, err)
		}
		want, _, err := filters.MIMODiff(m, red.System, length)
		if err != nil || !reached || !slices.Equal(want, errs) || slices.Max(errs) > tol {
			t.Fatalf("tol %g: order %d, errors %v (MIMODiff %v, %v), reached %v", tol, red.Order, errs, want, err, reached)
		}
		if red.Order < prev {
			t.Errorf("tol %g: order %d below the looser tolerance's %d", tol, red.Order, prev)
		}
		prev = red.Order
		if red.Order > 1 {
			// An order asked keeps at most that many states (fewer where real poles take
			// modes): one state fewer than found, asked, misses the tolerance.
			less, err := ReduceMIMO(m, red.Order-1)
			if err != nil {
				t.Fatal(err)
			}
			refit, _, err := RefitMIMO(m, less.System, length)
			if err != nil {
				t.Fatal(err)
			}
			if e, _, _ := filters.MIMODiff(m, refit, length); slices.Max(e) <= tol {
				t.Errorf("tol %g: order %d reaches it too (%.3g), below the %d found", tol, red.Order-1, slices.Max(e), red.Order)
			}
		}
		t.Logf("tol %g: order %d in %d modes, worst output %.3g", tol, red.Order, len(red.System.Poles), slices.Max(errs))
	}
	red, errs, reached, err := ReduceMIMOWithin(m, 1e-6, length, 4)
	if err != nil || reached || red.Order > 4 || slices.Max(errs) <= 1e-6 {
		t.Errorf("1e-6 within order 4: order %d, reached %v, errors %v, %v", red.Order, reached, errs, err)
	}
	if _, _, _, err := ReduceMIMOWithin(m, 0, length, 4); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("tolerance 0: %v", err)
	}
}

// RefitMIMO's C step is the least-squares solution over the samples: its closed-form normal
// equations agree with the problem solved from the simulated responses (a QR least squares
// on every output's samples), and the refit never raises the total error, lowers it where
// balanced truncation is not L2-optimal, keeps an exact reduction exact and refuses a layer
// of another D.
func TestRefitMIMO(t *testing.T) {
	const length = 96
	m := filtertest.RandomMIMO(rand.New(rand.NewPCG(3, 3)), 16, 4, 5, 0.98)
	red, err := ReduceMIMO(m, 8)
	if err != nil {
		t.Fatal(err)
	}
	r := red.System
	// The C step from the samples: for output o the columns Re φ_k and −Im φ_k over (i, t).
	c, _, ok := refitRows(m.Poles, m.B, m.C, r.Poles, r.B, m.Inputs, m.Outputs, length)
	if !ok {
		t.Fatal("the C step failed")
	}
	h := filtertest.MIMOImpulse(m, length)
	nr := len(r.Poles)
	// A real mode's Im c multiplies Im φ = 0: no column (the refit holds it at 0).
	unseen := func(k int) bool { return imag(r.Poles[k]) == 0 && realRow(r.B[k*m.Inputs:(k+1)*m.Inputs]) }
	col := make([]int, 2*nr) // the column of Re c_k (k) and Im c_k (nr + k), or −1
	cols := 0
	for j := range col {
		col[j] = -1
		if j < nr || !unseen(j-nr) {
			col[j], cols = cols, cols+1
		}
	}
	a := mat.NewDense(m.Inputs*length, cols, nil)
	for i := range m.Inputs {
		for k, q := range r.Poles {
			phi := r.B[k*m.Inputs+i]
			for tt := range length {
				a.Set(i*length+tt, col[k], real(phi))
				if col[nr+k] >= 0 {
					a.Set(i*length+tt, col[nr+k], -imag(phi))
				}
				phi *= q
			}
		}
	}
	worst := 0.0
	for o := range m.Outputs {
		y := mat.NewVecDense(m.Inputs*length, nil)
		for i := range m.Inputs {
			for tt := range length {
				v := h[o][i][tt]
				if tt == 0 {
					v -= m.D[o*m.Inputs+i]
				}
				y.SetVec(i*length+tt, v)
			}
		}
		var x mat.VecDense
		if err := x.SolveVec(a, y); err != nil {
			t.Fatal(err)
		}
		for k := range nr {
			want := complex(x.AtVec(col[k]), 0)
			if col[nr+k] >= 0 {
				want += complex(0, x.AtVec(col[nr+k]))
			}
			worst = math.Max(worst, cmplx.Abs(c[o*nr+k]-want)/(1+cmplx.Abs(want)))
		}
	}
	if worst > 1e-8 {
		t.Errorf("the closed-form C step is %.3g from the least squares over the samples", worst)
	}
	_, before, _ := filters.MIMODiff(m, r, length)
	refit, _, err := RefitMIMO(m, r, length)
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := filters.MIMODiff(m, refit, length)
	if !(after < 0.99*before) {
		t.Errorf("the refit took the error from %.6g to %.6g", before, after)
	}
	t.Logf("C step %.2g from the samples' least squares; the error %.4g → %.4g", worst, before, after)
	full, err := ReduceMIMO(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	if refit, _, err := RefitMIMO(m, full.System, length); err != nil {
		t.Fatal(err)
	} else if _, e, _ := filters.MIMODiff(m, refit, length); e > 1e-9 {
		t.Errorf("an exact reduction refitted is %.3g from the layer", e)
	}
	other := *r
	other.D = make([]float64, len(r.D))
	if _, _, err := RefitMIMO(m, &other, length); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("another D: %v", err)
	}
}
