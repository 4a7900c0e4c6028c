package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/internal/userfile"
)

// impulseTol bounds the max |h_out - h_in| after a CLI conversion of testFilter (|h| ≤ 1).
// It is the project's round-trip bar (filters.roundTripTol); these order-3 conversions
// measure about 1e-15.
const impulseTol = 1e-9

// exactTol bounds differences between the test's hand computations and analyze's output:
// a few roundings of numbers of size ≤ 2.
const exactTol = 1e-13

// result is what one in-process run of Main left behind.
type result struct {
	code           int
	stdout, stderr string
}

// run calls Main with args and stdin, as the binary would.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %q\nstderr: %q", r.code, r.stdout, r.stderr)
}

// testFilter is an order-3 dense filter with a non-normal A, a complex pole pair and a real
// pole, all distinct, so that every form can hold it.
func testFilter(t *testing.T) *filters.Dense {
	t.Helper()
	f, err := filters.NewDense([][]float64{
		{0.5, -0.3, 0.1},
		{0.3, 0.5, 0.2},
		{0, 0.1, -0.4},
	}, []float64{1, 0.5, 1}, []float64{0.2, 1, -0.7}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// writeDoc writes doc to a file in dir and returns its path.
func writeDoc(t *testing.T, dir, name string, doc filters.Document) string {
	t.Helper()
	data, err := filterfile.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return writeText(t, dir, name, string(data))
}

func writeText(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConvertEveryFormToEveryForm(t *testing.T) {
	dir := t.TempDir()
	base := testFilter(t)
	want := base.Impulse(128)
	for _, from := range filters.Forms {
		src, _, err := filters.Convert(base, from)
		if err != nil {
			t.Fatalf("preparing %s: %v", from, err)
		}
		path := writeDoc(t, dir, string(from)+".json", filters.Document{Name: "toy", Filter: src})
		for _, to := range filters.Forms {
			args := []string{"convert", path, "--to", string(to)}
			observable := []bool{false}
			if to == filters.FormCompanion {
				observable = append(observable, true)
			}
			for _, obs := range observable {
				args := args
				if obs {
					args = append(args, "--observable")
				}
				t.Run(strings.Join(args[2:], " ")+" from "+string(from), func(t *testing.T) {
					r := run(t, "", args...)
					if r.code != 0 {
						t.Fatalf("%v", r)
					}
					doc, err := filterfile.Unmarshal([]byte(r.stdout))
					if err != nil {
						t.Fatalf("output does not re-read: %v\n%s", err, r.stdout)
					}
					if doc.Filter == nil || doc.Filter.Form() != to || doc.Name != "toy" {
						t.Fatalf("got %+v, want a %s filter named toy", doc, to)
					}
					if c, ok := doc.Filter.(*filters.Companion); ok && c.Observable != obs {
						t.Errorf("Observable = %v, want %v", c.Observable, obs)
					}
					if d := numtest.MaxAbsDiff(doc.Filter.Impulse(len(want)), want); d > impulseTol {
						t.Errorf("impulse responses differ by %.3g", d)
					}
					prefix := fmt.Sprintf("converted %s → %s: rel error ", from, to)
					if !strings.HasPrefix(r.stderr, prefix) || strings.Count(r.stderr, "\n") != 1 {
						t.Errorf("stderr = %q, want one line starting %q", r.stderr, prefix)
					}
					// A conversion without a step that can lose digits gives no condition, as
					// the workbench shows it; "condition 1: none (…)" read as a condition number.
					if strings.Contains(r.stderr, "condition 1: none") {
						t.Errorf("stderr = %q names a condition of none", r.stderr)
					}
				})
			}
		}
	}
}

func TestConvertBank(t *testing.T) {
	dir := t.TempDir()
	base := testFilter(t)
	tf, _, err := filters.Convert(base, filters.FormTF)
	if err != nil {
		t.Fatal(err)
	}
	other, err := filters.NewTransferFunction([]float64{-0.9}, []float64{1}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	bank, err := filters.NewBank([]filters.Filter{tf, other})
	if err != nil {
		t.Fatal(err)
	}
	path := writeDoc(t, dir, "bank.json", filters.Document{Name: "layer", Bank: bank})
	out := filepath.Join(dir, "out.json")
	r := run(t, "", "convert", path, "--to", "diagonal", "-o", out)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("want exit 0 and empty stdout with -o: %v", r)
	}
	if !strings.HasPrefix(r.stderr, "converted 2 channels tf → diagonal: worst rel error ") {
		t.Errorf("stderr = %q", r.stderr)
	}
	// Every channel's conversion has a condition (the modal sum's): the worst is named. A bank
	// copied as it is has none to name.
	if !strings.Contains(r.stderr, "; worst condition ") {
		t.Errorf("stderr = %q names no condition", r.stderr)
	}
	if c := run(t, "", "convert", path, "--to", "tf", "-o", filepath.Join(dir, "copy.json")); c.code != 0 || strings.Contains(c.stderr, "condition") {
		t.Errorf("a bank copied exactly: %v", c)
	}
	doc, err := readDoc(out)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Bank == nil || len(doc.Bank.Channels) != 2 || doc.Name != "layer" {
		t.Fatalf("got %+v, want a bank of 2 channels named layer", doc)
	}
	for i, c := range doc.Bank.Channels {
		want := bank.Channels[i].Impulse(128)
		if c.Form() != filters.FormDiagonal {
			t.Errorf("channel %d is %s", i, c.Form())
		}
		if d := numtest.MaxAbsDiff(c.Impulse(128), want); d > impulseTol {
			t.Errorf("channel %d: impulse responses differ by %.3g", i, d)
		}
	}
}

func TestConvertStdin(t *testing.T) {
	base := testFilter(t)
	data, err := filterfile.Marshal(filters.Document{Filter: base})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, string(data), "convert", "-", "--to", "zpk")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	doc, err := filterfile.Unmarshal([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if d := numtest.MaxAbsDiff(doc.Filter.Impulse(128), base.Impulse(128)); d > impulseTol {
		t.Errorf("impulse responses differ by %.3g", d)
	}
}

func TestConvertReport(t *testing.T) {
	dir := t.TempDir()
	good := writeDoc(t, dir, "good.json", filters.Document{Filter: testFilter(t)})
	unstable := writeText(t, dir, "unstable.json", `{"form": "dense", "A": [[10]], "B": [1], "C": [1], "D": 0}`)

	t.Run("single", func(t *testing.T) {
		rep := filepath.Join(dir, "report.json")
		r := run(t, "", "convert", good, "--to", "tf", "--report", rep)
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
		data, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		var got filters.Report
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("report is not valid JSON: %v\n%s", err, data)
		}
		if got.From != filters.FormDense || got.To != filters.FormTF || got.Length < 64 || got.RelError > impulseTol || got.Condition < 1 {
			t.Errorf("report = %+v", got)
		}
	})

	t.Run("overflowing error is finite", func(t *testing.T) {
		// The impulse response of A = 10 overflows within the report's 512 samples: no
		// accuracy can be claimed, and only --force writes the result.
		r := run(t, "", "convert", unstable, "--to", "tf", "-o", filepath.Join(dir, "tf.json"), "--report", "-", "--force")
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("report is not valid JSON: %v\n%s", err, r.stdout)
		}
		if v, ok := got["rel_error"].(float64); !ok || v != math.MaxFloat64 {
			t.Errorf(`"rel_error" = %v, want the saturated %v`, got["rel_error"], math.MaxFloat64)
		}
		if !strings.Contains(r.stderr, "\nwarning: ") {
			t.Errorf("stderr has no warning line: %q", r.stderr)
		}
	})

	t.Run("bank", func(t *testing.T) {
		bank, err := filters.NewBank([]filters.Filter{testFilter(t), testFilter(t), testFilter(t)})
		if err != nil {
			t.Fatal(err)
		}
		path := writeDoc(t, dir, "bank.json", filters.Document{Bank: bank})
		rep := filepath.Join(dir, "bank-report.json")
		r := run(t, "", "convert", path, "--to", "rotation", "--report", rep)
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
		data, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Channels []filters.Report }
		if err := json.Unmarshal(data, &got); err != nil || len(got.Channels) != 3 {
			t.Fatalf("want {\"channels\": [3 reports]}, got %v\n%s", err, data)
		}
	})
}

// twoState is the filter of the analyze tests:
//
//	A = [[0.5, 0.2], [-0.1, 0.3]], B = (1, 0), C = (1, 1), D = 0.25.
//
// det(zI - A) = z² - 0.8z + 0.17, so the poles are 0.4 ± 0.1i and the spectral radius is
// √0.17; C adj(zI - A) B = z - 0.4, so H(z) = 0.25 + (z - 0.4)/(z² - 0.8z + 0.17), whose
// zeros solve z² + 3.2z - 1.43 = 0: z = -1.6 ± √3.99.
func twoState(t *testing.T) string {
	t.Helper()
	return writeText(t, t.TempDir(), "two.json",
		`{"name": "two", "form": "dense", "A": [[0.5, 0.2], [-0.1, 0.3]], "B": [1, 0], "C": [1, 1], "D": 0.25}`)
}

// twoStateImpulse runs the state recursion of twoState by hand.
func twoStateImpulse(n int) []float64 {
	h := make([]float64, n)
	h[0] = 0.25
	x0, x1 := 1.0, 0.0 // x[1] = B
	for t := 1; t < n; t++ {
		h[t] = x0 + x1
		x0, x1 = 0.5*x0+0.2*x1, -0.1*x0+0.3*x1
	}
	return h
}

// twoStateH is D + C (zI - A)⁻¹ B = 0.25 + (z - 0.4)/(z² - 0.8z + 0.17).
func twoStateH(z complex128) complex128 { return 0.25 + (z-0.4)/(z*z-0.8*z+0.17) }

func decodeAnalysis(t *testing.T, r result) map[string]json.RawMessage {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%v", r)
	}
	if strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("stdout is not one line of JSON: %q", r.stdout)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
	}
	return m
}

func keys(m map[string]json.RawMessage) []string {
	k := make([]string, 0, len(m))
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func get[T any](t *testing.T, m map[string]json.RawMessage, key string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(m[key], &v); err != nil {
		t.Fatalf("%q: %v", key, err)
	}
	return v
}

func TestAnalyze(t *testing.T) {
	path := twoState(t)
	m := decodeAnalysis(t, run(t, "", "analyze", path, "--impulse", "20", "--freq", "9", "--poles"))
	wantKeys := []string{"H", "form", "impulse", "name", "omega", "order", "poles", "spectral_radius", "stable", "zeros"}
	if got := keys(m); !slices.Equal(got, wantKeys) {
		t.Errorf("keys = %v, want %v", got, wantKeys)
	}
	if form, order := get[string](t, m, "form"), get[int](t, m, "order"); form != "dense" || order != 2 {
		t.Errorf("form, order = %s, %d", form, order)
	}
	if d := numtest.MaxAbsDiff(get[[]float64](t, m, "impulse"), twoStateImpulse(20)); d > exactTol {
		t.Errorf("impulse differs from the hand recursion by %.3g", d)
	}
	if n := len(get[[]float64](t, m, "impulse")); n != 20 {
		t.Errorf("%d impulse samples, want 20", n)
	}
	omega := get[[]float64](t, m, "omega")
	if len(omega) != 9 || omega[0] != 0 || omega[8] != math.Pi {
		t.Fatalf("omega = %v, want 9 points from 0 to π", omega)
	}
	for i, h := range get[[][2]float64](t, m, "H") {
		want := twoStateH(cmplx.Rect(1, omega[i]))
		if cmplx.Abs(complex(h[0], h[1])-want) > exactTol {
			t.Errorf("H(ω=%g) = %v, want %v", omega[i], h, want)
		}
	}
	poles := get[[][2]float64](t, m, "poles")
	wantPoles := [][2]float64{{0.4, 0.1}, {0.4, -0.1}} // positive imaginary part first
	if len(poles) != 2 || numtest.MaxAbsDiff(poles[0][:], wantPoles[0][:]) > exactTol || numtest.MaxAbsDiff(poles[1][:], wantPoles[1][:]) > exactTol {
		t.Errorf("poles = %v, want %v", poles, wantPoles)
	}
	zeros := get[[][2]float64](t, m, "zeros")
	wantZeros := [][2]float64{{-1.6 - math.Sqrt(3.99), 0}, {-1.6 + math.Sqrt(3.99), 0}} // largest modulus first
	if len(zeros) != 2 || numtest.MaxAbsDiff(zeros[0][:], wantZeros[0][:]) > exactTol || numtest.MaxAbsDiff(zeros[1][:], wantZeros[1][:]) > exactTol {
		t.Errorf("zeros = %v, want %v", zeros, wantZeros)
	}
	if rho := get[float64](t, m, "spectral_radius"); math.Abs(rho-math.Sqrt(0.17)) > exactTol {
		t.Errorf("spectral_radius = %v, want √0.17", rho)
	}
	if !get[bool](t, m, "stable") {
		t.Error("stable = false")
	}
}

func TestAnalyzeSections(t *testing.T) {
	path := twoState(t)
	for _, c := range []struct {
		args []string
		keys []string
	}{
		{nil, []string{"H", "form", "impulse", "name", "omega", "order", "poles", "spectral_radius", "stable", "zeros"}},
		{[]string{"--impulse", "5"}, []string{"form", "impulse", "name", "order"}},
		{[]string{"--freq", "1"}, []string{"H", "form", "name", "omega", "order"}},
		{[]string{"--poles"}, []string{"form", "name", "order", "poles", "spectral_radius", "stable", "zeros"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			m := decodeAnalysis(t, run(t, "", append([]string{"analyze", path}, c.args...)...))
			if got := keys(m); !slices.Equal(got, c.keys) {
				t.Errorf("keys = %v, want %v", got, c.keys)
			}
		})
	}

	t.Run("defaults", func(t *testing.T) {
		m := decodeAnalysis(t, run(t, "", "analyze", path))
		if n, k := len(get[[]float64](t, m, "impulse")), len(get[[]float64](t, m, "omega")); n != DefaultImpulse || k != DefaultFreq {
			t.Errorf("%d impulse samples and %d frequencies, want %d and %d", n, k, DefaultImpulse, DefaultFreq)
		}
	})
	t.Run("one frequency", func(t *testing.T) {
		m := decodeAnalysis(t, run(t, "", "analyze", path, "--freq", "1"))
		if omega := get[[]float64](t, m, "omega"); !slices.Equal(omega, []float64{0}) {
			t.Errorf("omega = %v, want [0]", omega)
		}
	})
	t.Run("order 0 has empty poles", func(t *testing.T) {
		gain := writeText(t, t.TempDir(), "gain.json", `{"form": "tf", "a": [], "b": [], "h0": 2}`)
		m := decodeAnalysis(t, run(t, "", "analyze", gain, "--poles"))
		if string(m["poles"]) != "[]" || string(m["zeros"]) != "[]" || !get[bool](t, m, "stable") {
			t.Errorf("got %s", run(t, "", "analyze", gain, "--poles").stdout)
		}
	})
}

func TestAnalyzeStdinAndBank(t *testing.T) {
	data, err := os.ReadFile(twoState(t))
	if err != nil {
		t.Fatal(err)
	}
	m := decodeAnalysis(t, run(t, string(data), "analyze", "-", "--impulse", "7"))
	if d := numtest.MaxAbsDiff(get[[]float64](t, m, "impulse"), twoStateImpulse(7)); d > exactTol {
		t.Errorf("impulse from stdin differs by %.3g", d)
	}

	doc, err := filterfile.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	bank, err := filters.NewBank([]filters.Filter{doc.Filter, doc.Filter})
	if err != nil {
		t.Fatal(err)
	}
	path := writeDoc(t, t.TempDir(), "bank.json", filters.Document{Bank: bank})
	m = decodeAnalysis(t, run(t, "", "analyze", path, "--impulse", "7", "--poles"))
	if got := keys(m); !slices.Equal(got, []string{"channels"}) {
		t.Fatalf("keys = %v, want [channels]", got)
	}
	chans := get[[]map[string]json.RawMessage](t, m, "channels")
	if len(chans) != 2 {
		t.Fatalf("%d channels, want 2", len(chans))
	}
	for i, c := range chans {
		if d := numtest.MaxAbsDiff(get[[]float64](t, c, "impulse"), twoStateImpulse(7)); d > exactTol {
			t.Errorf("channel %d: impulse differs by %.3g", i, d)
		}
		if _, ok := c["poles"]; !ok {
			t.Errorf("channel %d has no poles", i)
		}
	}
}

// TestBadInput checks that every failure exits non-zero with one line on stderr naming the
// file (or, for command-line mistakes, the flag) and nothing on stdout.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeDoc(t, dir, "good.json", filters.Document{Filter: testFilter(t)})
	file := func(name, text string) string { return writeText(t, dir, name, text) }
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  []string // substrings of the stderr line
	}{
		{"missing file", "", []string{"convert", filepath.Join(dir, "nosuch.json"), "--to", "tf"}, 1, []string{"nosuch.json", "no such file"}},
		{"directory", "", []string{"analyze", dir}, 1, []string{dir}},
		{"empty file", "", []string{"convert", file("empty.json", ""), "--to", "tf"}, 1, []string{"empty.json"}},
		{"bad JSON", "", []string{"convert", file("trunc.json", `{"form": "dense", "A": [[1`), "--to", "tf"}, 1, []string{"trunc.json", "JSON"}},
		{"not square", "", []string{"convert", file("shape.json", `{"form": "dense", "A": [[0.5, 1]], "B": [1], "C": [1], "D": 0}`), "--to", "tf"}, 1, []string{"shape.json", "square"}},
		{"short B", "", []string{"analyze", file("short.json", `{"form": "dense", "A": [[0.5, 0], [0, 0.5]], "B": [1], "C": [1, 1], "D": 0}`)}, 1, []string{"short.json"}},
		{"NaN", "", []string{"convert", file("nan.json", `{"form": "dense", "A": [[NaN]], "B": [1], "C": [1], "D": 0}`), "--to", "tf"}, 1, []string{"nan.json"}},
		{"quoted NaN", "", []string{"convert", file("qnan.json", `{"form": "dense", "A": [["NaN"]], "B": [1], "C": [1], "D": 0}`), "--to", "tf"}, 1, []string{"qnan.json", "NaN"}},
		{"Inf", "", []string{"analyze", file("inf.json", `{"form": "tf", "a": [1e999], "b": [1], "h0": 0}`)}, 1, []string{"inf.json", "1e999"}},
		{"unknown form", "", []string{"convert", file("unknown.json", `{"form": "lattice", "k": [0.5]}`), "--to", "tf"}, 1, []string{"unknown.json", "lattice"}},
		{"bad channel", "", []string{"convert", file("bank.json", `{"channels": [{"form": "tf", "a": [0.5], "b": [1], "h0": 0}, {"form": "tf", "a": [0.5], "b": [], "h0": 0}]}`), "--to", "zpk"}, 1, []string{"bank.json", "channel 1"}},
		{"bad stdin", "{", []string{"analyze", "-"}, 1, []string{"stdin", "JSON"}},
		{"defective to diagonal", "", []string{"convert", file("defective.json", `{"form": "dense", "A": [[0.5, 1], [0, 0.5]], "B": [1, 1], "C": [1, 0], "D": 0}`), "--to", "diagonal"}, 1, []string{"defective.json", "condition number"}},
		{"overflowing impulse", "", []string{"analyze", file("unstable.json", `{"form": "dense", "A": [[10]], "B": [1], "C": [1], "D": 0}`), "--impulse", "400"}, 1, []string{"unstable.json", "impulse[310] is +Inf", "unstable", "--impulse 310"}},
		{"pole on the unit circle", "", []string{"analyze", file("marginal.json", `{"form": "diagonal", "poles": [[1, 0]], "residues": [[1, 0]], "h0": 0}`), "--freq", "5"}, 1, []string{"marginal.json", "omega[0]", "unit circle"}},
		{"unwritable output", "", []string{"convert", good, "--to", "tf", "-o", filepath.Join(dir, "no", "dir", "out.json")}, 1, []string{"out.json"}},
		{"unwritable report", "", []string{"convert", good, "--to", "tf", "-o", filepath.Join(dir, "ok.json"), "--report", filepath.Join(dir, "no", "rep.json")}, 1, []string{"rep.json", "does not exist"}},

		// Command-line mistakes: exit 2, and the line names what to fix.
		{"unknown --to", "", []string{"convert", good, "--to", "modal"}, 2, []string{"--to", `"modal"`, "dense, diagonal"}},
		{"missing --to", "", []string{"convert", good}, 2, []string{"--to is required"}},
		{"observable without companion", "", []string{"convert", good, "--to", "tf", "--observable"}, 2, []string{"--observable"}},
		{"report to stdout without -o", "", []string{"convert", good, "--to", "tf", "--report", "-"}, 2, []string{"--report"}},
		{"report over output", "", []string{"convert", good, "--to", "tf", "-o", filepath.Join(dir, "same.json"), "--report", filepath.Join(dir, "same.json")}, 2, []string{"--report", "same.json"}},
		{"impulse 0", "", []string{"analyze", good, "--impulse", "0"}, 2, []string{"--impulse 0", "1048576"}},
		{"freq too large", "", []string{"analyze", good, "--freq", "1048577"}, 2, []string{"--freq 1048577"}},
		{"not a number", "", []string{"analyze", good, "--impulse", "ten"}, 2, []string{"--impulse", "ten"}},
		{"no FILE", "", []string{"analyze"}, 2, []string{"FILE"}},
		{"two FILEs", "", []string{"convert", good, good, "--to", "tf"}, 2, []string{"FILE", "got 2"}},
		{"unknown flag", "", []string{"convert", good, "--to", "tf", "--fast"}, 2, []string{"--fast", "ssmlab convert --help"}},
		{"unknown command", "", []string{"simulate", good}, 2, []string{"simulate", "ssmlab --help"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, c.stdin, c.args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d", r.code, c.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") || !strings.HasPrefix(r.stderr, "ssmlab: ") {
				t.Errorf("stderr = %q, want one line starting \"ssmlab: \"", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr = %q, want it to contain %q", r.stderr, w)
				}
			}
		})
	}
}

// TestHelp runs Main for the help of every command, without building the binary.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--help"},
		{"help"},
		{"convert", "--help"},
		{"analyze", "--help"},
		{"help", "convert"},
		{"analyze", "-h"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, "", args...)
			if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("%v", r)
			}
		})
	}
	if r := run(t, "", "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "ssmlab ") {
		t.Errorf("--version: %v", r)
	}
	// Arguments beside --version are a command-line mistake: cobra printed the version and
	// exited 0, --version convert too (it took convert for the flag's value).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--version", "x"}, `--version prints the version alone: want no arguments, got "x"`},
		{[]string{"x", "-v"}, `--version prints the version alone: want no arguments, got "x"`},
		{[]string{"--version", "convert"}, "convert: unknown flag: --version"},
	} {
		if r := run(t, "", c.args...); r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %v", c.args, r)
		}
	}
	if r := run(t, "", "analyze", "--help"); !strings.Contains(r.stdout, "--impulse L: h[0]") {
		t.Errorf("analyze --help does not document its sections:\n%s", r.stdout)
	}
}

func TestMainNilArgs(t *testing.T) {
	// cobra reads os.Args when handed nil; Main must not (here they are the test's flags).
	var out, errb bytes.Buffer
	if code := Main(nil, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "Usage:") {
		t.Errorf("Main(nil) = %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
}

// readDoc reads the filter file at path.
func readDoc(path string) (filters.Document, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return filters.Document{}, err
	}
	return filterfile.Unmarshal(data)
}

// TestUnknownCommand: a mistyped command is exit 2 with the nearest commands named (main
// promises it; "distil", the docs' own verb, read 'unknown command "distil" for "ssmlab"'),
// and help for one is too (it printed the whole help and exited 0).
func TestUnknownCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"distil"}, `unknown command "distil" (did you mean distill?)`},
		{[]string{"convrt", "x.json"}, `unknown command "convrt" (did you mean convert?)`},
		{[]string{"help", "anlyze"}, `unknown command "anlyze" (did you mean analyze?)`},
		{[]string{"help", "nothing"}, `unknown command "nothing"`},
		{[]string{"session", "infoo", "x"}, `unknown command "infoo" (did you mean info?)`},
		// A command group without its command is a usage mistake (it printed its help on
		// stdout and exited 0), and a subcommand's mistakes name its whole path (they said
		// "ssmlab: info: …"): QA C1.
		{[]string{"session"}, "ssmlab: session: want a command: info; see 'ssmlab session --help'"},
		{[]string{"session", "info"}, "ssmlab: session info: want one FILE argument, got 0; see"}, // it added '("-" reads stdin)', which session info refuses
		{[]string{"export", "-o", "x.npz"}, "ssmlab: export: want one FILE argument, got 0; see"},
		{[]string{"session", "info", "-"}, "ssmlab: session info: session info reads a file, not stdin; see 'ssmlab session info --help'"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: want exit 2 saying %q; got %v", tc.args, tc.want, r)
		}
	}
	if r := run(t, "", "help", "session", "info"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
		t.Errorf("help session info: %v", r)
	}
}

// TestSeveralFiles: "ssmlab b6.json x.json" (the workbench takes one FILE, so main hands
// it to the CLI) says that the workbench opens one file at a time, exit 2; it said
// 'unknown command "b6.json"'.
func TestSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "b6.json"), filepath.Join(dir, "x.json")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, "", a, b)
	if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, a+" is a file") || !strings.Contains(r.stderr, "one file at a time") || strings.Contains(r.stderr, "unknown command") {
		t.Errorf("two files: want exit 2 saying the workbench opens one file at a time; got %v", r)
	}
	// A word that is no file is still an unknown command.
	if r := run(t, "", filepath.Join(dir, "none.json"), b); r.code != ExitUsage || !strings.Contains(r.stderr, "unknown command") {
		t.Errorf("missing file: %v", r)
	}
}

// TestFlagValueErrors: a value a flag cannot parse is named with what the flag wants, not with
// strconv's words ('invalid argument "abc" for "--impulse" flag: strconv.ParseInt: parsing
// "abc": invalid syntax').
func TestFlagValueErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "f.json", "--impulse", "abc"}, `--impulse "abc": want a whole number`},
		{[]string{"analyze", "f.json", "--impulse", "99999999999999999999"}, `--impulse "99999999999999999999" is out of range`},
		{[]string{"distill", "f.json", "--orders", "2,x"}, `--orders "2,x": want whole numbers separated by commas`},
		{[]string{"distill", "f.json", "--seed", "-1"}, `--seed "-1": want a whole number, 0 or more`},
		{[]string{"distill", "f.json", "--lr", "fast"}, `--lr "fast": want a number`},
		{[]string{"distill", "f.json", "--order", "abc"}, `--order "abc": want a whole number or auto`},
		{[]string{"distill", "f.json", "--max-radius", "wide"}, `--max-radius "wide": want a number or auto`},
		{[]string{"convert", "f.json", "--force=maybe"}, `--force "maybe": want true or false`},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "strconv") {
			t.Errorf("%v: want exit 2 saying %q; got %v", tc.args, tc.want, r)
		}
	}
}

// TestNonFiniteFloatFlags: every float flag refuses NaN, an infinity and a value beyond
// float64 in the same words, as a command-line mistake (exit 2), without echoing the value
// (notFinite). distill and train echoed it ("--tol NaN is out of range", "--lr +Inf is out of
// range", "--cutoff NaN outside (0, 1]", "--max-radius NaN is outside …"), preset called it
// "not a number (the number is not finite)", a layout's number option quoted it.
func TestNonFiniteFloatFlags(t *testing.T) {
	dir := t.TempDir()
	f := writeDoc(t, dir, "f.json", filters.Document{Filter: testFilter(t)})
	lru := filepath.Join("..", "testdata", "layouts", "lru_64.pt")
	for _, tc := range []struct {
		cmd  []string
		flag string
	}{
		{[]string{"distill", f, "--length", "64"}, "tol"},
		{[]string{"distill", f, "--length", "64"}, "lr"},
		{[]string{"distill", f, "--length", "64"}, "suggest-tol"},
		{[]string{"distill", f, "--length", "64"}, "max-radius"},
		{[]string{"train", "--task", "delay"}, "tol"},
		{[]string{"train", "--task", "delay"}, "lr"},
		{[]string{"train", "--task", "delay"}, "cutoff"},
		{[]string{"train", "--task", "delay"}, "max-radius"},
		{[]string{"preset", "s4d-lin"}, "dt"},
		{[]string{"import", lru}, "step-rescale"},
		{[]string{"distill", lru}, "step-rescale"},
	} {
		for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-inf", "1e999", "-1e400"} {
			args := append(slices.Clip(tc.cmd), "--"+tc.flag, v, "-o", filepath.Join(dir, "out.json"))
			r := run(t, "", args...)
			want := fmt.Sprintf("ssmlab: %s: --%s: want a finite number (within ±1.8e+308); see 'ssmlab %[1]s --help'\n", tc.cmd[0], tc.flag)
			if r.code != ExitUsage || r.stdout != "" || r.stderr != want {
				t.Errorf("%v: want exit 2 and %q; got %v", args, want, r)
			}
		}
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"f.json"}) {
		t.Errorf("left %v", names)
	}
}

// TestNonFinitePresetParam: a preset's float parameter refuses NaN, an infinity and a value
// beyond float64 in a float flag's words, naming the parameter as its flag is named (exit 2,
// the value not echoed); preset butter wc=nan said "wc=nan is not a number (the number is not
// finite): want a number in (0, π)".
func TestNonFinitePresetParam(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	flag := run(t, "", "preset", "s4d-lin", "--dt", "nan", "-o", out)
	for _, v := range []string{"NaN", "nan", "Inf", "-inf", "1e999", "1e308pi"} {
		r := run(t, "", "preset", "butter", "wc="+v, "-o", out)
		want := strings.Replace(flag.stderr, "--dt:", "butter: wc:", 1)
		if r.code != ExitUsage || r.stdout != "" || r.stderr != want {
			t.Errorf("wc=%s: want exit 2 and %q; got %v", v, want, r)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("wrote %s", out)
	}
}

// TestFlagGivenTwice: a flag given twice is a command-line mistake naming the flag, in every
// command (pflag kept the last value without a word: preset butter --order 6 --order 4 wrote
// an order-4 filter). The flags that take several values (--label, --orders, --id, --pair)
// stay repeatable.
func TestFlagGivenTwice(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.json")
	if r := run(t, "", "preset", "butter", "--order", "4", "-o", f); r.code != 0 {
		t.Fatal(r)
	}
	out := filepath.Join(dir, "out.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"preset", "butter", "--order", "6", "--order", "4", "-o", out}, "preset: --order given twice (6, then 4): give it once"},
		{[]string{"preset", "butter", "--order=6", "--order", "6", "-o", out}, "preset: --order given twice: give it once"},
		{[]string{"preset", "butter", "-o", out, "--output", filepath.Join(dir, "other.json")}, "preset: --output given twice ("},
		{[]string{"convert", f, "--to", "tf", "--to", "zpk", "-o", out}, "convert: --to given twice (tf, then zpk)"},
		{[]string{"analyze", f, "--poles", "--poles"}, "analyze: --poles given twice: give it once"},
		{[]string{"analyze", f, "--impulse", "4", "--impulse", "8", "--impulse", "2"}, "--impulse given 3 times (4, then 8, then 2)"},
		{[]string{"distill", f, "--order", "2", "--order", "3", "-o", out}, "distill: --order given twice (2, then 3)"},
		{[]string{"plot", f, "--impulse", "--width", "6in", "--width", "8in", "-o", filepath.Join(dir, "p.svg")}, "plot: --width given twice"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: want exit 2 saying %q; got %v", tc.args, tc.want, r)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v wrote %s", tc.args, out)
		}
	}
	// Repeatable flags.
	if r := run(t, "", "distill", f, "--orders", "2", "--orders", "3"); r.code != 0 || !strings.Contains(r.stdout, `"orders": [`) {
		t.Errorf("--orders given twice: %v", r)
	}
	if r := run(t, "", "plot", f, f, "--impulse", "--label", "a", "--label", "b", "-o", filepath.Join(dir, "two.svg")); r.code != 0 {
		t.Errorf("--label given once per FILE: %v", r)
	}
}
