package sessions

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/train"
	"github.com/ssmlab/ssmlab/train/plan"
)

// TestCheckpointLengthOfUnrecordedKernels: a layer whose kernel depends on a length it does
// not record is read at the length distilled at, as import reads it with --length: an S4D
// layer with the dss discretisation (distill refused it, asking for a --length its own
// --length did not feed) and an S4 layer stored without its l_kernel buffer (its C̃ was
// taken as C: 0.5058885 where the module's kernel at l_kernel 64 gives 0.5058848).
func TestCheckpointLengthOfUnrecordedKernels(t *testing.T) {
	for _, c := range []struct {
		file string
		opts map[string]string
	}{
		{"../testdata/layouts/s4d_dss_64.pt", map[string]string{"disc": "dss"}},
		{"../testdata/layouts/s4_32.safetensors", nil},
	} {
		const length = 64
		kernels := func(opts map[string]string) [][]float64 {
			ck, err := OpenCheckpoint(c.file, CheckpointOptions{Options: opts, Length: length})
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			defer ck.Close()
			l := ck.Layers[0]
			ks, err := ck.Kernels(plan.Unit{Prefix: l.Prefix, Lo: 0, Hi: l.Channels, Length: l.Length})
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			return ks
		}
		explicit := map[string]string{"length": "64"}
		for k, v := range c.opts {
			explicit[k] = v
		}
		got, want := kernels(c.opts), kernels(explicit)
		if !slices.EqualFunc(got, want, slices.Equal[[]float64]) {
			t.Errorf("%s: the kernels read at distill's length differ from those read with --length %d", c.file, length)
		}
	}
}

// TestCheckpointRefusesNamesNotUTF8: a checkpoint holding a tensor whose name is not valid
// UTF-8 is refused when opened, naming the tensor, before any fitting. Distilled, its layers
// were all fitted and then refused in the work directory (a layer's prefix), or the tensor
// was copied into a safetensors file renamed with U+FFFD.
func TestCheckpointRefusesNamesNotUTF8(t *testing.T) {
	af, err := arrays.Open("../testdata/layouts/rtf_64.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	write := func(path string, extra ...string) {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		add := func(name string, a *arrays.Array) {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
			if err == nil {
				err = arrays.WriteNPY(w, a, arrays.Float64)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, in := range af.Arrays() {
			a, err := af.Read(in.Name)
			if err != nil {
				t.Fatal(err)
			}
			add(in.Name, a)
		}
		for _, name := range extra {
			add(name, arrays.Vector([]float64{1, 2}))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ok, bad := filepath.Join(dir, "ok.npz"), filepath.Join(dir, "bad.npz")
	write(ok, "embedding.weight")
	write(bad, "\xab.weight")
	c, err := OpenCheckpoint(ok, CheckpointOptions{Length: 64})
	if err != nil || len(c.Layers) != 1 {
		t.Fatalf("%s: %v", ok, err)
	}
	c.Close()
	_, err = OpenCheckpoint(bad, CheckpointOptions{Length: 64})
	if err == nil || !strings.HasPrefix(err.Error(), bad+": ") || !strings.Contains(err.Error(), `"\xab.weight.npy": its name is not valid UTF-8`) {
		t.Errorf("%s: %v, want it refused, naming the tensor", bad, err)
	}
}

// TestCheckpointRealLayerPoles: an S4D layer built with is_real is fitted with real positive
// poles where it may be written back in its own layout (no ToLayout: rtf, else s4d; or s4d),
// and with the job's where ToLayout names a layout that holds any poles. It was fitted
// positive whatever the layout, so --to-layout rtf or stripedhyena got a needlessly worse fit.
func TestCheckpointRealLayerPoles(t *testing.T) {
	for _, c := range []struct {
		to   string
		want train.Poles
	}{
		{"", train.PolesPositive},
		{"s4d", train.PolesPositive},
		{"rtf", ""},
		{"stripedhyena", ""},
	} {
		ck, err := OpenCheckpoint("../testdata/layouts/s4d_real_64.pt", CheckpointOptions{Length: 64, ToLayout: c.to})
		if err != nil {
			t.Fatalf("to %q: %v", c.to, err)
		}
		ls := ck.PlanLayers()
		ck.Close()
		if len(ls) != 1 || ck.Layers[0].Options["is-real"] != "true" || ls[0].Poles != c.want {
			t.Errorf("to %q: layers %+v, want one of poles %q", c.to, ls, c.want)
		}
	}
}

// TestCheckpointUnitMisfitCounts: a unit that does not fit its layer is refused with the
// layer's size in words of the count: a layer of one channel read "(1 channels of 64
// samples)".
func TestCheckpointUnitMisfitCounts(t *testing.T) {
	f, err := filters.NewDiagonal([]complex128{0.5}, []complex128{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "one.npz")
	if _, err := ExportFile(path, []Item{{Entry: &Entry{Name: "f", Filter: f}}}, ExportOptions{Format: ExportNPZ}); err != nil {
		t.Fatal(err)
	}
	ck, err := OpenCheckpoint(path, CheckpointOptions{Length: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	l := ck.Layers[0]
	if l.Channels != 1 {
		t.Fatalf("the layer has %d channels, want 1", l.Channels)
	}
	_, err = ck.Kernels(plan.Unit{Prefix: l.Prefix, Lo: 0, Hi: 2, Length: l.Length})
	if want := "(1 channel of 64 samples)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a unit of 2 channels in a layer of 1: %v, want %q", err, want)
	}
}
