package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// TestDistillModelBidirectionalS5: a bidirectional S5 layer (S5SSM bidirectional=True: C1 on
// the forward scan, C2 on the reverse one; testdata/layouts/s5_bidir_64.pt, H = 3, P = 4; or
// C_init complex_normal's one C of (H, 2P, 2), s5_bidir_cn_64.pt) is reduced whole as one
// layer of 2H outputs, its causal kernels then its anti-causal ones, and written back as C1
// and C2 (or one C) for the same module with a smaller P. The manifest's 2H errors are
// the written layer's against the input's, as Import reads both; at the layer's own order it is
// exact; the module's own scans (check_distilled.py, each kernel with the other C zeroed)
// compute the same errors. Such a layer was refused ("its module is of a variant that the s5
// layout is not written in").
func TestDistillModelBidirectionalS5(t *testing.T) {
	// C1 and C2, or one C of (H, 2P, 2) from a module built with C_init complex_normal
	// (written back so).
	for _, in := range []string{"../testdata/layouts/s5_bidir_64.pt", "../testdata/layouts/s5_bidir_cn_64.pt"} {
		t.Run(filepath.Base(in), func(t *testing.T) { distilBidirectionalS5(t, in, strings.Contains(in, "_cn_")) })
	}
}

func distilBidirectionalS5(t *testing.T, in string, stacked bool) {
	const (
		prefix = "encoder.layers.0.seq."
		length = 256
	)
	dir := t.TempDir()
	want := mimoResponses(t, in, layouts.S5, prefix, length)
	if len(want) != 6 {
		t.Fatalf("the input reads as %d outputs, want 2H = 6", len(want))
	}
	errs := map[string][]float64{}
	var pairs []string
	// Orders 2 and 5, not 3 and 4: order 4 keeps 3 states here (two modes, one real).
	for _, order := range []string{"2", "5", "8"} {
		out := filepath.Join(dir, "bidir"+order+".pt")
		r := run(t, "", "distill", in, "--order", order, "--length", "256", "-o", out)
		if r.code != 0 || !strings.Contains(r.stderr, "bidirectional=True: channels 0–2 its forward outputs, 3–5 its backward ones") {
			t.Fatalf("order %s: %v", order, r)
		}
		m := readManifest(t, out)
		if len(m.Layers) != 1 || m.Layers[0].ToLayout != "s5" || len(m.Layers[0].Channels) != len(want) ||
			!strings.Contains(m.Layers[0].Module, "bidirectional=True") {
			t.Fatalf("order %s: manifest %+v", order, m.Layers)
		}
		// The bank's warning that C2 is left out does not apply to the layer taken whole.
		if w := strings.Join(m.Layers[0].Warnings, "\n"); strings.Contains(w, "left out") {
			t.Errorf("order %s: the manifest warns %q", order, w)
		}
		got := mimoResponses(t, out, layouts.S5, prefix, length)
		for o, ch := range m.Layers[0].Channels {
			e := rowError(want[o], got[o])
			errs[order] = append(errs[order], e)
			// As in TestDistillModelMIMO: the Gramians' closed form leaves about 1e-8.
			if d := math.Abs(e - ch.RelError); d > 1e-6*e+1e-7 {
				t.Errorf("order %s, output %d: the written layer is %.6g from the input, the manifest says %.6g", order, o, e, ch.RelError)
			}
			if ch.Order > atoiOrder(order) || ch.Order < atoiOrder(order)-2 || !ch.Stable {
				t.Errorf("order %s, output %d: order %d, stable %v", order, o, ch.Order, ch.Stable)
			}
		}
		f, err := arrays.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string][]int{}
		for _, a := range f.Arrays() {
			names[strings.TrimPrefix(a.Name, prefix)] = a.Shape
		}
		f.Close()
		p := names["Lambda_re"]
		if len(p) != 1 || p[0] < atoiOrder(order)/2 || p[0] > (atoiOrder(order)+1)/2 {
			t.Fatalf("order %s: Lambda_re of shape %v, want ⌈order/2⌉ modes", order, p)
		}
		if c := names["C"]; stacked && (len(names) != 6 || len(c) != 3 || c[1] != 2*p[0]) {
			t.Errorf("order %s: tensors %v, want one C of (H, 2P, 2)", order, names)
		}
		if _, ok := names["C"]; !stacked && (ok || len(names["C1"]) != 3 || len(names["C2"]) != 3) {
			t.Errorf("order %s: tensors %v, want C1 and C2 in place of C", order, names)
		}
		pairs = append(pairs, in, out)
	}
	t.Logf("errors per output (forward 0–2, backward 3–5) at orders 2, 5: %.3g, %.3g; at 8 (the layer's own): %.2g",
		errs["2"], errs["5"], errs["8"])
	for o := range want {
		if !(errs["8"][o] < 1e-9) || !(errs["2"][o] >= errs["5"][o]*0.999) {
			t.Errorf("output %d: errors %.3g, %.3g, %.3g at orders 2, 5, 8 (8 is the layer's own)", o, errs["2"][o], errs["5"][o], errs["8"][o])
		}
	}
	for i, res := range checkDistilled(t, len(pairs)/2, append([]string{"--pairs"}, pairs...)...) {
		l, ok := res.Layers[prefix]
		module := "s5 bidirectional"
		if stacked {
			module += " complex_normal"
		}
		if len(res.Layers) != 1 || !ok || l.Module != module || res.Copied.Count != 0 || len(res.Copied.Bad) > 0 || len(res.Copied.Extra) > 0 {
			t.Errorf("%s: layers %+v; copied %+v", pairs[2*i+1], res.Layers, res.Copied)
		}
		if len(l.RelErrors) != len(want) {
			t.Errorf("%s: the reference computes %d kernels, want %d", pairs[2*i+1], len(l.RelErrors), len(want))
		}
		t.Logf("%s: the module's scans: %.3g (manifest %.3g)", filepath.Base(pairs[2*i+1]), l.RelErrors, l.Manifest)
		checkModules(t, pairs[2*i+1], res)
	}
}
