package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// layerKernels reads an s4d layer's kernels (length samples) from a checkpoint.
func layerKernels(t *testing.T, path, prefix string, length int) [][]float64 {
	t.Helper()
	f, err := arrays.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := layouts.Find(f.Arrays(), layouts.S4D, prefix)
	if err != nil {
		t.Fatal(err)
	}
	r, err := layouts.Import(f, l, layouts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float64
	for _, c := range r.Bank.Channels {
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
// Under the bilinear disc (not the shared fit's zero-order hold) it is still refused, and
// by default it goes to rtf, fitted channel by channel, as before.
func TestDistillModelSharedModes(t *testing.T) {
	const in, prefix, length = "../testdata/layouts/s4d_64.npz", "layers.0.layer.", 256
	dir := t.TempDir()
	want := layerKernels(t, in, prefix, length)
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
		got := layerKernels(t, out, prefix, length)
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
		first, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		r = run(t, "", args...)
		second, err := os.ReadFile(out)
		if r.code != 0 || err != nil || !bytes.Equal(first, second) || !strings.Contains(r.stderr, "done before (work directory)") {
			t.Errorf("order %s: a re-run wrote other bytes or fitted again (%v): %v", order, err, r)
		}
	}
	out := filepath.Join(dir, "bilinear.npz")
	r := run(t, "", "distill", in, "--order", "4", "--length", "256", "--to-layout", "s4d", "--disc", "bilinear", "-o", out)
	if r.code != 1 || !strings.Contains(r.stderr, "n_ssm 1") || !strings.Contains(r.stderr, "--to-layout rtf or stripedhyena") {
		t.Errorf("bilinear: %v", r)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bilinear: wrote %s (%v)", out, err)
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
