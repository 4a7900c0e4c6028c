package cli

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// mimoLayer reads a MIMO layer (lru, s5, rotrnn) of a checkpoint.
func mimoLayer(t *testing.T, path string, lay layouts.Layout, prefix string) *filters.MIMO {
	t.Helper()
	m := importLayer(t, path, lay, prefix, nil).MIMO
	if m == nil {
		t.Fatalf("%s: %s layer %q read as no MIMO layer", path, lay, prefix)
	}
	return m
}

// mimoResponses reads a MIMO layer (lru, s5) of a checkpoint and returns every pair's
// impulse response over length samples, by output then input.
func mimoResponses(t *testing.T, path string, lay layouts.Layout, prefix string, length int) [][][]float64 {
	t.Helper()
	m := mimoLayer(t, path, lay, prefix)
	out := make([][][]float64, m.Outputs)
	for o := range out {
		for i := range m.Inputs {
			d, err := m.Channel(o, i)
			if err != nil {
				t.Fatal(err)
			}
			out[o] = append(out[o], d.Impulse(length))
		}
	}
	return out
}

// rowError is the relative L2 error of an output's responses over every input.
func rowError(want, got [][]float64) float64 {
	return filters.RelDiff(slicesConcat(want), slicesConcat(got))
}

func slicesConcat(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// mimoCase is a checkpoint of one MIMO layer of the golden files.
type mimoCase struct {
	in     string
	lay    layouts.Layout
	prefix string
	modes  string // the tensor whose length is the layer's mode count
}

var mimoCases = []mimoCase{
	{"../testdata/layouts/lru_64.pt", layouts.LRU, "layers_0.seq.", "nu_log"},
	{"../testdata/layouts/s5_64.pt", layouts.S5, "layers.1.seq.", "Lambda_re"},
	{"../testdata/layouts/rotrnn_64.npz", layouts.RotRNN, "layers.0.", "gamma_log"},
}

// TestDistillModelMIMO: an LRU, S5 or RotRNN checkpoint is distilled by reducing each layer
// whole (balanced truncation of all its inputs and outputs together) and writing it back in
// its own layout (a RotRNN layer as heads of two states), for its own module with a smaller
// state: the manifest's errors per output are the written layer's against the input's, every
// pair counted; at the layer's own order (two real states a mode) it is exact; a re-run
// writes the same bytes from the work directory; the reference code's scans
// (check_distilled.py) compute the same errors. Such files were refused ("no long-filter
// layer to distil").
func TestDistillModelMIMO(t *testing.T) {
	dir := t.TempDir()
	var pairs []string
	for _, c := range mimoCases {
		pairs = append(pairs, distilMIMOCase(t, dir, c)...)
	}
	for i, res := range checkDistilled(t, len(pairs)/2, append([]string{"--pairs"}, pairs...)...) {
		if len(res.Layers) != 1 || res.Copied.Count != 0 || len(res.Copied.Bad) > 0 || len(res.Copied.Extra) > 0 {
			t.Errorf("%s: %d layers; copied %+v", pairs[2*i+1], len(res.Layers), res.Copied)
		}
		checkModules(t, pairs[2*i+1], res)
	}
}

// distilMIMOCase distils c at orders 3, 4 and 8 (its own), checks each as
// TestDistillModelMIMO says, and returns the input and output pairs for check_distilled.py.
func distilMIMOCase(t *testing.T, dir string, c mimoCase) []string {
	t.Helper()
	const length = 256
	var pairs []string
	want := mimoResponses(t, c.in, c.lay, c.prefix, length)
	errs := map[string][]float64{}
	for _, order := range []string{"3", "4", "8"} {
		out := filepath.Join(dir, string(c.lay)+order+filepath.Ext(c.in))
		args := []string{"distill", c.in, "--order", order, "--length", "256", "-o", out}
		r := run(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stderr, "reduced by balanced truncation to order ") {
			t.Fatalf("%s, order %s: %v", c.lay, order, r)
		}
		got := mimoResponses(t, out, c.lay, c.prefix, length)
		m := readManifest(t, out)
		if len(m.Layers) != 1 || m.Layers[0].ToLayout != string(c.lay) || len(m.Layers[0].Channels) != len(want) {
			t.Fatalf("%s, order %s: manifest %+v", c.lay, order, m.Layers)
		}
		for o, ch := range m.Layers[0].Channels {
			e := rowError(want[o], got[o])
			errs[order] = append(errs[order], e)
			// The manifest's error comes from the Gramians in closed form, whose
			// cancellation leaves about 1e-8 of the response (filters.MIMODiff).
			if d := math.Abs(e - ch.RelError); d > 1e-6*e+1e-7 {
				t.Errorf("%s, order %s, output %d: the written layer is %.6g from the input, the manifest says %.6g", c.lay, order, o, e, ch.RelError)
			}
			if ch.Order > atoiOrder(order) || ch.Order < atoiOrder(order)/2 || !ch.Stable {
				t.Errorf("%s, order %s, output %d: order %d, stable %v", c.lay, order, o, ch.Order, ch.Stable)
			}
		}
		f, err := arrays.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range f.Arrays() {
			// At most ⌈order/2⌉ modes: the module's state size.
			if a.Name == c.prefix+c.modes && (a.Shape[0] < atoiOrder(order)/2 || a.Shape[0] > (atoiOrder(order)+1)/2) {
				t.Errorf("%s, order %s: %d modes", c.lay, order, a.Shape[0])
			}
		}
		f.Close()
		rerunSameBytes(t, out, args, string(c.lay)+", order "+order)
		pairs = append(pairs, c.in, out)
	}
	for o := range want {
		if !(errs["8"][o] < 1e-9) || !(errs["3"][o] >= errs["4"][o]*0.999) {
			t.Errorf("%s, output %d: errors %.3g, %.3g, %.3g at orders 3, 4, 8 (8 is the layer's own)", c.lay, o, errs["3"][o], errs["4"][o], errs["8"][o])
		}
	}
	return pairs
}

// TestDistillModelMIMOOptions: a MIMO layer's order counts states, not an RTF's 2n + 1
// coefficients, so a short length is no bar; --order auto picks one order for the layer, the
// smallest at which every output is within --tol (it was refused); an S5 layer's states are
// written at the mean of its log_step or at --log-step; another layout is refused before any
// work.
func TestDistillModelMIMOOptions(t *testing.T) {
	const length = 256
	dir := t.TempDir()
	cases := mimoCases
	// An order is of states, not of an RTF's 2n + 1 coefficients: a short length is no bar
	// (it was refused: "order 8 needs kernels longer than 17 samples").
	if r := run(t, "", "distill", cases[0].in, "--order", "8", "--length", "8", "-o", filepath.Join(dir, "short.pt")); r.code != 0 {
		t.Errorf("order 8 over 8 samples: %v", r)
	}
	// --order auto picks one order for the layer: the smallest at which every output is
	// within --tol (it was refused).
	for _, tol := range []float64{0.2, 0.02} {
		out := filepath.Join(dir, "auto"+strconv.FormatFloat(tol, 'g', -1, 64)+".pt")
		if r := run(t, "", "distill", cases[0].in, "--order", "auto", "--tol", strconv.FormatFloat(tol, 'g', -1, 64), "--length", "256", "-o", out); r.code != 0 {
			t.Fatalf("tol %g: %v", tol, r)
		}
		m := readManifest(t, out)
		order := m.Layers[0].Channels[0].Order
		for o, ch := range m.Layers[0].Channels {
			if ch.RelError > tol || ch.Order != order {
				t.Errorf("tol %g, output %d: error %.3g at order %d (the layer's %d)", tol, o, ch.RelError, ch.Order, order)
			}
		}
		if order > 1 {
			layer := mimoLayer(t, cases[0].in, cases[0].lay, cases[0].prefix)
			less, err := analysis.ReduceMIMO(layer, order-1)
			if err != nil {
				t.Fatal(err)
			}
			refit, _, err := analysis.RefitMIMO(layer, less.System, length)
			if err != nil {
				t.Fatal(err)
			}
			if e, _, err := filters.MIMODiff(layer, refit, length); err != nil || slices.Max(e) <= tol {
				t.Errorf("tol %g: order %d, where order %d is within it (%v, %v)", tol, order, order-1, e, err)
			}
		}
		t.Logf("lru, tol %g: order %d", tol, order)
	}
	// An S5 layer's states are written at the mean of its log_step, or at --log-step.
	for _, c := range []struct {
		args []string
		want func(float64) bool
	}{
		{nil, func(v float64) bool { return v < 0 && v > -3 }}, // s5_64.pt's steps are in [0.1, 0.6]
		{[]string{"--log-step", "-1.5"}, func(v float64) bool { return v == -1.5 }},
	} {
		out := filepath.Join(dir, "s5step"+strings.Join(c.args, "")+".npz")
		if r := run(t, "", append([]string{"distill", cases[1].in, "--order", "4", "--length", "64", "--dtype", "F64", "-o", out}, c.args...)...); r.code != 0 {
			t.Fatalf("%v: %v", c.args, r)
		}
		f, err := arrays.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := f.Read(cases[1].prefix + "log_step")
		f.Close()
		if err != nil || len(steps.Data) == 0 {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, v := range steps.Data {
			if v != steps.Data[0] || !c.want(v) {
				t.Errorf("%v: log_step %v", c.args, steps.Data)
				break
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--order", "4", "--to-layout", "rtf"}, "reduced and written back in its own layout, not rtf", 1},
		// A recipe's flags were ignored: the layer is reduced whatever they say.
		{[]string{"--order", "4", "--model", "modal"}, "--model is a setting of a fitting recipe, and every layer picked is an LRU, S5 or RotRNN layer", 2},
		{[]string{"--order", "auto", "--tol", "0.1", "--refine", "10"}, "--refine is a setting of a fitting recipe", 2},
		{[]string{"--order", "4", "--seed", "3"}, "--seed is a setting of a fitting recipe", 2},
	} {
		args := append([]string{"distill", cases[0].in, "--length", "256", "-o", filepath.Join(dir, "refused.pt")}, c.args...)
		if r := run(t, "", args...); r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: %v, want exit %d and one line saying %q", c.args, r, c.code, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "refused.pt.work")); err == nil {
			t.Errorf("%v: work was started", c.args)
		}
	}
}

// TestDistillModelMIMOLayersShareSize: the LRU layers of one model are written with one state
// size, the widest layer's, the others padded with idle modes, so that one module (one
// d_hidden) loads them all: under --order auto each layer takes its own order, and two
// copies of the test layer, one with two modes barely seen, came back with 4 and 2 modes.
func TestDistillModelMIMOLayersShareSize(t *testing.T) {
	dir := t.TempDir()
	in := twoLayerLRU(t, dir)
	out := filepath.Join(dir, "out.npz")
	r := run(t, "", "distill", in, "--order", "auto", "--tol", "0.05", "--length", "128", "--dtype", "F64", "-o", out)
	if r.code != 0 {
		t.Fatal(r)
	}
	m := readManifest(t, out)
	orders := map[int]bool{}
	for _, l := range m.Layers {
		orders[l.Channels[0].Order] = true
	}
	sizes := map[int]bool{}
	g, err := arrays.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, a := range g.Arrays() {
		if strings.HasSuffix(a.Name, "nu_log") {
			sizes[a.Shape[0]] = true
		}
	}
	if len(orders) < 2 || len(sizes) != 1 || !strings.Contains(r.stderr, "idle ones up to the model's widest layer") {
		t.Errorf("orders %v, state sizes %v: %v", orders, sizes, r.stderr)
	}
	for _, l := range m.Layers {
		for o, ch := range l.Channels {
			if ch.RelError > 0.05 {
				t.Errorf("%s output %d: %.3g above the tolerance", l.Prefix, o, ch.RelError)
			}
		}
	}
}

// twoLayerLRU writes a model of two LRU layers (layers.0.seq., layers.1.seq.) to dir: the
// golden test layer twice, the second with its last two modes barely seen.
func twoLayerLRU(t *testing.T, dir string) string {
	t.Helper()
	f, err := arrays.Open("../testdata/layouts/lru_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	var model []arrays.Named
	for _, in := range f.Arrays() {
		a, err := f.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(in.Name, "layers_0.seq.")
		model = append(model, arrays.Named{Name: "layers.0.seq." + name, Array: a})
		b := a.Clone()
		if name == "C_re" || name == "C_im" { // the second layer's last two modes barely seen: fewer states reach the tolerance
			for i := range b.Data {
				if i%4 >= 2 {
					b.Data[i] *= 1e-4
				}
			}
		}
		model = append(model, arrays.Named{Name: "layers.1.seq." + name, Array: b})
	}
	f.Close()
	in := filepath.Join(dir, "model.npz")
	data, err := arrays.EncodeNPZ(model, arrays.NPZOptions{})
	if err != nil || os.WriteFile(in, data, 0o644) != nil {
		t.Fatal(err)
	}
	return in
}

// TestDistillModelMIMOShards: a model of MIMO layers split over two shards (one unit each)
// and merged is the single run's bytes.
func TestDistillModelMIMOShards(t *testing.T) {
	dir := t.TempDir()
	in := twoLayerLRU(t, dir)
	args := []string{"distill", in, "--order", "4", "--length", "128"}
	single := filepath.Join(dir, "single.npz")
	if r := run(t, "", append(args, "-o", single)...); r.code != 0 {
		t.Fatal(r)
	}
	sharded := filepath.Join(dir, "sharded.npz")
	var parts []string
	for i := range 2 {
		if r := run(t, "", append(args, "--shard", strconv.Itoa(i)+"/2", "-o", sharded)...); r.code != 0 {
			t.Fatal(r)
		}
		parts = append(parts, sharded+".shard-"+strconv.Itoa(i)+"-of-2.json")
	}
	if r := run(t, "", append(append([]string{"merge"}, parts...), "-o", sharded)...); r.code != 0 {
		t.Fatal(r)
	}
	a, err1 := os.ReadFile(single)
	b, err2 := os.ReadFile(sharded)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		t.Errorf("the merged shards differ from the single run (%v, %v)", err1, err2)
	}
}

// TestDistillMarginalMIMONamesFile: an LRU layer with a mode on the unit circle (|λ| =
// exp(−exp(−30)), 1 − 9e-14) cannot be reduced; the refusal, from the unit's fit, began
// "ssmlab: layers.0.lru.[0:2]: mode 0: …", naming no file, against every other failure's
// "ssmlab: FILE: problem".
func TestDistillMarginalMIMONamesFile(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "lru.npz")
	var named []arrays.Named
	for _, a := range []struct {
		name  string
		shape []int
		data  []float64
	}{
		{"layers.0.lru.nu_log", []int{2}, []float64{-30, 0}},
		{"layers.0.lru.theta_log", []int{2}, []float64{0, -1}},
		{"layers.0.lru.gamma_log", []int{2}, []float64{0, 0}},
		{"layers.0.lru.B_re", []int{2, 2}, []float64{1, 0.5, -0.5, 1}},
		{"layers.0.lru.B_im", []int{2, 2}, []float64{0.25, 0, 0, 0.25}},
		{"layers.0.lru.C_re", []int{2, 2}, []float64{1, 0, 0.5, 1}},
		{"layers.0.lru.C_im", []int{2, 2}, []float64{0, 0.5, 0, 0}},
		{"layers.0.lru.D", []int{2}, []float64{0.1, 0.2}},
	} {
		arr, err := arrays.New(a.shape, a.data)
		if err != nil {
			t.Fatal(err)
		}
		named = append(named, arrays.Named{Name: a.name, Array: arr})
	}
	var buf bytes.Buffer
	if err := arrays.WriteNPZ(&buf, named, arrays.NPZOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckpt, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "distill", ckpt, "--order", "2", "-o", filepath.Join(dir, "out.npz"))
	want := "ssmlab: " + ckpt + `: layers.0.lru.[0:2]: mode 0: balanced truncation of a MIMO layer: not stable`
	if r.code != ExitFailure || r.stdout != "" || !strings.Contains(r.stderr, want) {
		t.Errorf("want exit 1 and %q; got %v", want, r)
	}
}

// TestNamedByCheckpointOnce: an error of fitting a checkpoint's units is named by the
// checkpoint once, by type, not by its text: the checkpoint's own (through checkpointSource)
// as it is, even one that does not begin with its path; any other, a unit's fit or the work
// directory's, prefixed with it.
func TestNamedByCheckpointOnce(t *testing.T) {
	const path = "m.pt"
	for _, c := range []struct {
		err  error
		want string
	}{
		{markSource(errors.New("m.pt: no layer \"x\"")), `m.pt: no layer "x"`},
		{markSource(errors.New("reading: short file")), "reading: short file"},
		{errors.New("layers.0.lru.[0:2]: mode 0: not stable"), "m.pt: layers.0.lru.[0:2]: mode 0: not stable"},
		{errors.New("m.pt: a unit's error that begins with the path"), "m.pt: m.pt: a unit's error that begins with the path"},
	} {
		if got := namedByCheckpoint(path, c.err).Error(); got != c.want {
			t.Errorf("%q named %q, want %q", c.err, got, c.want)
		}
	}
	if markSource(nil) != nil {
		t.Error("markSource(nil) is not nil")
	}
}
