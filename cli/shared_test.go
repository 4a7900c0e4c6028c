package cli

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// importLayer reads the layer of layout lay at prefix of a checkpoint, as import does.
func importLayer(t *testing.T, path string, lay layouts.Layout, prefix string, values map[string]string) layouts.Result {
	t.Helper()
	f, err := arrays.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := layouts.Find(f.Arrays(), lay, prefix)
	if err != nil {
		t.Fatal(err)
	}
	r, err := layouts.Import(f, l, layouts.Options{Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// layerKernels reads a layer's kernels (length samples) from a checkpoint.
func layerKernels(t *testing.T, path string, lay layouts.Layout, prefix string, length int, values map[string]string) [][]float64 {
	t.Helper()
	var out [][]float64
	for _, c := range importLayer(t, path, lay, prefix, values).Bank.Channels {
		out = append(out, c.Impulse(length))
	}
	return out
}

// TestDistillModelSharedModes: an S4D layer whose channels share one SSM (n_ssm 1, the
// default of state-spaces/s4's layer configs) is distilled with --to-layout s4d into modes
// still shared (A and B of one row, one Δt per channel), which its own module loads: the
// manifest's errors are those of the written layer's kernels against the input's, at the
// layer's own order they are rounding, and a re-run takes the fit from the work directory
// and writes the same bytes. It was refused ("n_ssm 1 (A and B shared among the 3 channels)").
// Under the bilinear disc it is written so (exact at its own order too); under dss it is
// still refused; by default it goes to rtf, fitted channel by channel, as before.
func TestDistillModelSharedModes(t *testing.T) {
	const in, prefix, length = "../testdata/layouts/s4d_64.npz", "layers.0.layer.", 256
	dir := t.TempDir()
	want := layerKernels(t, in, layouts.S4D, prefix, length, nil)
	for _, order := range []string{"4", "8"} {
		out := filepath.Join(dir, "out"+order+".npz")
		args := []string{"distill", in, "--order", order, "--length", "256", "--to-layout", "s4d", "-o", out}
		r := run(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stderr, "fitted with its SSMs' modes shared, as its module shares them (n_ssm 1 over 3 channels, "+strconv.Itoa(atoiOrder(order)/2)+" modes each)") {
			t.Fatalf("order %s: %v", order, r)
		}
		f, err := arrays.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		shapes := map[string][]int{}
		for _, a := range f.Arrays() {
			shapes[a.Name] = a.Shape
		}
		f.Close()
		if s := shapes[prefix+"kernel.A_real"]; len(s) != 2 || s[0] != 1 || strconv.Itoa(2*s[1]) != order {
			t.Errorf("order %s: A_real of shape %v, want (1, %s/2)", order, s, order)
		}
		if s := shapes[prefix+"kernel.inv_dt"]; len(s) != 2 || s[0] != 3 || s[1] != 1 {
			t.Errorf("order %s: inv_dt of shape %v, want (3, 1)", order, s)
		}
		got := layerKernels(t, out, layouts.S4D, prefix, length, nil)
		m := readManifest(t, out)
		for c, ch := range m.Layers[0].Channels {
			e := filters.RelDiff(want[c], got[c])
			if d := e - ch.RelError; d > 1e-9*ch.RelError+1e-14 || d < -1e-9*ch.RelError-1e-14 {
				t.Errorf("order %s, channel %d: the written layer is %.6g from the input, the manifest says %.6g", order, c, e, ch.RelError)
			}
			if order == "8" && !(e < 1e-9) {
				t.Errorf("order 8 (the layer's own), channel %d: %.3g from the input", c, e)
			}
		}
		rerunSameBytes(t, out, args, "order "+order)
	}
	// Under the bilinear disc the poles are the bilinear transform's, and the layer at its own
	// order is fitted to rounding too.
	out := filepath.Join(dir, "bilinear.npz")
	bil := map[string]string{"disc": "bilinear"}
	r := run(t, "", "distill", in, "--order", "8", "--length", "256", "--to-layout", "s4d", "--disc", "bilinear", "-o", out)
	if r.code != 0 {
		t.Fatalf("bilinear: %v", r)
	}
	wantBil, gotBil := layerKernels(t, in, layouts.S4D, prefix, length, bil), layerKernels(t, out, layouts.S4D, prefix, length, bil)
	for c := range wantBil {
		if e := filters.RelDiff(wantBil[c], gotBil[c]); !(e < 1e-9) {
			t.Errorf("bilinear, channel %d: %.3g from the input", c, e)
		}
	}
	// The dss disc (its kernel normalised by its length) is not written from shared modes.
	out = filepath.Join(dir, "dss.npz")
	r = run(t, "", "distill", in, "--order", "4", "--length", "256", "--to-layout", "s4d", "--disc", "dss", "-o", out)
	if r.code != 1 || !strings.Contains(r.stderr, "n_ssm 1") || !strings.Contains(r.stderr, "--to-layout rtf or stripedhyena") {
		t.Errorf("dss: %v", r)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dss: wrote %s (%v)", out, err)
	}
	// Fitted together, at one order, by variable projection: other asks are refused first.
	for _, extra := range [][]string{{"--order", "auto", "--tol", "1e-3"}, {"--order", "4", "--init", "zeros"}} {
		out := filepath.Join(dir, "refused.npz")
		r := run(t, "", append([]string{"distill", in, "--length", "256", "--to-layout", "s4d", "-o", out}, extra...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "shares its SSMs' modes") || strings.Contains(r.stderr, "fitted;") {
			t.Errorf("%v: %v", extra, r)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: wrote %s (%v)", extra, out, err)
		}
	}
	out = filepath.Join(dir, "default.npz")
	if r := run(t, "", "distill", in, "--order", "4", "--length", "256", "-o", out); r.code != 0 {
		t.Fatalf("default: %v", r)
	}
	if l := readManifest(t, out).Layers[0]; l.ToLayout != "rtf" {
		t.Errorf("default: written as %s, want rtf", l.ToLayout)
	}
}

func atoiOrder(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestDistillModelSharedModesS4: an S4 (DPLR) layer of one SSM shared by its channels (the
// default of state-spaces/s4's s4 layer config: mode nplr, n_ssm 1, dt_transform softplus)
// written with --to-layout s4d keeps its SSM shared: A and B of one row, the layer's
// transforms and disc (bilinear), and a note that its module loads it built with mode diag;
// the written layer, read as that module reads it, is the manifest's errors away from the
// input's kernels, and at the layer's own order exact. It was written with an A per channel,
// which that module (n_ssm 1) does not load.
func TestDistillModelSharedModesS4(t *testing.T) {
	dir := t.TempDir()
	const prefix, length = "encoder.layers.2.layer.", 128
	in := variantCheckpoint(t, dir, "s4_nssm1", "../testdata/layouts/s4_64.npz", func(ts map[string]*arrays.Array) []string {
		for _, n := range []string{"kernel.A_real", "kernel.A_imag"} {
			a := ts[prefix+n] // (2, N/2): keep SSM 0
			ts[prefix+n] = mustArray(t, []int{1, a.Shape[1]}, slices.Clone(a.Data[:a.Shape[1]]))
		}
		for _, n := range []string{"kernel.B", "kernel.P"} {
			a := ts[prefix+n] // (1, 2, N/2, 2)
			ts[prefix+n] = mustArray(t, []int{1, 1, a.Shape[2], 2}, slices.Clone(a.Data[:2*a.Shape[2]]))
		}
		return nil
	})
	// No l_kernel in the file: C̃ is undone for the length distilled at, as distill reads it.
	want := layerKernels(t, in, layouts.S4, prefix, length, map[string]string{"dt-transform": "softplus", "length": "128"})
	outBil := map[string]string{"dt-transform": "softplus", "disc": "bilinear"} // as the module built with mode diag reads it
	for _, order := range []int{4, 6} {
		out := filepath.Join(dir, fmt.Sprintf("out%d.npz", order))
		r := run(t, "", "distill", in, "--order", strconv.Itoa(order), "--length", "128", "--dt-transform", "softplus", "--to-layout", "s4d", "-o", out)
		if r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("(n_ssm 1 over 2 channels, %d modes each); its module loads it built with mode diag (SSMKernelDiag), disc bilinear, dt_transform softplus, real_transform exp, imag_transform none, n_ssm 1 and d_state %d", order/2, order)) {
			t.Fatalf("%v", r)
		}
		got := layerKernels(t, out, layouts.S4D, prefix, length, outBil)
		for c, ch := range readManifest(t, out).Layers[0].Channels {
			e := filters.RelDiff(want[c], got[c])
			if math.Abs(e-ch.RelError) > 1e-9*ch.RelError+1e-14 {
				t.Errorf("order %d, channel %d: the written layer is %.6g from the input, the manifest says %.6g", order, c, e, ch.RelError)
			}
			if order == 6 && !(e < 1e-9) { // the layer's own order: its bilinear poles held exactly
				t.Errorf("order 6, channel %d: %.3g from the input", c, e)
			}
		}
	}
	out := filepath.Join(dir, "out4.npz")
	f, err := arrays.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, a := range f.Arrays() {
		if strings.HasSuffix(a.Name, "kernel.A_real") && a.Shape[0] != 1 {
			t.Errorf("%s of shape %v, want one row", a.Name, a.Shape)
		}
	}
}

// TestDistillS4WrittenForItsModule: an S4 (DPLR) layer of one SSM a channel, distilled
// without --to-layout, goes to the s4d layout (rtf does not hold the fit) for SSMKernelDiag
// built with the layer's own disc (bilinear) and transforms, those its config gives, and the
// note and the manifest's module say so: the written layer read so is the input's layer at
// its own order. It was written for s4d's defaults (zoh, exp) and nothing said how to build
// the module: read as a module built from the same config with mode diag reads it
// (softplus, bilinear), an S4 layer of a QA pass was 1.3 from the input where the manifest
// said 0.676.
func TestDistillS4WrittenForItsModule(t *testing.T) {
	dir := t.TempDir()
	const prefix, length = "encoder.layers.2.layer.", 64
	in := filepath.Join("..", "testdata", "layouts", "s4_64.pt") // l_kernel 64
	values := map[string]string{"dt-transform": "softplus"}
	want := layerKernels(t, in, layouts.S4, prefix, length, values)
	out := filepath.Join(dir, "out.pt")
	r := run(t, "", "distill", in, "--order", "6", "--dt-transform", "softplus", "--to-layout", "s4d", "-o", out)
	const module = "built with mode diag (SSMKernelDiag), disc bilinear, dt_transform softplus, real_transform exp, imag_transform none, n_ssm None (one SSM a channel) and d_state 8" // a real pole takes a mode
	if r.code != 0 || !strings.Contains(r.stderr, "layer encoder.layers.2.layer.: written for SSMKernelDiag: its module loads it "+module) {
		t.Fatalf("%v", r)
	}
	if m := readManifest(t, out).Layers[0].Module; m != module {
		t.Errorf("manifest: module %q, want %q", m, module)
	}
	got := layerKernels(t, out, layouts.S4D, prefix, length, map[string]string{"dt-transform": "softplus", "disc": "bilinear"})
	for c := range want {
		if e := filters.RelDiff(want[c], got[c]); !(e < 1e-9) {
			t.Errorf("channel %d: the written layer read by its module is %.3g from the input", c, e)
		}
	}
}

// rerunSameBytes runs args again, which wrote out: the re-run takes every unit from the work
// directory and writes the same bytes.
func rerunSameBytes(t *testing.T, out string, args []string, what string) {
	t.Helper()
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, "", args...)
	second, err := os.ReadFile(out)
	if r.code != 0 || err != nil || !bytes.Equal(first, second) || !strings.Contains(r.stderr, "done before (work directory)") {
		t.Errorf("%s: a re-run wrote other bytes or fitted again (%v): %v", what, err, r)
	}
}
