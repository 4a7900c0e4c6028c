package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// methodTol bounds the difference between the impulse algorithms on twoState (|h| ≤ 1,
// 64 samples): they agree to a few eps (analysis checks 1e-10 up to n = 256).
const methodTol = 1e-13

// twoStateZeros are the zeros of twoState's H: z² + 3.2z - 1.43 = 0.
var twoStateZeros = []complex128{complex(-1.6-math.Sqrt(3.99), 0), complex(-1.6+math.Sqrt(3.99), 0)}

func TestAnalyzeStep(t *testing.T) {
	path := twoState(t)
	m := decodeAnalysis(t, run(t, "", "analyze", path, "--step", "20"))
	if got := keys(m); !slices.Equal(got, []string{"form", "name", "order", "step"}) {
		t.Errorf("keys = %v", got)
	}
	want := twoStateImpulse(20)
	for i := 1; i < len(want); i++ {
		want[i] += want[i-1]
	}
	if d := numtest.MaxAbsDiff(get[[]float64](t, m, "step"), want); d > exactTol {
		t.Errorf("step differs from the running sum by %.3g", d)
	}
}

func TestAnalyzeMethods(t *testing.T) {
	path := twoState(t)
	want := twoStateImpulse(64)
	for _, method := range []string{"recurrence", "fft", "vandermonde", "scan"} {
		m := decodeAnalysis(t, run(t, "", "analyze", path, "--impulse", "64", "--method", method))
		if d := numtest.MaxAbsDiff(get[[]float64](t, m, "impulse"), want); d > methodTol {
			t.Errorf("--method %s: impulse differs by %.3g", method, d)
		}
		m = decodeAnalysis(t, run(t, "", "analyze", path, "--step", "5", "--method", method))
		if n := len(get[[]float64](t, m, "step")); n != 5 {
			t.Errorf("--method %s: %d step samples", method, n)
		}
	}
}

func TestAnalyzeAutoLength(t *testing.T) {
	path := twoState(t)
	auto := analysis.LengthForRadius(math.Sqrt(0.17), 2, 0) // ⌈log 1e-12/log √0.17⌉ + 1
	for _, c := range []struct {
		args []string
		key  string
		n    int
	}{
		{[]string{"--auto-length"}, "impulse", auto},
		{[]string{"--auto-length", "--impulse", "10"}, "impulse", 10},
		{[]string{"--auto-length", "--impulse", "100000"}, "impulse", auto},
		{[]string{"--auto-length", "--step", "100000"}, "step", auto},
	} {
		m := decodeAnalysis(t, run(t, "", append([]string{"analyze", path}, c.args...)...))
		if n := len(get[[]float64](t, m, c.key)); n != c.n {
			t.Errorf("%v: %d samples of %s, want %d", c.args, n, c.key, c.n)
		}
	}
	if auto < 20 || auto > 40 {
		t.Errorf("auto length %d is not ≈ 12/log₁₀(1/0.412) + 1 = 32", auto)
	}
	// In a bank each channel gets its own length.
	fast := writeText(t, t.TempDir(), "bank.json", `{"channels": [
		{"form": "diagonal", "poles": [[0.5, 0]], "residues": [[1, 0]], "h0": 0},
		{"form": "diagonal", "poles": [[0.9, 0]], "residues": [[1, 0]], "h0": 0}]}`)
	m := decodeAnalysis(t, run(t, "", "analyze", fast, "--auto-length"))
	chans := get[[]map[string]json.RawMessage](t, m, "channels")
	if len(get[[]float64](t, chans[0], "impulse")) != analysis.LengthForRadius(0.5, 1, 0) ||
		len(get[[]float64](t, chans[1], "impulse")) != analysis.LengthForRadius(0.9, 1, 0) {
		t.Errorf("bank lengths %d, %d", len(get[[]float64](t, chans[0], "impulse")), len(get[[]float64](t, chans[1], "impulse")))
	}
}

func TestAnalyzeGroupDelay(t *testing.T) {
	path := twoState(t)
	m := decodeAnalysis(t, run(t, "", "analyze", path, "--group-delay", "9"))
	if got := keys(m); !slices.Equal(got, []string{"form", "group_delay", "name", "order"}) {
		t.Errorf("keys = %v", got)
	}
	var gd struct {
		Omega []float64
		Tau   []float64
		Notes []analysis.Note
	}
	if err := json.Unmarshal(m["group_delay"], &gd); err != nil {
		t.Fatal(err)
	}
	if len(gd.Omega) != 9 || gd.Omega[8] != math.Pi || len(gd.Tau) != 9 || gd.Notes != nil {
		t.Fatalf("group_delay = %+v", gd)
	}
	for i, w := range gd.Omega {
		z := cmplx.Rect(1, w)
		want := real(z/(z-complex(0.4, 0.1))) + real(z/(z-complex(0.4, -0.1)))
		for _, q := range twoStateZeros {
			want -= real(z / (z - q))
		}
		if math.Abs(gd.Tau[i]-want) > 1e-12 {
			t.Errorf("τ(%g) = %v, want %v", w, gd.Tau[i], want)
		}
	}
	// A notch: zeros on the unit circle at ω = ±π/2 (grid point 2 of 5): finite, annotated.
	notch := writeText(t, t.TempDir(), "notch.json", `{"form": "zpk", "zeros": [[0, 1], [0, -1]], "poles": [[0, 0.9], [0, -0.9]], "gain": 1, "h0": 0}`)
	r := run(t, "", "analyze", notch, "--group-delay", "5", "--freq", "5")
	m = decodeAnalysis(t, r)
	if err := json.Unmarshal(m["group_delay"], &gd); err != nil {
		t.Fatal(err)
	}
	if len(gd.Notes) != 1 || gd.Notes[0].Index != 2 || gd.Notes[0].Root != "zero" || math.Abs(gd.Tau[2]-9.526315789473683) > 1e-12 {
		t.Errorf("notch: %s", m["group_delay"])
	}
}

func TestAnalyzeNorms(t *testing.T) {
	path := twoState(t)
	doc, err := readDoc(path)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeAnalysis(t, run(t, "", "analyze", path, "--h2", "--hsv"))
	if got := keys(m); !slices.Equal(got, []string{"form", "h2", "hsv", "name", "order"}) {
		t.Errorf("keys = %v", got)
	}
	h := twoStateImpulse(200)
	sum := 0.0
	for _, v := range h {
		sum += v * v
	}
	if h2 := get[float64](t, m, "h2"); math.Abs(h2-math.Sqrt(sum)) > exactTol {
		t.Errorf("h2 = %v, (Σh²)^½ = %v", h2, math.Sqrt(sum))
	}
	want, err := analysis.HankelSV(doc.Filter)
	if err != nil {
		t.Fatal(err)
	}
	if got := get[[]float64](t, m, "hsv"); len(got) != 2 || numtest.MaxAbsDiff(got, want.Values) != 0 {
		t.Errorf("hsv = %v, want %v", got, want.Values)
	}

	// Unstable: --hsv separates the unstable pole, --h2 fails naming it.
	dir := t.TempDir()
	un := writeText(t, dir, "un.json", `{"form": "diagonal", "poles": [[1.5, 0], [0.5, 0]], "residues": [[1, 0], [2, 0]], "h0": 0}`)
	m = decodeAnalysis(t, run(t, "", "analyze", un, "--hsv"))
	if hsv, uns := get[[]float64](t, m, "hsv"), get[[][2]float64](t, m, "hsv_unstable"); len(hsv) != 1 || len(uns) != 1 || uns[0] != [2]float64{1.5, 0} {
		t.Errorf("unstable --hsv: %s", run(t, "", "analyze", un, "--hsv").stdout)
	}
	r := run(t, "", "analyze", un, "--h2")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "un.json: H2 norm: not stable: pole 1.5+0i (|p| = 1.5) lies on or outside the unit circle") {
		t.Errorf("unstable --h2: %v", r)
	}
}

func TestAnalyzeReduce(t *testing.T) {
	path := twoState(t)
	dir := t.TempDir()
	m := decodeAnalysis(t, run(t, "", "analyze", path, "--reduce", "1"))
	var red struct {
		Order      int
		ErrorBound float64 `json:"error_bound"`
		Filter     json.RawMessage
		Output     string
	}
	if err := json.Unmarshal(m["reduce"], &red); err != nil {
		t.Fatal(err)
	}
	doc, err := filterfile.Unmarshal(red.Filter)
	if err != nil {
		t.Fatalf("the reduced filter does not read back: %v\n%s", err, red.Filter)
	}
	if red.Order != 1 || doc.Filter.Order() != 1 || doc.Filter.Form() != filters.FormDense || red.ErrorBound <= 0 || red.Output != "" {
		t.Errorf("reduce = %+v", red)
	}
	// The bound holds on the circle.
	w := analysis.LinearGrid(513)
	hr := doc.Filter.FreqResponse(w)
	for i, x := range w {
		if d := cmplx.Abs(twoStateH(cmplx.Rect(1, x)) - hr[i]); d > red.ErrorBound*(1+1e-9) {
			t.Fatalf("|H - H_1| = %v at ω = %v above the bound %v", d, x, red.ErrorBound)
		}
	}

	// -o writes the reduced filter (a bank for a bank) and names it.
	out := filepath.Join(dir, "red.json")
	m = decodeAnalysis(t, run(t, "", "analyze", path, "--reduce", "1", "-o", out))
	red.Filter = nil
	if err := json.Unmarshal(m["reduce"], &red); err != nil || red.Output != out || red.Filter != nil {
		t.Errorf("reduce with -o = %s", m["reduce"])
	}
	// named as a reduction, not with the input's name (a preset's recipe rebuilds the input;
	// analysis QA N3)
	if d, err := readDoc(out); err != nil || d.Filter.Order() != 1 || d.Name != "balanced truncation to order 1 of two" {
		t.Errorf("-o file: %+v, %v", d, err)
	}
	src, _ := readDoc(path)
	bank, _ := filters.NewBank([]filters.Filter{src.Filter, src.Filter, src.Filter})
	bpath := writeDoc(t, dir, "bank.json", filters.Document{Bank: bank})
	bout := filepath.Join(dir, "bank-red.json")
	decodeAnalysis(t, run(t, "", "analyze", bpath, "--reduce", "0", "-o", bout, "--h2"))
	if d, err := readDoc(bout); err != nil || d.Bank == nil || len(d.Bank.Channels) != 3 || d.Bank.Channels[2].Order() != 0 || d.Name != "balanced truncation to order 0" {
		t.Errorf("bank -o file: %+v, %v", d, err)
	}
	// Order 2 of a 2-state filter: nothing to drop.
	m = decodeAnalysis(t, run(t, "", "analyze", path, "--reduce", "5"))
	if err := json.Unmarshal(m["reduce"], &red); err != nil || red.Order != 2 || red.ErrorBound != 0 {
		t.Errorf("reduce 5: %s", m["reduce"])
	}
}

// TestAnalyzeJordanHSV: a Jordan block at 0.99 (QA finding 2) prints its five Hankel
// singular values (mpmath, testdata/golden/analysis/gramian.json), not [7.2631e9, …, 0], and
// its reduction a nonzero bound; the same block in a rotated basis, whose Schur form rounds the
// 5-fold pole apart, is refused with its estimated error.
func TestAnalyzeJordanHSV(t *testing.T) {
	dir := t.TempDir()
	j5 := writeText(t, dir, "j5.json", `{"form": "dense", "A": [[0.99, 1, 0, 0, 0], [0, 0.99, 1, 0, 0], [0, 0, 0.99, 1, 0], [0, 0, 0, 0.99, 1], [0, 0, 0, 0, 0.99]], "B": [1, 1, 1, 1, 1], "C": [1, 0, 0, 0, 0], "D": 0}`)
	m := decodeAnalysis(t, run(t, "", "analyze", j5, "--hsv", "--reduce", "4"))
	var hsv []float64
	var red struct {
		ErrorBound float64 `json:"error_bound"`
	}
	if json.Unmarshal(m["hsv"], &hsv) != nil || json.Unmarshal(m["reduce"], &red) != nil {
		t.Fatalf("%s", m)
	}
	want := []float64{7373538871.847729, 2868808113.5824122, 613733575.2478465, 71593749.46134768, 3634466.120746967}
	for i, w := range want {
		if i >= len(hsv) || math.Abs(hsv[i]-w) > 1e-10*w {
			t.Fatalf("hsv = %v, want %v", hsv, want)
		}
	}
	if math.Abs(red.ErrorBound-2*want[4]) > 1e-9*want[4] {
		t.Errorf("error_bound %v, want 2σ₅ = %v", red.ErrorBound, 2*want[4])
	}
	var g struct {
		Cases []map[string]json.RawMessage
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "analysis", "gramian.json"))
	if err != nil || json.Unmarshal(data, &g) != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range g.Cases {
		if string(c["name"]) != `"rotjordan6"` {
			continue
		}
		found = true
		var a [][]float64
		var b, cv []float64
		if json.Unmarshal(c["A"], &a) != nil || json.Unmarshal(c["B"], &b) != nil || json.Unmarshal(c["C"], &cv) != nil {
			t.Fatal("rotjordan6")
		}
		f, err := filters.NewDense(a, b, cv, 0)
		if err != nil {
			t.Fatal(err)
		}
		path := writeDoc(t, dir, "rot.json", filters.Document{Filter: f})
		r := run(t, "", "analyze", path, "--hsv")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "rot.json: the Hankel singular values: ill-conditioned: estimated error ") ||
			!strings.Contains(r.stderr, "of σ₁, above the documented 1e-06") {
			t.Errorf("rotated Jordan block: %+v", r)
		}
	}
	if !found {
		t.Error("no rotjordan6 in gramian.json")
	}
}

// TestAnalyzeForce: a tf with a 5-fold pole at 0.99 (gramian.json's tfrepeated5) has an H2
// norm and Hankel singular values whose estimated error is above 1e-6. Without --force analyze
// exits 1, prints and writes nothing; with it, it prints them with their estimated error and
// a warning, writes -o OUT, and exits 0. --force does not print an unstable filter's H2 norm.
func TestAnalyzeForce(t *testing.T) {
	dir := t.TempDir()
	tf5 := writeText(t, dir, "tf5.json", `{"form": "tf", "a": [-4.95, 9.800999999999998, -9.70299, 4.8029800499999995, -0.9509900498999999], "b": [0, 0, 0, 0, 1], "h0": 0}`)
	const exactH2, exactSigma1 = 370687887.08020157, 7305446619.388149 // mpmath, gramian.json
	out := filepath.Join(dir, "red.json")
	for _, args := range [][]string{{"--h2"}, {"--hsv"}, {"--reduce", "3", "-o", out}} {
		r := run(t, "", append([]string{"analyze", tf5}, args...)...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "ill-conditioned: estimated error ") || strings.Contains(r.stderr, "warning") {
			t.Errorf("%v without --force: %v", args, r)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v without --force wrote %s (%v)", args, out, err)
		}
	}

	r := run(t, "", "analyze", tf5, "--h2", "--hsv", "--reduce", "3", "-o", out, "--force")
	if r.code != 0 {
		t.Fatalf("--force: %v", r)
	}
	for _, key := range []string{"h2", "hsv", "reduce"} {
		if !strings.Contains(r.stderr, "warning: "+filepath.Join(dir, "tf5.json")+": ") || !strings.Contains(r.stderr, "(estimated_error."+key+")") {
			t.Errorf("--force: no warning for %s: %q", key, r.stderr)
		}
	}
	var got struct {
		H2     float64             `json:"h2"`
		HSV    []float64           `json:"hsv"`
		Reduce struct{ Order int } `json:"reduce"`
		Est    map[string]float64  `json:"estimated_error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(got.Est) != 3 {
		t.Fatalf("estimated_error = %v, want h2, hsv and reduce", got.Est)
	}
	for key, e := range got.Est {
		if !(e > filters.MaxRelError && e < 1) {
			t.Errorf("estimated_error.%s = %g, want above %g", key, e, filters.MaxRelError)
		}
	}
	// The printed values are the computed ones, within their estimated error of the exact.
	if rel := math.Abs(got.H2-exactH2) / exactH2; rel > got.Est["h2"] {
		t.Errorf("h2 = %.15g, exact %.15g: off by %.2g, above its estimate %.2g", got.H2, exactH2, rel, got.Est["h2"])
	}
	if len(got.HSV) != 5 || math.Abs(got.HSV[0]-exactSigma1)/exactSigma1 > got.Est["hsv"] {
		t.Errorf("hsv = %v, σ₁ exact %.15g", got.HSV, exactSigma1)
	}
	if got.Reduce.Order != 3 {
		t.Errorf("reduce order %d, want 3", got.Reduce.Order)
	}
	doc, err := readDoc(out)
	if err != nil || doc.Filter == nil || doc.Filter.Order() != 3 {
		t.Errorf("--force -o %s: %v, %v", out, doc, err)
	}

	// An accurate result prints no estimated_error; an unstable filter's H2 norm is not an
	// accuracy refusal, and --force does not print it.
	m := decodeAnalysis(t, run(t, "", "analyze", writeDoc(t, dir, "good.json", filters.Document{Filter: testFilter(t)}), "--h2", "--force"))
	if _, ok := m["estimated_error"]; ok {
		t.Errorf("accurate result: %s", m["estimated_error"])
	}
	un := writeText(t, dir, "un.json", `{"form": "diagonal", "poles": [[1.5, 0], [0.5, 0]], "residues": [[1, 0], [2, 0]], "h0": 0}`)
	if r := run(t, "", "analyze", un, "--h2", "--force"); r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "not stable") || strings.Contains(r.stderr, "warning") {
		t.Errorf("unstable H2 with --force: %v", r)
	}
}

func TestAnalyzeNewBadInput(t *testing.T) {
	dir := t.TempDir()
	good := twoState(t)
	un := writeText(t, dir, "un.json", `{"form": "diagonal", "poles": [[1.5, 0], [0.5, 0]], "residues": [[1, 0], [2, 0]], "h0": 0}`)
	big := writeText(t, dir, "big.json", `{"form": "dense", "A": [[10]], "B": [1], "C": [1], "D": 0}`)
	integ := writeText(t, dir, "integ.json", `{"form": "tf", "a": [-1], "b": [1], "h0": 0}`)
	// Stable (pole 0.5) but of a gain beyond float64: the H2 norm was +Inf ("json: unsupported
	// value: +Inf"), the Hankel singular values NaN, and H's overflow was called a pole.
	huge := writeText(t, dir, "huge.json", `{"form": "dense", "A": [[0.5]], "B": [1e200], "C": [1e200], "D": 0}`)
	defective := writeText(t, dir, "defective.json", `{"form": "dense", "A": [[0.5, 1], [0, 0.5]], "B": [1, 1], "C": [1, 0], "D": 0}`)
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"step 0", []string{"analyze", good, "--step", "0"}, 2, []string{"--step 0", "1048576"}},
		{"group delay too large", []string{"analyze", good, "--group-delay", "1048577"}, 2, []string{"--group-delay 1048577"}},
		{"unknown method", []string{"analyze", good, "--method", "horner"}, 2, []string{"--method", `"horner"`, "recurrence, fft, vandermonde, scan"}},
		{"negative order", []string{"analyze", good, "--reduce", "-1"}, 2, []string{"--reduce -1"}},
		{"-o without --reduce", []string{"analyze", good, "-o", filepath.Join(dir, "x.json")}, 2, []string{"-o", "--reduce"}},
		{"-o over the input", []string{"analyze", good, "--reduce", "1", "-o", good}, 2, []string{"is also an input", "another file"}},
		// It printed the reduced filter and then the analysis: two JSON documents on stdout.
		{"-o stdout", []string{"analyze", good, "--reduce", "1", "-o", "-"}, 2, []string{"-o -", "reduce.filter"}},
		{"overflowing step", []string{"analyze", big, "--step", "400"}, 1, []string{"big.json", "step[310] is +Inf", "unstable", "--step 310"}},
		// It said "b̃[0] is -Inf", an internal quantity, with no hint.
		{"overflowing fft", []string{"analyze", big, "--impulse", "400", "--method", "fft"}, 1, []string{"big.json", "the fft method overflows float64 within the 400 samples asked", "unstable (spectral radius 10)", "near sample 30", "--method recurrence"}},
		// It said "kernel[1] is NaN: … the response overflows float64; --impulse 1 stops before
		// it": the response is 0, 1, 1, …, and the fft method's grid holds the pole.
		{"fft of an integrator", []string{"analyze", integ, "--impulse", "8", "--method", "fft"}, 1, []string{"integ.json", "8-point grid", "a pole lies on it (ω = 0π)", "the recurrence computes"}},
		{"modal method on a defective filter", []string{"analyze", defective, "--impulse", "8", "--method", "vandermonde"}, 1, []string{"defective.json", "impulse", "defective"}},
		{"reduce below the unstable part", []string{"analyze", un, "--reduce", "0"}, 1, []string{"un.json", "--reduce 0", "1.5"}},
		{"huge h2", []string{"analyze", huge, "--h2"}, 1, []string{"huge.json: the H2 norm is about 1.15e+400: beyond float64's range"}},
		{"huge hsv", []string{"analyze", huge, "--hsv"}, 1, []string{"huge.json: Hankel singular value σ1 is about 1.33e+400: beyond float64's range"}},
		{"huge reduce", []string{"analyze", huge, "--reduce", "1"}, 1, []string{"--reduce 1: Hankel singular value σ1 is about 1.33e+400"}},
		{"huge freq", []string{"analyze", huge, "--freq", "2"}, 1, []string{"H at omega[0] = 0 is beyond float64's range, with no pole there"}},
		{"integrator freq", []string{"analyze", integ, "--freq", "2"}, 1, []string{"H at omega[0] = 0 is infinite: a pole lies on the unit circle there"}},
		// It printed H = [1, -8165619676597696]: 1/(e^{j·fl(π)} + 1), a rounding artefact.
		{"pole at -1 freq", []string{"analyze", writeText(t, dir, "neg.json", `{"form": "tf", "a": [1], "b": [1], "h0": 0}`), "--freq", "3"}, 1, []string{"neg.json: H at omega[2] = 3.14159 is infinite: a pole lies on the unit circle there"}},
		{"huge to tf", []string{"convert", huge, "--to", "tf"}, 1, []string{"dense → tf", "not representable: its coefficient b[0] overflows float64's range"}},
		{"unstable h2 in a bank", []string{"analyze", writeText(t, dir, "ubank.json", `{"channels": [{"form": "tf", "a": [-0.5], "b": [1], "h0": 0}, {"form": "tf", "a": [-2], "b": [1], "h0": 0}]}`), "--h2"}, 1, []string{"ubank.json: channel 1: H2 norm", "pole 2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", c.args...)
			if r.code != c.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "ssmlab: ") {
				t.Errorf("want exit %d, one stderr line and no stdout: %v", c.code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr = %q, want it to contain %q", r.stderr, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
		t.Error("a usage error wrote the -o file")
	}
}

func TestAnalyzeHelpNewFlags(t *testing.T) {
	r := run(t, "", "analyze", "--help")
	// "--properties and": the list of the flags that print only their sections lacked it
	for _, w := range []string{"--step L", "--group-delay N", "--hsv", "--h2", "--reduce R", "--method", "--auto-length", `"step"`, "group_delay", "error_bound", "--properties and --auto-length", "an integrator's z = 1"} {
		if !strings.Contains(r.stdout, strings.Trim(w, `"`)) {
			t.Errorf("analyze --help does not mention %s", w)
		}
	}
}

// TestAnalyzeProperties: the leaky integrator h[t] = 0.1·0.9^t has Montel sum 0.9, DC gain
// 1 and memory 1 + ⌈log(1e-12)/log(0.9)⌉ = 264: its peak over t ≥ 1 (D = h[0] does not count)
// is h[1], and h[t]/h[1] = 0.9^(t−1) stays at or below 1e-12 from t − 1 = ⌈log(1e-12)/log 0.9⌉
// = 263 on (where the peak was h[0], the memory was 263); an integrator is
// marginal, with no memory and no finite DC gain; a memory beyond the samples measured is
// null, with its lower bound.
func TestAnalyzeProperties(t *testing.T) {
	dir := t.TempDir()
	type props struct {
		Stability string       `json:"stability"`
		Offending [][2]float64 `json:"offending_poles"`
		Montel    float64      `json:"montel_sum"`
		Memory    int          `json:"memory"`
		DCGain    *float64     `json:"dc_gain"`
	}
	read := func(r result) props {
		var out struct{ Properties props }
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("%v", r)
		}
		return out.Properties
	}
	leaky := writeText(t, dir, "leaky.json", `{"form": "tf", "a": [-0.9], "b": [0.09], "h0": 0.1}`)
	p := read(run(t, "", "analyze", leaky, "--properties"))
	wantMemory := 1 + int(math.Ceil(math.Log(1e-12)/math.Log(0.9)))
	if p.Stability != "stable" || math.Abs(p.Montel-0.9) > 1e-15 || p.DCGain == nil || math.Abs(*p.DCGain-1) > 1e-12 || p.Memory != wantMemory {
		t.Errorf("leaky integrator: %+v (memory want %d)", p, wantMemory)
	}
	integ := writeText(t, dir, "integ.json", `{"form": "tf", "a": [-1], "b": [1], "h0": 0}`)
	p = read(run(t, "", "analyze", integ, "--properties"))
	if p.Stability != "marginal" || len(p.Offending) != 1 || p.Offending[0] != [2]float64{1, 0} || p.Memory != -1 || p.DCGain != nil {
		t.Errorf("integrator: %+v", p)
	}
	// A pole at 0.99999 decays to 1e-12 after 2.8e6 samples: not within the 65536 measured,
	// which was printed as the memory.
	slow := writeText(t, dir, "slow.json", `{"form": "tf", "a": [-0.99999], "b": [1], "h0": 0}`)
	r := run(t, "", "analyze", slow, "--properties")
	if r.code != 0 || !strings.Contains(r.stdout, `"memory":null,"memory_at_least":65536,"memory_tol":1e-12`) {
		t.Errorf("slow pole: %v", r)
	}
}

// TestAnalyzeReduceShortfall: two states at one pole (A = diag(0.5, 0.5, −0.3)) leave the
// third Hankel singular value at rounding, below the numerical rank's cut n·ε·σ₁, so --reduce 3
// keeps fewer states; the order it reached and why (the first σ dropped, the threshold) are in
// the JSON and on stderr, and it exits 0.
func TestAnalyzeReduceShortfall(t *testing.T) {
	dir := t.TempDir()
	path := writeText(t, dir, "rep.json", `{"form": "dense", "A": [[0.5, 0, 0], [0, 0.5, 0], [0, 0, -0.3]], "B": [1, 1, 1], "C": [1, 2, 1], "D": 0}`)
	const asked = 3
	r := run(t, "", "analyze", path, "--hsv", "--reduce", strconv.Itoa(asked))
	var out struct {
		HSV    []float64
		Reduce struct {
			Order    int
			Warnings []string
		}
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || len(out.HSV) != asked {
		t.Fatalf("%v", r)
	}
	hsv, red := out.HSV, out.Reduce
	cut := float64(len(hsv)) * 0x1p-52 * hsv[0]
	want := 0
	for want < len(hsv) && hsv[want] > cut {
		want++
	}
	if want >= asked {
		t.Fatalf("hsv = %v: none at or below the cut %v, the test needs one", hsv, cut)
	}
	if red.Order != want || len(red.Warnings) != 1 {
		t.Fatalf("reduce = %+v, want order %d and one warning (hsv %v)", red, want, hsv)
	}
	sigma := fmt.Sprintf("σ%d = %.2g·σ₁", want+1, hsv[want]/hsv[0])
	threshold := fmt.Sprintf("n·ε·σ₁ = %.2g·σ₁ (n = %d real states)", cut/hsv[0], len(hsv))
	for _, s := range []string{red.Warnings[0], r.stderr} {
		if !strings.Contains(s, fmt.Sprintf("reduced to order %d", want)) || !strings.Contains(s, sigma) || !strings.Contains(s, threshold) {
			t.Errorf("warning %q does not name the order %d, %q and %q", s, want, sigma, threshold)
		}
	}
	if !strings.HasPrefix(r.stderr, "warning: ") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestAnalyzeUnstableFreqNote: --freq and --group-delay of a filter that is not stable warn on
// stderr that H on the unit circle is not its steady-state response (analysis.SteadyStateNote,
// which the figures and the workbench show too), and print H (exit 0); a stable filter's do
// not warn (analysis QA N6).
func TestAnalyzeUnstableFreqNote(t *testing.T) {
	dir := t.TempDir()
	un := writeText(t, dir, "un.json", `{"form": "zpk", "zeros": [], "poles": [[1.2, 0]], "gain": 1}`)
	marginal := writeText(t, dir, "marginal.json", `{"form": "zpk", "zeros": [], "poles": [[0, 1], [0, -1]], "gain": 1}`)
	for _, c := range []struct {
		path, want string
	}{
		{un, "un.json: unstable, ρ = 1.2: H on the unit circle is not its steady-state response"},
		{marginal, "marginal.json: marginal, ρ = 1: H on the unit circle is not its steady-state response"},
	} {
		for _, flag := range []string{"--freq", "--group-delay"} {
			r := run(t, "", "analyze", c.path, flag, "4")
			if r.code != 0 || !strings.HasPrefix(r.stderr, "warning: ") || !strings.Contains(r.stderr, c.want+"\n") || strings.Count(r.stderr, "steady-state") != 1 {
				t.Errorf("%s %s: %v", c.path, flag, r)
			}
		}
	}
	if r := run(t, "", "analyze", twoState(t), "--freq", "4", "--group-delay", "4"); r.code != 0 || r.stderr != "" {
		t.Errorf("a stable filter: %v", r)
	}
}

// TestAnalyzeHInf: --hinf prints the H∞ norm and a frequency where |H| reaches it (against
// |H| by hand on 100001 frequencies; analysis.TestHInfGolden holds it to mpmath), each
// channel's for a bank, and fails for a filter that is not stable, naming its poles, as --h2
// does (analysis QA N8: analyze had no H∞ norm).
func TestAnalyzeHInf(t *testing.T) {
	path := twoState(t)
	m := decodeAnalysis(t, run(t, "", "analyze", path, "--hinf"))
	norm, omega := get[float64](t, m, "hinf"), get[float64](t, m, "hinf_omega")
	peak := 0.0
	for i := range 100001 {
		peak = max(peak, cmplx.Abs(twoStateH(cmplx.Rect(1, math.Pi*float64(i)/100000))))
	}
	if norm < peak*(1-1e-15) || norm > peak*(1+1e-9) || omega < 0 || omega > math.Pi {
		t.Errorf("‖H‖∞ = %v at ω = %v, the grid's peak %v", norm, omega, peak)
	}
	if at := cmplx.Abs(twoStateH(cmplx.Rect(1, omega))); math.Abs(at-norm) > 1e-14*norm {
		t.Errorf("|H(e^{jω})| = %v at the ω printed, not the norm %v", at, norm)
	}
	if _, other := m["impulse"]; other || len(m) != 5 { // name, form, order, hinf, hinf_omega
		t.Errorf("--hinf alone prints %d sections", len(m))
	}
	src, _ := readDoc(path)
	bank, _ := filters.NewBank([]filters.Filter{src.Filter, src.Filter})
	bpath := writeDoc(t, t.TempDir(), "bank.json", filters.Document{Bank: bank})
	var b struct {
		Channels []struct {
			HInf *float64 `json:"hinf"`
		}
	}
	if r := run(t, "", "analyze", bpath, "--hinf"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &b) != nil || len(b.Channels) != 2 || b.Channels[1].HInf == nil || *b.Channels[1].HInf != norm {
		t.Errorf("bank: %v", r)
	}
	un := writeText(t, t.TempDir(), "un.json", `{"form": "zpk", "zeros": [], "poles": [[1.2, 0]], "gain": 1}`)
	if r := run(t, "", "analyze", un, "--hinf"); r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "un.json: H∞ norm: not stable: pole 1.2+0i (|p| = 1.2) lies on or outside the unit circle") {
		t.Errorf("unstable: %v", r)
	}
}
