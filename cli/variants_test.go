package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// variantCheckpoint writes an .npz of the golden file in's tensors, changed by edit (which
// may add, drop or replace tensors by name), for a variant of a layer's module.
func variantCheckpoint(t *testing.T, dir, name, in string, edit func(map[string]*arrays.Array) []string) string {
	t.Helper()
	f, err := arrays.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts := map[string]*arrays.Array{}
	var order []string
	for _, info := range f.Arrays() {
		a, err := f.Read(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		ts[info.Name] = a
		order = append(order, info.Name)
	}
	if edit != nil {
		order = append(order, edit(ts)...)
	}
	var out []arrays.Named
	for _, n := range order {
		if a, ok := ts[n]; ok {
			out = append(out, arrays.Named{Name: n, Array: a})
		}
	}
	path := filepath.Join(dir, name+".npz")
	data, err := arrays.EncodeNPZ(out, arrays.NPZOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustArray(t *testing.T, shape []int, data []float64) *arrays.Array {
	t.Helper()
	a, err := arrays.New(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestDistillModelVariants: a layer whose module is a variant its own layout is not written in
// (an S4D layer bidirectional or with untied Δt; an RTF layer with shared
// denominators or the l1_montel constraint; a StripedHyena layer of grouped systems) is
// refused before any fit when --to-layout names that layout, in one line naming the layer,
// the variant and the layouts that hold it, and nothing is written; by default it goes to
// another layout, saying why. They were written as the plain layout with exit 0: an RTF
// layer with num_a < D an ab of 2·D rows and no scalar, a bidirectional S4D layer a C of 2·H
// SSMs and a D of 2·H, which their modules do not load. (An S4D layer with is_real, which got
// an A_imag, is written back as such: TestDistillModelGoldenFamilies.)
func TestDistillModelVariants(t *testing.T) {
	dir := t.TempDir()
	const lay = "../testdata/layouts/"
	bidir := variantCheckpoint(t, dir, "s4d_bidir", lay+"s4d_bilinear_64.pt", func(ts map[string]*arrays.Array) []string {
		c := ts["layer.kernel.C"]
		ts["layer.kernel.C"] = mustArray(t, []int{2, 2, 4, 2}, append(slices.Clone(c.Data), c.Data...))
		return nil
	})
	untied := variantCheckpoint(t, dir, "s4d_untied", lay+"s4d_bilinear_64.pt", func(ts map[string]*arrays.Array) []string {
		ts["layer.kernel.inv_dt"] = mustArray(t, []int{2, 4}, []float64{0, -0.1, -0.2, -0.3, 0.1, 0.2, 0.3, 0.4})
		return nil
	})
	scalar := variantCheckpoint(t, dir, "rtf_montel", lay+"rtf_64.npz", func(ts map[string]*arrays.Array) []string {
		ts["layers.0.filter.scalar"] = mustArray(t, []int{2}, []float64{0.5, 0.25})
		return []string{"layers.0.filter.scalar"}
	})
	shared := variantCheckpoint(t, dir, "rtf_shared", lay+"rtf_64.npz", func(ts map[string]*arrays.Array) []string {
		ab := ts["layers.0.filter.ab"] // (2·D, N) with D = 2: one denominator for both
		ts["layers.0.filter.ab"] = mustArray(t, []int{3, 3}, slices.Clone(ab.Data[3:]))
		return nil
	})
	grouped := variantCheckpoint(t, dir, "sh_grouped", lay+"stripedhyena_64.npz", func(ts map[string]*arrays.Array) []string {
		for _, n := range []string{"poles", "residues"} { // one system for the 3 channels
			a := ts["blocks.1.filter."+n]
			ts["blocks.1.filter."+n] = mustArray(t, []int{1, 4, 1, 2}, slices.Clone(a.Data[:8]))
		}
		return nil
	})
	for _, c := range []struct {
		in, layout, prefix, variant, others string
	}{
		{bidir, "s4d", "layer.", "bidirectional", "rtf"},
		{untied, "s4d", "layer.", "dt_tie false", "rtf or stripedhyena"},
		{scalar, "rtf", "layers.0.filter.", "l1_montel", "s4d or stripedhyena"},
		{shared, "rtf", "layers.0.filter.", "shared denominators", "s4d or stripedhyena"},
		{grouped, "stripedhyena", "blocks.1.filter.", "hyena_filter_groups", "rtf or s4d"},
	} {
		out := filepath.Join(dir, "out-"+filepath.Base(c.in))
		args := []string{"distill", c.in, "--order", "2", "--length", "64", "-o", out}
		r := run(t, "", append(args, "--to-layout", c.layout)...)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "fitted") ||
			!strings.Contains(r.stderr, c.layout+` layer "`+c.prefix+`"`) || !strings.Contains(r.stderr, c.variant) || !strings.Contains(r.stderr, "--to-layout "+c.others) {
			t.Errorf("%s --to-layout %s: %v", c.in, c.layout, r)
		}
		for _, p := range []string{out, out + ".manifest.json", out + ".work"} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s --to-layout %s wrote %s (%v)", c.in, c.layout, p, err)
			}
		}
		// By default rtf is tried first: an RTF layer's variant is said, an S4D layer's
		// goes to rtf with no word of it.
		r = run(t, "", args...)
		if r.code != 0 || c.layout == "rtf" && !strings.Contains(r.stderr, c.variant) {
			t.Fatalf("%s: %v", c.in, r)
		}
		l := readManifest(t, out).Layers[0]
		if l.ToLayout == c.layout || c.layout == "rtf" && !strings.Contains(l.Why, c.variant) {
			t.Errorf("%s: written as %s (%s)", c.in, l.ToLayout, l.Why)
		}
	}
}

// TestDistillModelSaysImportWarnings: what import warns of when it reads a layer (here an S4D
// layer without D, whose direct term is taken as 0) distill CKPT says too, once per layer, on
// stderr and in the manifest's layer; it said nothing of it.
func TestDistillModelSaysImportWarnings(t *testing.T) {
	dir := t.TempDir()
	noD := variantCheckpoint(t, dir, "s4d_nod", "../testdata/layouts/s4d_bilinear_64.pt", func(ts map[string]*arrays.Array) []string {
		delete(ts, "layer.D")
		return nil
	})
	// --dt-transform exp: the layer's own, given, so that the missing D is the one warning.
	imp := run(t, "", "import", noD, "--dt-transform", "exp")
	const warning = `no "layer.D": the direct term D is taken as 0`
	if imp.code != 0 || !strings.Contains(imp.stderr, warning) {
		t.Fatalf("import: %v", imp)
	}
	out := filepath.Join(dir, "out.npz")
	r := run(t, "", "distill", noD, "--order", "2", "--length", "64", "--dt-transform", "exp", "-o", out)
	if r.code != 0 || strings.Count(r.stderr, warning) != 1 || !strings.Contains(r.stderr, `warning: s4d layer "layer.": `+warning+"\n") {
		t.Fatalf("distill: %v", r)
	}
	if l := readManifest(t, out).Layers[0]; !slices.Equal(l.Warnings, []string{warning}) {
		t.Errorf("manifest: warnings %q", l.Warnings)
	}
}

// TestDistillModelTruncLenFromFile: distill CKPT, and distill of the one layer to a filter
// file, take an RTF layer's trunc_len from a safetensors file's metadata as import does (one
// function): metadata that is no trunc_len is refused naming it (exit 1), and a --trunc-len
// that differs from it is refused as a command-line mistake (exit 2); distill CKPT named a
// flag the user had not given for the first and took --trunc-len over the file's for the
// second, and distill of the layer to a filter file took the file's over --trunc-len.
func TestDistillModelTruncLenFromFile(t *testing.T) {
	dir := t.TempDir()
	f, err := arrays.Open("../testdata/layouts/rtf_64.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts []arrays.Named
	for _, in := range f.Arrays() {
		a, err := f.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, arrays.Named{Name: in.Name, Array: a})
	}
	for _, c := range []struct {
		meta string
		args []string
		code int
		want string
	}{
		{"x64", nil, ExitFailure, `the file's metadata says trunc_len "x64": want an integer in [0, `},
		{"64", []string{"--trunc-len", "32"}, ExitUsage, "--trunc-len 32 conflicts with trunc_len 64 in the file's metadata"},
	} {
		in := filepath.Join(dir, "rtf-"+c.meta+".safetensors")
		data, err := arrays.EncodeSafetensors(ts, arrays.SafetensorsOptions{Metadata: map[string]string{"trunc_len": c.meta}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		imp := run(t, "", append([]string{"import", in}, c.args...)...)
		out := filepath.Join(dir, "out.safetensors")
		r := run(t, "", append([]string{"distill", in, "--order", "2", "-o", out}, c.args...)...)
		layer := run(t, "", append([]string{"distill", in, "--order", "2", "-o", filepath.Join(dir, "out.json")}, c.args...)...)
		for _, x := range []result{imp, r, layer} {
			if x.code != c.code || !strings.Contains(x.stderr, c.want) {
				t.Errorf("metadata %q %v: %v", c.meta, c.args, x)
			}
		}
	}
}

// TestExportLayoutOptions: export's help lists the layout options export uses, each saying
// how it writes (not import's "or S5 (zoh, bilinear)", not --short-filter), and an option of
// reading a layer only is refused with exit 2 saying so; --short-filter true read the
// written layer back as its short filters and failed with "short_filter_weight is missing".
func TestExportLayoutOptions(t *testing.T) {
	h := run(t, "", "export", "-h")
	if h.code != 0 || strings.Contains(h.stdout, "short-filter") || strings.Contains(h.stdout, "S5") || !strings.Contains(h.stdout, "--disc string") {
		t.Errorf("export -h: %v", h)
	}
	out := filepath.Join(t.TempDir(), "x.npz")
	r := run(t, "", "export", "../testdata/layouts/stripedhyena_64.npz", "--layout", "stripedhyena", "--short-filter", "true", "-o", out)
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "--short-filter is an option of import") || strings.Contains(r.stderr, "short_filter_weight is missing") {
		t.Errorf("export --short-filter: %v", r)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("export --short-filter wrote %s (%v)", out, err)
	}
}

// TestExportLayoutOfKernels: export --layout L of kernels (an imported Hyena layer) is
// refused with exit 1, saying to distil them first, and writes nothing; without --layout
// they are written as the tensor "kernels". They were written as "kernels" with exit 0
// whatever layout was asked for.
func TestExportLayoutOfKernels(t *testing.T) {
	dir := t.TempDir()
	const in = "../testdata/layouts/hyena_64.pt"
	for _, lay := range []string{"rtf", "s4d", "stripedhyena", "sos"} {
		out := filepath.Join(dir, lay+".safetensors")
		r := run(t, "", "export", in, "--layout", lay, "-o", out)
		if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "holds kernels, which the "+lay+" layout") || !strings.Contains(r.stderr, "distil them first") {
			t.Errorf("--layout %s: %v", lay, r)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--layout %s wrote %s (%v)", lay, out, err)
		}
	}
	out := filepath.Join(dir, "kernels.npz")
	if r := run(t, "", "export", in, "-o", out); r.code != 0 {
		t.Fatal(r)
	}
	if r := run(t, "", "import", out, "--list"); !strings.Contains(r.stdout, `"kernels"`) {
		t.Errorf("without --layout: %v", r)
	}
}

// TestDistillModelBidirectional: a bidirectional S4D layer (FFTConv bidirectional=True: C's
// first H rows causal, the next H anti-causal, applied flipped one sample ahead, D once)
// distilled by default is written as the rtf layout's tensors of RTF(d_model=H,
// bidirectional=True), which the reference code (testdata/scale/check_bidirectional.py) runs
// with the kernels FFTConv ran, causal and anti-causal, to within the fit's reported error.
func TestDistillModelBidirectional(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference code")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch, scipy").Run(); err != nil {
		t.Skipf("needs %s with torch and scipy (Debian's python3-torch, python3-scipy): %v", py, err)
	}
	dir := t.TempDir()
	in := variantCheckpoint(t, dir, "s4d_bidir", "../testdata/layouts/s4d_bilinear_64.pt", func(ts map[string]*arrays.Array) []string {
		c := ts["layer.kernel.C"] // (1, H, N/2, 2): the anti-causal rows differ from the causal ones
		back := make([]float64, len(c.Data))
		for i, v := range c.Data {
			back[len(back)-1-i] = 0.7 * v
		}
		ts["layer.kernel.C"] = mustArray(t, []int{2, 2, 4, 2}, append(slices.Clone(c.Data), back...))
		return nil
	})
	// StripedHyena has no anti-causal filters: --to-layout stripedhyena wrote 2·H causal
	// channels, which a model of width H refuses and one of 2·H runs as another model.
	sh := filepath.Join(dir, "sh.npz")
	r := run(t, "", "distill", in, "--order", "4", "--length", "64", "-o", sh, "--to-layout", "stripedhyena")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, `s4d layer "layer.": bidirectional: the stripedhyena layout holds causal filters only; --to-layout rtf `) {
		t.Errorf("--to-layout stripedhyena: %v", r)
	}
	if _, err := os.Stat(sh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--to-layout stripedhyena wrote %s (%v)", sh, err)
	}
	out := filepath.Join(dir, "out.npz")
	r = run(t, "", "distill", in, "--order", "4", "--length", "64", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "note: layer layer.: build it as RTF(d_model=2, bidirectional=True): ab's and h_0's channels 0–1 are causal, 2–3 anti-causal\n") {
		t.Fatalf("distill says nothing of the module that runs the layer: %v", r)
	}
	// The manifest keeps it too: read back, the tensors are those of a plain RTF of 2·H
	// channels, which loads them and runs another model.
	if m := readManifest(t, out); len(m.Layers) != 1 || !strings.HasPrefix(m.Layers[0].Module, "build it as RTF(d_model=2, bidirectional=True)") {
		t.Errorf("the manifest does not say how to build the module: %+v", m.Layers)
	}
	cmd := exec.Command(py, "../testdata/scale/check_bidirectional.py", in, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var res struct {
		ToLayout      string    `json:"to_layout"`
		ShapesOK      bool      `json:"shapes_ok"`
		RelErrors     []float64 `json:"rel_errors"`
		NormRatio     []float64 `json:"norm_ratio"`
		Manifest      []float64 `json:"manifest"`
		ReadBackError float64   `json:"read_back_error"`
		InputRelError float64   `json:"input_rel_error"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if !res.ShapesOK || len(res.RelErrors) != 4 || len(res.Manifest) != 4 {
		t.Fatalf("written as %s: not the tensors RTF(d_model=2, bidirectional=True) loads: %s", res.ToLayout, data)
	}
	t.Logf("%s", data)
	for c, e := range res.RelErrors {
		// The module's anti-causal kernel reaches the output over L − 1 samples, the fit's
		// error is over L: relative to the shorter norm it is at most the ratio larger.
		if bound := (1.01*res.Manifest[c] + 1.01*res.ReadBackError) * res.NormRatio[c]; e > bound+1e-10 {
			t.Errorf("channel %d: RTF(bidirectional=True) applies a kernel %.3g from the one FFTConv applies, above the fit's %.3g (read-back %.3g)", c, e, res.Manifest[c], res.ReadBackError)
		}
	}
}

// TestLayoutOptionMistakesAreUsage: a layout option's value outside its choices, and an option
// of a layout that no layer read has, are command-line mistakes (exit 2) and nothing is
// written: --disc foo, --length abc and --normalized maybe exited 1 after the file was read,
// and distill of a checkpoint ignored --bias for an LRU layer and --disc for a Hyena one,
// exiting 0, where import refused them.
func TestLayoutOptionMistakesAreUsage(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.json", filters.Document{Filter: testFilter(t)})
	const lay = "../testdata/layouts/"
	x := filepath.Join(dir, "x.pt")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", lay + "s4d_64.pt", "--disc", "foo"}, `--disc "foo": want zoh, bilinear, dss`},
		{[]string{"import", lay + "s4d_dss_64.pt", "--length", "abc"}, `--length "abc": want an integer in [0, 4194304]`},
		{[]string{"import", lay + "hyena_64.pt", "--normalized", "maybe"}, `--normalized "maybe": want true or false`},
		{[]string{"export", in, "--layout", "s4d", "--disc", "foo", "-o", x}, `--disc "foo": want zoh, bilinear, dss`},
		{[]string{"distill", lay + "s4d_64.pt", "--disc", "foo", "-o", x}, `--disc "foo": want zoh, bilinear, dss`},
		{[]string{"import", lay + "lru_64.pt", "--bias", "true"}, "--bias is an option of the hyena layout, not of lru"},
		{[]string{"distill", lay + "lru_64.pt", "--bias", "true", "-o", x}, "--bias is an option of the hyena layout, not of lru"},
		{[]string{"distill", lay + "hyena_64.pt", "--disc", "zoh", "-o", x}, "--disc is an option of the s4d and s5 layout, not of hyena"},
		{[]string{"distill", lay + "lru_64.pt", "--tensor", "layers_0.seq.", "--bias", "true"}, "--bias is an option of the hyena layout, not of lru"},
		{[]string{"export", in, "--layout", "rtf", "--disc", "zoh", "-o", x}, "--disc is an option of the s4d and s5 layout, not of rtf"},
		{[]string{"import", in, "--disc", "zoh"}, "--disc is an option of the s4d and s5 layout, and no layer is read from this file"},
		{[]string{"distill", in, "--bias", "false"}, "--bias is an option of the hyena layout, and no layer is read from this file"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 saying %q; got %v", strings.Join(tc.args, " "), tc.want, r)
		}
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"in.json"}) {
		t.Errorf("left %v", names)
	}
}

// TestLayerLengthRefusalsAreUsage: an import --length the layer read cannot take (beyond a
// Hyena layer's positions, outside the range an S4 layer's C̃ is undone for, none for an S4D
// layer's dss discretisation), and a distill CKPT --length or --trunc-len below the 2
// samples a fit needs for a layer distilled at it, are command-line mistakes (exit 2) whose
// one line names the flag and the layer, and nothing is written; these exited 1, as a
// failure of the file.
func TestLayerLengthRefusalsAreUsage(t *testing.T) {
	dir := t.TempDir()
	const lay = "../testdata/layouts/"
	out := filepath.Join(dir, "x.json")
	ckpt := []string{"--order", "2", "-o", filepath.Join(dir, "x.safetensors")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", lay + "hyena_32.pt", "--length", "49", "-o", out}, `hyena layer "backbone.layers.0.mixer.filter_fn.": --length 49 is beyond the 48 positions pos_emb holds`},
		{[]string{"import", lay + "s4_64.pt", "--length", "1", "-o", out}, `s4 layer "encoder.layers.2.layer.": --length 1: an S4 layer's C̃ is undone for a kernel length (its l_kernel) in [2, 4194304]`},
		{[]string{"import", lay + "s4d_dss_64.pt", "--disc", "dss", "-o", out}, "s4d layer: disc dss normalises the kernel by its length L: give --length L"},
		{append([]string{"distill", lay + "s4d_32.pt", "--length", "1"}, ckpt...), `distill: ` + lay + `s4d_32.pt: --length 1 is below the 2 samples a fit needs: s4d layer "layers.0.layer." records no kernel length, and is distilled at it`},
		{append([]string{"distill", lay + "rtf_32.safetensors", "--trunc-len", "1"}, ckpt...), `distill: ` + lay + `rtf_32.safetensors: --trunc-len 1: rtf layer "layers.0.filter." is distilled at its trunc_len; a fit needs at least 2 samples`},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 saying %q; got %v", strings.Join(tc.args, " "), tc.want, r)
		}
	}
	if names := numtest.DirNames(t, dir); len(names) != 0 {
		t.Errorf("left %v", names)
	}
}
