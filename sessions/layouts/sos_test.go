package layouts_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// sosfilt runs testdata/layouts/gen_sos.py --check on an .npz file: scipy.signal.sosfilt's
// impulse response over length samples of every sos tensor in it, by name. It skips the
// test without Debian's /usr/bin/python3 and python3-scipy.
func sosfilt(t *testing.T, path string, length int) map[string]struct {
	Shape   []int
	Kernels [][]float64
} {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scipy.signal").Run(); err != nil {
		t.Skipf("needs %s with scipy (Debian's python3-scipy): %v", py, err)
	}
	cmd := exec.Command(py, filepath.Join(goldenDir, "gen_sos.py"), "--check", path, strconv.Itoa(length))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var res map[string]struct {
		Shape   []int
		Kernels [][]float64
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSOSExportInScipy: what export writes in the sos layout, scipy.signal.sosfilt accepts
// (two dimensions per filter, a0 = 1) and runs to ssmlab's own impulse responses — a modal
// bank of different orders with real poles of both signs (through the zpk form), a single
// filter as (sections, 6), and float32 tensors to what ssmlab reads back from the same file.
func TestSOSExportInScipy(t *testing.T) {
	const length = 400
	dir := t.TempDir()
	butter := importGolden(t, "sos_butter8_64.npz")
	bank := randomModal(t, 21, 3)
	width := 0
	for _, f := range bank.Channels {
		width = max(width, (f.Order()+1)/2)
	}
	cases := []struct {
		file   string
		doc    filters.Document
		dt     arrays.DType
		prefix string
		shape  []int
	}{
		{"bank.npz", filters.Document{Bank: bank}, arrays.Float64, "blocks.1.filter.", []int{3, width, 6}},
		{"bank32.npz", filters.Document{Bank: bank}, arrays.Float32, "", []int{3, width, 6}},
		{"butter.npz", filters.Document{Filter: butter}, arrays.Float64, "", []int{4, 6}},
	}
	for _, c := range cases {
		named, _, err := layouts.Export(c.doc, layouts.SOS, layouts.Options{}, c.prefix)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		path := filepath.Join(dir, c.file)
		if err := os.WriteFile(path, encode(t, path, named, c.dt), 0o644); err != nil {
			t.Fatal(err)
		}
		res, ok := sosfilt(t, path, length)[c.prefix+"sos"]
		if !ok || !slices.Equal(res.Shape, c.shape) {
			t.Fatalf("%s: scipy read %+v, want the tensor %q of shape %v", c.file, res.Shape, c.prefix+"sos", c.shape)
		}
		chans := []filters.Filter{c.doc.Filter}
		if c.doc.Bank != nil {
			chans = c.doc.Bank.Channels
		}
		// float32 tensors are compared with what ssmlab reads from the same file: both sides
		// evaluate the same rounded coefficients.
		if c.dt == arrays.Float32 {
			chans = importFile(t, path).Bank.Channels
		}
		for ch, f := range chans {
			// float64 sections hold the zpk form to rounding; sosfilt's recurrence and
			// ssmlab's (modes, or first-order sections) round differently: measured up to 9e-15.
			if e := filters.RelDiff(f.Impulse(length), res.Kernels[ch]); !(e <= 1e-12) {
				t.Errorf("%s: channel %d: sosfilt gives %.3g from ssmlab's impulse response", c.file, ch, e)
			}
		}
	}
}

func importFile(t *testing.T, path string) layouts.Result {
	t.Helper()
	af, err := arrays.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	l, err := layouts.Find(af.Arrays(), layouts.SOS, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := layouts.Import(af, l, layouts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func importGolden(t *testing.T, file string) filters.Filter {
	t.Helper()
	r := importFile(t, filepath.Join(goldenDir, file))
	if !r.Single || len(r.Bank.Channels) != 1 {
		t.Fatalf("%s: %d channels, single %v", file, len(r.Bank.Channels), r.Single)
	}
	return r.Bank.Channels[0]
}

// TestSOSExportPads: channels of fewer sections are padded with [1 0 0 1 0 0], the gain
// sits in each channel's first section, a0 = 1 throughout, and the tensors read back.
func TestSOSExportPads(t *testing.T) {
	a, _ := filters.NewZPK(nil, []complex128{0.5}, 2, 0)
	b, _ := filters.NewZPK([]complex128{-1, -1}, []complex128{0.9i, -0.9i, 0.3, -0.3}, 0.5, 0)
	doc := filters.Document{Bank: &filters.Bank{Channels: []filters.Filter{a, b}}}
	named, _, err := layouts.Export(doc, layouts.SOS, layouts.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := named[0].Array
	want := []float64{
		0, 2, 0, 1, -0.5, 0, // the delay of a pole without a zero; the origin pads the order
		1, 0, 0, 1, 0, 0,
		0, 0, 0.5, 1, 0, -0.09, // the real poles, far from the circle: first, with the gain
		1, 2, 1, 1, 0, 0.81, // the pair nearest the circle, last, with the zeros nearest it
	}
	if !slices.Equal(got.Shape, []int{2, 2, 6}) {
		t.Fatalf("shape %v", got.Shape)
	}
	for i := range want {
		if math.Abs(got.Data[i]-want[i]) > 1e-15 {
			t.Fatalf("sections %v, want %v", got.Data, want)
		}
	}
	c, err := layouts.ReadBack(doc, named, arrays.Float64, layouts.SOS, layouts.Options{}, "")
	if err != nil || c.RelError > 1e-15 {
		t.Errorf("read back: %+v, %v", c, err)
	}
}

// TestSOSImportErrors: a0 = 0, a last dimension other than 6, no sections and too many
// dimensions are refused with one-line errors naming the tensor or section.
func TestSOSImportErrors(t *testing.T) {
	for _, c := range []struct {
		shape []int
		data  []float64
		want  string
	}{
		{[]int{1, 6}, []float64{1, 0, 0, 0, 1, 0}, "section 0: a0 = 0"},
		{[]int{2, 1, 6}, []float64{1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0}, "channel 1: section 0: a0 = 0"},
		{[]int{2, 5}, make([]float64, 10), `the tensor "sos" has shape (2, 5), want (sections, 6) or (channels, sections, 6)`},
		{[]int{2, 2, 2, 6}, make([]float64, 48), `has shape (2, 2, 2, 6)`},
		{[]int{0, 6}, nil, "want at least one channel of one section"},
	} {
		a, err := arrays.New(c.shape, c.data)
		if err != nil {
			t.Fatal(err)
		}
		src := layouts.NamedSource{{Name: "sos", Array: a}}
		l, err := layouts.Find(src.Arrays(), layouts.SOS, "")
		if err == nil {
			_, err = layouts.Import(src, l, layouts.Options{})
		}
		if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%v: %v, want %q", c.shape, err, c.want)
		}
	}
}

// FuzzSOS reads fuzzed coefficients as an sos tensor of one to three channels: no input
// makes import panic, every rejection is one line of kind ErrInvalid, and what is accepted
// is a valid filter bank that export writes as sections or refuses with a known error.
func FuzzSOS(f *testing.F) {
	seed := func(ch uint8, vs ...float64) {
		b := make([]byte, 8*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		f.Add(b, ch)
	}
	seed(0, 2.4e-5, 4.8e-5, 2.4e-5, 1, -1.03, 0.27, 1, 2, 1, 1, -1.45, 0.79)
	seed(1, 1, 0, 0, 1, 0, 0, 0, 1, -0.5, 1, -0.9, 0)
	seed(2, 1, 0, 0, 0, 1, 0)
	seed(0, 1, math.NaN(), 0, 2, 1e308, -1e308)
	seed(0, 0, 0, 0, 1, 0, 0)
	f.Fuzz(func(t *testing.T, data []byte, ch uint8) {
		vs := make([]float64, len(data)/8)
		for i := range vs {
			vs[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		chans := int(ch%3) + 1
		rows := len(vs) / 6 / chans
		shape := []int{chans, rows, 6}
		if ch%4 == 3 {
			chans, rows, shape = 1, len(vs)/6, []int{len(vs) / 6, 6}
		}
		vs = vs[:chans*rows*6]
		for i, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				vs[i] = 0 // the file readers refuse them before a layout sees them
			}
		}
		a, err := arrays.New(shape, vs)
		if err != nil {
			return
		}
		src := layouts.NamedSource{{Name: "m.sos", Array: a}}
		l, err := layouts.Find(src.Arrays(), "", "")
		if err != nil {
			t.Fatalf("an sos tensor of shape %v is not detected: %v", shape, err)
		}
		r, err := layouts.Import(src, l, layouts.Options{})
		if err != nil {
			if !errors.Is(err, layouts.ErrInvalid) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error of an unknown kind: %v", err)
			}
			return
		}
		if len(r.Bank.Channels) != chans {
			t.Fatalf("%d channels from shape %v", len(r.Bank.Channels), shape)
		}
		for _, f := range r.Bank.Channels {
			if err := f.Validate(); err != nil {
				t.Fatalf("an imported channel is invalid: %v", err)
			}
		}
		named, _, err := layouts.Export(filters.Document{Bank: r.Bank}, layouts.SOS, layouts.Options{}, "m.")
		if err != nil {
			if !errors.Is(err, layouts.ErrInvalid) && !errors.Is(err, filters.ErrInvalid) && !errors.Is(err, filters.ErrDefective) && !errors.Is(err, filters.ErrIllConditioned) {
				t.Fatalf("export: error of an unknown kind: %v", err)
			}
			return
		}
		if len(named) != 1 || named[0].Array.Shape[0] != chans {
			t.Fatalf("export wrote %v", named)
		}
	})
}

// TestSOSExportFoldsH0: a zpk filter's offset h0, which no cascade holds, goes into its
// zeros (through the dense form), and the sections read back to its impulse response.
func TestSOSExportFoldsH0(t *testing.T) {
	f, err := filters.NewZPK([]complex128{0.2}, []complex128{0.8 + 0.3i, 0.8 - 0.3i, -0.4}, 1.5, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	doc := filters.Document{Filter: f}
	named, reports, err := layouts.Export(doc, layouts.SOS, layouts.Options{}, "")
	if err != nil || len(reports) != 2 {
		t.Fatalf("%v (%d reports)", err, len(reports))
	}
	c, err := layouts.ReadBack(doc, named, arrays.Float64, layouts.SOS, layouts.Options{}, "")
	if err != nil || !(c.RelError <= 1e-13) {
		t.Errorf("read back: %+v, %v", c, err)
	}
	if named[0].Array.Data[0] == 0 {
		t.Errorf("sections %v: the offset makes b0 nonzero", named[0].Array.Data)
	}
}
