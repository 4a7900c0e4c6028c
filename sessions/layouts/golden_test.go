package layouts_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// goldenDir holds the layers testdata/layouts/gen_layouts.py stored with torch.save, as
// safetensors and as .npz, and the kernels the reference code's formulas give for them.
const goldenDir = "../../testdata/layouts"

type goldenCase struct {
	Layout  string            `json:"layout"`
	Prefix  string            `json:"prefix"`
	Options map[string]string `json:"options"`
	DType   string            `json:"dtype"`
	Kernels [][]float64       `json:"kernels"`
}

type goldenFile struct {
	Length  int                   `json:"length"`
	Cases   map[string]goldenCase `json:"cases"`
	Exports map[string]struct {
		DTypes   []string `json:"dtypes"`
		RelError float64  `json:"rel_error"`
	} `json:"exports"`
}

// goldenFiles are the reference files: gen_layouts.py's (python3-torch), gen_sos.py's
// (python3-scipy, whose sosfilt gives the sos layout's kernels) and gen_ckpt.py's
// (python3-torch: checkpoints as users bring them, such as a Lightning .ckpt).
var goldenFiles = []string{"expected.json", "sos_expected.json", "ckpt_expected.json"}

func loadGolden(t *testing.T) goldenFile { return loadGoldenFile(t, goldenFiles[0]) }

func loadGoldenFile(t *testing.T, file string) goldenFile {
	t.Helper()
	var g goldenFile
	numtest.ReadJSON(t, filepath.Join(goldenDir, file), &g)
	return g
}

// goldenTol bounds the relative L2 difference between an imported layer's impulse response
// and the reference kernel computed in float64 from the same stored values (float32 files
// too: float32 values are exact in float64). The two sides evaluate the same sums in other
// orders (ssmlab: modes and a recurrence; the reference: Vandermonde products, FFTs, a
// Cauchy kernel and Woodbury's identity for S4, sin stacks for Hyena); measured below 1e-13
// except where noted in goldenTolOf.
const goldenTol = 1e-12

// goldenTolOf: S4 (DPLR) reaches its kernel through an inverse FFT of the Cauchy sum and its
// undoing of C̃ through a solve with I − Āᴸ (condition ≈ 10), measured 3e-14; the same bound
// holds.
func goldenTolOf(layout string) float64 { return goldenTol }

func optionsOf(t *testing.T, c goldenCase) layouts.Options {
	o := layouts.Options{Values: map[string]string{}}
	for k, v := range c.Options {
		if k != "pairs" {
			o.Values[k] = v
			continue
		}
		for _, p := range strings.Split(v, ";") {
			a, b, _ := strings.Cut(p, ",")
			i, _ := strconv.Atoi(a)
			j, _ := strconv.Atoi(b)
			o.Pairs = append(o.Pairs, [2]int{i, j})
		}
	}
	return o
}

// TestGoldenLayouts imports every golden checkpoint by auto-detection and checks that each
// channel's impulse response is the reference kernel: S4D (zoh, bilinear, dss, a real pole,
// tiled SSMs; the minimal s4d.py), S4 (DPLR, C̃ undone), StripedHyena (and its short FIR
// filters), Hyena (the implicit filter evaluated), LRU, S5 and RotRNN (the diagonal pairs and
// named ones), RTF (the truncation correction undone), in float64 and float32, from torch.save,
// safetensors and .npz files; and sos (scipy's Butterworth, elliptic and a padded bank, by
// sosfilt).
func TestGoldenLayouts(t *testing.T) {
	layoutsSeen := map[string]bool{}
	worstSeen := 0.0
	defer func() { t.Logf("worst relative difference over all golden files: %.2g", worstSeen) }()
	for _, file := range goldenFiles {
		checkGoldenFile(t, loadGoldenFile(t, file), layoutsSeen, &worstSeen)
	}
	for _, l := range layouts.Layouts {
		if !layoutsSeen[string(l)] {
			t.Errorf("no golden file for the %s layout", l)
		}
	}
}

func checkGoldenFile(t *testing.T, g goldenFile, layoutsSeen map[string]bool, worstSeen *float64) {
	names := make([]string, 0, len(g.Cases))
	for n := range g.Cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		c := g.Cases[name]
		t.Run(name, func(t *testing.T) {
			af, err := arrays.Open(filepath.Join(goldenDir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer af.Close()
			detected := layouts.Detect(af.Arrays())
			if len(detected) != 1 || string(detected[0].Layout) != c.Layout || detected[0].Prefix != c.Prefix {
				t.Fatalf("detected %+v, want one %s layer at %q", detected, c.Layout, c.Prefix)
			}
			r, err := layouts.Import(af, detected[0], optionsOf(t, c))
			if err != nil {
				t.Fatal(err)
			}
			got := make([][]float64, len(c.Kernels))
			switch {
			case r.Bank != nil:
				if len(r.Bank.Channels) != len(c.Kernels) {
					t.Fatalf("%d channels, want %d", len(r.Bank.Channels), len(c.Kernels))
				}
				for i, f := range r.Bank.Channels {
					got[i] = f.Impulse(g.Length)
				}
			default:
				for i := range got {
					n := r.Kernels.Shape[1]
					got[i] = r.Kernels.Data[i*n : i*n+min(n, g.Length)]
				}
			}
			for i, want := range c.Kernels {
				want = want[:len(got[i])]
				e := filters.RelDiff(want, got[i])
				*worstSeen = max(*worstSeen, e)
				if !(e <= goldenTolOf(c.Layout)) {
					t.Errorf("channel %d: the impulse response differs from the reference kernel by %.3g", i, e)
				}
			}
		})
		layoutsSeen[c.Layout] = true
	}
}

// Import names the tensors a layer was read from: every tensor of a golden checkpoint's
// layer, and no other.
func TestImportNamesItsTensors(t *testing.T) {
	for file, want := range map[string][]string{
		"hyena_64.pt": {"pos_emb.z", "pos_emb.t", "implicit_filter.0.weight", "implicit_filter.0.bias", "implicit_filter.1.freq",
			"implicit_filter.2.weight", "implicit_filter.2.bias", "implicit_filter.3.freq", "implicit_filter.4.weight",
			"implicit_filter.4.bias", "implicit_filter.5.freq", "implicit_filter.6.weight", "modulation.deltas", "bias"},
		"s4_64.pt":           {"kernel.A_real", "kernel.A_imag", "kernel.P", "kernel.B", "kernel.C", "kernel.inv_dt", "D", "kernel.l_kernel"},
		"stripedhyena_64.pt": {"poles", "residues", "D"},
		"rtf_64.pt":          {"ab", "h_0"},
	} {
		af, err := arrays.Open(filepath.Join(goldenDir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer af.Close()
		l, err := layouts.Find(af.Arrays(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := layouts.Import(af, l, layouts.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(r.Tensors)
		for i := range want {
			want[i] = l.Prefix + want[i]
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
	}
}

// TestS4NoteSaysWhyCAsStored: an S4 layer whose C is taken as stored says why: its l_kernel
// buffer holds 0, or it has none and no --length was given (or 0 was). The note said
// "l_kernel is 0" of a layer with no l_kernel.
func TestS4NoteSaysWhyCAsStored(t *testing.T) {
	af, err := arrays.Open(filepath.Join(goldenDir, "s4_64.pt"))
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	var noBuffer layouts.NamedSource // the layer without its kernel.l_kernel buffer
	for _, in := range af.Arrays() {
		if strings.HasSuffix(in.Name, "kernel.l_kernel") {
			continue
		}
		a, err := af.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		noBuffer = append(noBuffer, arrays.Named{Name: in.Name, Array: a})
	}
	l, err := layouts.Find(noBuffer.Arrays(), layouts.S4, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    map[string]string
		want string
	}{
		{nil, "C taken as stored: no l_kernel buffer and no --length)"},
		{map[string]string{"length": "0"}, "C taken as stored: no l_kernel buffer, and --length 0)"},
		{map[string]string{"length": "64"}, "C̃ = C(I − Āᴸ) undone for L = 64 from --length)"},
	} {
		r, err := layouts.Import(noBuffer, l, layouts.Options{Values: tc.o})
		if err != nil || !strings.Contains(r.Note, tc.want) {
			t.Errorf("no l_kernel buffer, options %v: note %q, %v; want it to say %q", tc.o, r.Note, err, tc.want)
		}
	}
}

// TestDetectedOrderIsRealStates: the order Detect gives a layer (what import --list prints) is
// its real state count in every layout, the order it imports as and distill's --order counts:
// no channel of the golden layers imports above it, and none of a layer of complex modes at
// or below half of it (StripedHyena's and LRU's listed order was their count of complex
// poles: 4 for what imports as "order up to 8"). ComplexModes is the layout's own count, half
// the order where it is set.
func TestDetectedOrderIsRealStates(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*_64.pt"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d golden files: %v", len(files), err)
	}
	seen := map[layouts.Layout]bool{}
	for _, name := range files {
		f, err := arrays.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range layouts.Detect(f.Arrays()) {
			if l.Length > 0 {
				continue // kernels: a length, not an order
			}
			r, err := layouts.Import(f, l, layouts.Options{})
			if err != nil || r.Bank == nil {
				t.Errorf("%s: %s: %v", name, l.Layout, err)
				continue
			}
			n := 0
			for _, c := range r.Bank.Channels {
				n = max(n, c.Order())
			}
			seen[l.Layout] = true
			if n > l.Order || (l.ComplexModes > 0 && 2*n <= l.Order) {
				t.Errorf("%s: %s layer listed as %s imports as order %d", name, l.Layout, l.Size(), n)
			}
			if l.ComplexModes > 0 && l.Order != 2*l.ComplexModes {
				t.Errorf("%s: %s layer: order %d, %d complex modes", name, l.Layout, l.Order, l.ComplexModes)
			}
		}
		f.Close()
	}
	for _, lay := range []layouts.Layout{layouts.S4D, layouts.S4, layouts.StripedHyena, layouts.LRU, layouts.S5, layouts.RotRNN, layouts.RTF} {
		if !seen[lay] {
			t.Errorf("no golden %s layer was checked", lay)
		}
	}
	f, err := arrays.Open(filepath.Join(goldenDir, "stripedhyena_64.pt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ls := layouts.Detect(f.Arrays()); len(ls) != 1 || ls[0].Order != 8 || ls[0].ComplexModes != 4 || ls[0].Size() != "order 8 (4 complex poles)" {
		t.Errorf("stripedhyena_64.pt: %+v", ls)
	}
}

// TestDtTransformSaid: an S4 or S4D layer read without --dt-transform says, in a warning,
// that its inv_dt went through exp, SSMKernel's default, which the checkpoint does not record,
// while state-spaces/s4's layer configs train with softplus, and how far apart the two put
// its steps (computed here from the file's inv_dt); its note names the transform. Read with
// the default, a layer trained with the configs' softplus was 1.18 from its kernel over 4096
// samples, and nothing said that a transform was assumed. --dt-transform given says nothing.
func TestDtTransformSaid(t *testing.T) {
	for file, prefix := range map[string]string{"s4d_64.pt": "layers.0.layer.", "s4_64.pt": "encoder.layers.2.layer."} {
		af, err := arrays.Open(filepath.Join(goldenDir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer af.Close()
		l, err := layouts.Find(af.Arrays(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		inv, err := af.Read(prefix + "kernel.inv_dt")
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, x := range inv.Data {
			worst = max(worst, math.Abs(math.Exp(x)-math.Log1p(math.Exp(x)))/math.Exp(x))
		}
		r, err := layouts.Import(af, l, layouts.Options{})
		if err != nil {
			t.Fatal(err)
		}
		said := slices.ContainsFunc(r.Warnings, func(w string) bool {
			return strings.Contains(w, "dt_transform exp") && strings.Contains(w, "softplus") && strings.Contains(w, fmt.Sprintf("by up to %.2g relative", worst))
		})
		if !said || !strings.Contains(r.Note, "dt_transform exp") {
			t.Errorf("%s: warnings %q, note %q; want the transform assumed and the steps' difference %.2g", file, r.Warnings, r.Note, worst)
		}
		r, err = layouts.Import(af, l, layouts.Options{Values: map[string]string{"dt-transform": "exp"}})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "dt_transform") }) {
			t.Errorf("%s: --dt-transform exp given, yet %q", file, r.Warnings)
		}
	}
}

// TestHyenaStatelessModuleRefused: an implicit filter whose Sequential has a module without
// tensors (a Sin built with train_freq=False keeps freq out of the state_dict; another
// activation has none) cannot be evaluated from the checkpoint; its index was skipped, and
// the layer imported as Linear → Linear → … with no activation, without a word.
func TestHyenaStatelessModuleRefused(t *testing.T) {
	af, err := arrays.Open(filepath.Join(goldenDir, "hyena_64.pt"))
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	var noFreq layouts.NamedSource // the layer without its Sin modules' freq
	for _, in := range af.Arrays() {
		if strings.HasSuffix(in.Name, ".freq") {
			continue
		}
		a, err := af.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		noFreq = append(noFreq, arrays.Named{Name: in.Name, Array: a})
	}
	l, err := layouts.Find(noFreq.Arrays(), layouts.Hyena, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = layouts.Import(noFreq, l, layouts.Options{})
	if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), "implicit_filter.1 holds no tensor") {
		t.Errorf("an implicit filter without its Sin modules' freq: %v; want a refusal naming implicit_filter.1", err)
	}
}
