package tui

import (
	"context"
	"errors"
	"flag"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train"
)

// updating reports whether -update was given: the flag is defined by x/exp/golden (which
// teatest imports) and rewrites the golden files under testdata/.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestMain(m *testing.M) {
	// Pin the colour profile: golden files hold plain text, and styles must not leak escape
	// codes into assertions.
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(m.Run())
}

// fakePresets is a PresetSource of a few small filters built directly, so the tests do not
// depend on the presets package's defaults.
type fakePresets struct{}

func (fakePresets) Presets() []PresetInfo {
	return []PresetInfo{
		{Name: "pair", Description: "two conjugate poles and two zeros, zpk", Params: []PresetParam{{Name: "r", Default: "0.9", Help: "pole radius"}}},
		{Name: "dense2", Description: "a dense 2×2 resonator"},
		{Name: "ring", Description: "order-n diagonal ring", Params: []PresetParam{{Name: "n", Default: "8", Help: "order"}}},
		{Name: "bank", Description: "a bank of two zpk channels"},
		{Name: "kernel", Description: "a decaying kernel"},
	}
}

func (fakePresets) Build(name string, values map[string]string) (Built, error) {
	switch name {
	case "pair":
		r := 0.9
		if v, ok := values["r"]; ok {
			var err error
			if r, err = parseReal(v); err != nil {
				return Built{}, err
			}
		}
		f, err := pairZPK(r)
		return Built{Name: "pair", Filter: f}, err
	case "dense2":
		f, err := filters.NewDense([][]float64{{0.5, -0.5}, {0.5, 0.5}}, []float64{1, 0}, []float64{0, 1}, 0)
		return Built{Name: "dense2", Filter: f}, err
	case "ring":
		n := 8
		if v, ok := values["n"]; ok {
			x, err := parseReal(v)
			if err != nil {
				return Built{}, err
			}
			n = int(x)
		}
		f, err := ringDiagonal(n, 0.95)
		return Built{Name: "ring", Filter: f}, err
	case "bank":
		a, _ := pairZPK(0.8)
		b, _ := pairZPK(0.5)
		bk, err := filters.NewBank([]filters.Filter{a, b})
		return Built{Name: "bank", Bank: bk}, err
	case "kernel":
		h := make([]float64, 64)
		for i := range h {
			h[i] = math.Pow(0.9, float64(i)) * math.Cos(0.3*float64(i))
		}
		return Built{Name: "kernel", Kernels: [][]float64{h}}, nil
	}
	return Built{}, errors.New("no preset " + name)
}

func pairZPK(r float64) (*filters.ZPK, error) {
	p := cmplx.Rect(r, math.Pi/4)
	z := cmplx.Rect(0.5, math.Pi/2)
	return filters.NewZPK([]complex128{z, cmplx.Conj(z)}, []complex128{p, cmplx.Conj(p)}, 0.5, 0)
}

// ringDiagonal is an order-n (even) modal filter with poles on |z| = r.
func ringDiagonal(n int, r float64) (*filters.Diagonal, error) {
	var poles, res []complex128
	for k := range n / 2 {
		p := cmplx.Rect(r, math.Pi*(float64(k)+0.5)/float64(n/2+1))
		g := complex(1/float64(k+1), 0.1)
		poles = append(poles, p, cmplx.Conj(p))
		res = append(res, g, cmplx.Conj(g))
	}
	return filters.NewDiagonal(poles, res, 0.1)
}

// fakeRunner is a JobRunner that needs no optimiser. With block set it reports one progress
// event and then waits for cancellation; otherwise it reports steps progress events and
// returns the target's own filter as a "fit": a TF from the first two samples.
type fakeRunner struct {
	block   bool
	mu      sync.Mutex
	started int
}

func (r *fakeRunner) Backends() []train.BackendName { return []train.BackendName{"gpu", "cpu"} }

// SuggestOrder suggests the number of targets plus their length's last digit: a value the
// tests can predict and that depends on what the form's command computed.
func (r *fakeRunner) SuggestOrder(targets [][]float64, tol float64) train.Suggestion {
	return train.Suggestion{Tol: tol, Order: len(targets) + len(targets[0])%10, OK: true, Bound: tol / 4}
}

func (r *fakeRunner) Defaults() train.Spec {
	s := train.DefaultSpec()
	s.Order, s.Steps, s.Target.Length, s.Backend = 8, 20, 256, "gpu"
	return s
}

func (r *fakeRunner) Run(ctx context.Context, spec train.Spec, targets [][]float64, progress func(JobProgress)) (*JobResult, error) {
	r.mu.Lock()
	r.started++
	r.mu.Unlock()
	if r.block {
		progress(JobProgress{Step: 1, Steps: spec.Steps, Loss: 0.5})
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for s := 1; s <= spec.Steps; s++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		progress(JobProgress{Step: s, Steps: spec.Steps, Loss: 1 / float64(s*s)})
	}
	var out []filters.Filter
	for _, h := range targets {
		// a first-order fit h[t] ≈ h1·a^(t-1)
		a := 0.0
		if h[1] != 0 {
			a = math.Max(-0.99, math.Min(0.99, h[2]/h[1]))
		}
		f, err := filters.NewTransferFunction([]float64{-a}, []float64{h[1]}, h[0])
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return &JobResult{Filters: out, MaxRelError: 0.125, Stable: true, Seconds: 0.01, Backend: string(spec.Backend)}, nil
}

// testDeps are fakes for everything but the store (files in t.TempDir()) and the analyzer.
func testDeps(r *fakeRunner) Deps {
	if r == nil {
		r = &fakeRunner{}
	}
	return Deps{Presets: fakePresets{}, Runner: r, Store: fileStore{}, Analyzer: analysisAnalyzer{}}
}

// newTestModel is a workbench of w×h cells on the fakes, without autosave.
func newTestModel(t testing.TB, w, h int, r *fakeRunner) *Model {
	t.Helper()
	m := New(Options{Deps: testDeps(r), ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// addFilter adds a filter to the session, as a file opened would, and selects it.
func addFilter(t testing.TB, m *Model, name string, f filters.Filter) *entry {
	t.Helper()
	send(t, m, openMsg{path: name + ".json", opened: Opened{Items: []Item{{Name: name, Filter: f}}}})
	return m.selected()
}

// addKernels adds kernels to the session, as a file opened would.
func addKernels(t testing.TB, m *Model, name string, rows [][]float64) {
	t.Helper()
	k, err := arrays.FromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	send(t, m, openMsg{path: name + ".npy", opened: Opened{Items: []Item{{Name: name, Kernels: k}}}})
}

// dialogOf returns the open dialog as a D; ok is false when another (or none) is open.
func dialogOf[D dialog](m *Model) (D, bool) {
	d, ok := m.dialog.(D)
	return d, ok
}

// send delivers msg and runs every command it returns, depth first, feeding their messages
// back in: the event loop, synchronously. Commands that would block (a blocking job) must not
// be driven this way.
func send(t testing.TB, m *Model, msg tea.Msg) {
	t.Helper()
	_, cmd := m.Update(msg)
	runCmd(t, m, cmd, 0)
}

func runCmd(t testing.TB, m *Model, cmd tea.Cmd, depth int) {
	t.Helper()
	if cmd == nil {
		return
	}
	if depth > 200 {
		t.Fatal("command chain too deep")
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(t, m, c, depth+1)
		}
	case tea.QuitMsg:
	default:
		_, next := m.Update(msg)
		runCmd(t, m, next, depth+1)
	}
}

// keys sends each key: named keys ("enter", "tab", "up", …) or runes ("a", ":").
func keys(t testing.TB, m *Model, ks ...string) {
	t.Helper()
	for _, k := range ks {
		send(t, m, keyMsg(k))
	}
}

// typeText sends each rune of s.
func typeText(t testing.TB, m *Model, s string) {
	t.Helper()
	for _, r := range s {
		send(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "esc": tea.KeyEsc,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"ctrl+c": tea.KeyCtrlC, "backspace": tea.KeyBackspace, "delete": tea.KeyDelete,
		"pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "home": tea.KeyHome, "end": tea.KeyEnd,
		"ctrl+u": tea.KeyCtrlU, "ctrl+s": tea.KeyCtrlS, "ctrl+d": tea.KeyCtrlD,
	}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// screen is the ANSI-stripped view with trailing spaces removed from each line.
func screen(m *Model) string { return plain(m.View()) }

// plain is a rendered view without ANSI sequences, with trailing spaces removed from each
// line: the text screen shows, for a frame already rendered.
func plain(view string) string {
	lines := strings.Split(ansi.Strip(view), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// golden compares got with testdata/NAME.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./tui -run '%s' -update rewrites it)\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

// addPreset adds a fake preset through the picker (a, choose, enter, enter).
func addPreset(t testing.TB, m *Model, name string) {
	t.Helper()
	prev := m.focus
	m.setFocus(paneList)
	defer m.setFocus(prev)
	keys(t, m, "a")
	p, ok := dialogOf[*picker](m)
	if !ok {
		t.Fatalf("a opened %T", m.dialog)
	}
	for i, x := range p.presets {
		if x.Name == name {
			p.sel = i
		}
	}
	keys(t, m, "enter", "enter")
}

// crowdedDiagonal has 16 real poles in [0.95, 0.99]: float32 RTF coefficients cannot hold them.
func crowdedDiagonal(t *testing.T) *filters.Diagonal {
	t.Helper()
	poles := make([]complex128, 16)
	res := make([]complex128, 16)
	for i := range poles {
		poles[i] = complex(0.95+0.04*float64(i)/15, 0)
		res[i] = complex(1/float64(i+1), 0)
	}
	d, err := filters.NewDiagonal(poles, res, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// readDoc reads the filter file at path.
func readDoc(path string) (filters.Document, error) {
	data, err := userfile.ReadFile(path)
	if err != nil {
		return filters.Document{}, err
	}
	return filterfile.Unmarshal(data)
}

// writeDoc writes doc as a filter file at path.
func writeDoc(path string, doc filters.Document) error {
	data, err := filterfile.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// kernelArray is rows as an array of kernels.
func kernelArray(rows [][]float64) (*arrays.Array, error) { return arrays.FromRows(rows) }

// openFormAt opens the distill form (D) on the selected item and moves its cursor to the
// field name.
func openFormAt(t *testing.T, m *Model, name string) *jobForm {
	t.Helper()
	keys(t, m, "D")
	form, ok := dialogOf[*jobForm](m)
	if !ok {
		t.Fatalf("D opened %T", m.dialog)
	}
	for range form.fields {
		if form.fields[form.focus].name == name {
			return form
		}
		keys(t, m, "down")
	}
	t.Fatalf("the distill form has no field %q", name)
	return nil
}
