package layouts_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

var update = flag.Bool("update", false, "rewrite testdata/layouts/export (then run gen_layouts.py)")

// exportDir holds what TestExportGolden exports; gen_layouts.py loads each file with the
// module's own names (torch.load(weights_only=True) for .pt), computes the module's kernel
// and records its distance to the bank's impulse response in expected.json.
var exportDir = filepath.Join(goldenDir, "export")

// exportTol bounds what the reference code computes from the exported tensors against the
// bank's impulse response: float64 tensors hold the modes to rounding (measured below
// 1e-14); float32 ones to the rounding of the stored poles and residues, amplified by
// at most the number of samples (measured 1e-7), against 1 for the same bank as float32 RTF
// coefficients of crowded poles.
var exportTol = map[string]float64{"float64": 1e-12, "float32": 1e-5}

func exportCases() []struct {
	file string
	lay  layouts.Layout
	dt   arrays.DType
} {
	return []struct {
		file string
		lay  layouts.Layout
		dt   arrays.DType
	}{
		{"stripedhyena_64.pt", layouts.StripedHyena, arrays.Float64},
		{"stripedhyena_32.pt", layouts.StripedHyena, arrays.Float32},
		{"stripedhyena_32.safetensors", layouts.StripedHyena, arrays.Float32},
		{"s4d_64.pt", layouts.S4D, arrays.Float64},
		{"s4d_32.npz", layouts.S4D, arrays.Float32},
		{"rtf_64.pt", layouts.RTF, arrays.Float64},
		{"rtf_64.safetensors", layouts.RTF, arrays.Float64},
	}
}

func encode(t *testing.T, file string, named []arrays.Named, dt arrays.DType) []byte {
	t.Helper()
	var b []byte
	var err error
	switch filepath.Ext(file) {
	case ".pt":
		b, err = arrays.EncodeTorch(named, arrays.TorchOptions{DType: dt})
	case ".safetensors":
		b, err = arrays.EncodeSafetensors(named, arrays.SafetensorsOptions{DType: dt})
	default:
		b, err = arrays.EncodeNPZ(named, arrays.NPZOptions{DType: dt})
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExportGolden: the exported files are the ones the reference code was run on, and what
// it computed from them (names and shapes exactly the module's, loaded with
// torch.load(weights_only=True) for .pt) is the bank's impulse response.
// sharedGolden and sharedBilinearGolden are the shared-modes cases of TestExportGolden: 2
// SSMs tiled over 4 channels, under zero-order hold and the bilinear disc.
const (
	sharedGolden         = "s4dshared_64.pt"
	sharedBilinearGolden = "s4dsharedbil_64.pt"
)

func TestExportGolden(t *testing.T) {
	bank := randomModal(t, 21, 3)
	mimo := randomMIMO(t, 24, 6, 3)
	bidir := randomBidirectional(t, 25, 6, 3)
	slow := slowRTFBank(t)
	shared, sharedBank := sharedBank(t, 22, 2, 3, 4)
	sharedBil, sharedBilBank := sharedBankDisc(t, 23, 2, 3, 4, "bilinear")
	g := loadGolden(t)
	if *update {
		if err := os.MkdirAll(exportDir, 0o755); err != nil {
			t.Fatal(err)
		}
		impulses := func(b *filters.Bank) [][]float64 {
			imp := make([][]float64, len(b.Channels))
			for i, f := range b.Channels {
				imp[i] = f.Impulse(g.Length)
			}
			return imp
		}
		mimoOpts := map[string]map[string]string{}
		for _, c := range mimoGoldens {
			mimoOpts[c.file] = c.o
		}
		slowImp := make([][]float64, len(slow.Channels))
		for i, f := range slow.Channels {
			slowImp[i] = f.Impulse(1024)
		}
		b, _ := json.Marshal(map[string]any{"impulse": impulses(bank), "shared_impulse": impulses(sharedBank), "shared_ssms": len(shared.A),
			"sharedbil_impulse": impulses(sharedBilBank), "mimo_impulse": mimoImpulses(t, mimo, g.Length), "mimo_options": mimoOpts,
			"bidir_impulse": mimoImpulses(t, bidir, g.Length), "slow_impulse": slowImp})
		if err := os.WriteFile(filepath.Join(exportDir, "bank.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := append(exportCases(), struct {
		file string
		lay  layouts.Layout
		dt   arrays.DType
	}{sharedGolden, layouts.S4D, arrays.Float64}, struct {
		file string
		lay  layouts.Layout
		dt   arrays.DType
	}{sharedBilinearGolden, layouts.S4D, arrays.Float64})
	for _, c := range cases {
		doc, o := filters.Document{Bank: bank}, layouts.Options{}
		switch c.file {
		case sharedGolden:
			doc, o = filters.Document{Bank: sharedBank}, layouts.Options{Shared: shared}
		case sharedBilinearGolden:
			doc, o = filters.Document{Bank: sharedBilBank}, layouts.Options{Shared: sharedBil, Values: map[string]string{"disc": "bilinear"}}
		}
		named, _, err := layouts.Export(doc, c.lay, o, "blocks.1.filter.")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		checkExportGolden(t, g, c.file, named, c.dt)
	}
	for _, c := range rtfTruncGoldens {
		checkRTFTruncGolden(t, g, slow, c.file, c.truncLen, c.fold)
	}
	for _, c := range mimoGoldens {
		m := mimo
		if strings.HasPrefix(c.file, "s5bidir_") {
			m = bidir
		}
		named, err := layouts.ExportMIMO(m, c.lay, layouts.Options{Values: c.o}, "blocks.1.filter.")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		checkExportGolden(t, g, c.file, named, c.dt)
	}
}

// mimoGoldens are the MIMO cases of TestExportGolden: one layer of 6 modes (|λ| up to
// 0.9999, a real pole of each sign) and 3 inputs and outputs, written by ExportMIMO, whose
// every pair gen_layouts.py computes with lru_run, s5_run or rotrnn_run (the s5 options recorded in
// bank.json: an S5SSM built with them loads the file). The file's name up to "_" is the
// layout gen_layouts.py checks it as; s5bidir is a bidirectional layer of the same shape
// (randomBidirectional), whose 2H rows gen_layouts.py computes with the module's forward
// and reverse scans (s5_bidir_kernels) against bank.json's bidir_impulse.
var mimoGoldens = []struct {
	file string
	lay  layouts.Layout
	dt   arrays.DType
	o    map[string]string
}{
	{"lru_64.pt", layouts.LRU, arrays.Float64, nil},
	{"lru_32.safetensors", layouts.LRU, arrays.Float32, nil},
	{"s5_64.pt", layouts.S5, arrays.Float64, nil},
	{"s5bil_64.npz", layouts.S5, arrays.Float64, map[string]string{"disc": "bilinear", "conj-sym": "false", "step-rescale": "0.5", "log-step": "-0.3"}},
	{"s5bidir_64.pt", layouts.S5, arrays.Float64, map[string]string{"disc": "bilinear", "log-step": "-0.5"}},
	{"rotrnn_64.pt", layouts.RotRNN, arrays.Float64, nil},
}

// rtfTruncGoldens are the RTF cases of TestExportGolden written with trunc_len, of a slowly
// decaying bank (slowRTFBank), whose kernels gen_layouts.py computes as the module's get_k
// does (rtf_get_k) over trunc_len samples against bank.json's slow_impulse. rtffold32 holds
// what export wrote before it took off the h[M] that get_k folds onto t = 0 (h_0 = h0), for
// which the module's kernel is 0.23 off at t = 0 while the recurrent reading is exact.
var rtfTruncGoldens = []struct {
	file     string
	truncLen int
	fold     bool
}{
	{"rtftrunc32_64.pt", 32, false},
	{"rtftrunc1024_64.pt", 1024, false},
	{"rtffold32_64.pt", 32, true},
}

// slowRTFBank is a bank whose responses have not decayed within 32 samples, nor quite within
// 1024: channel 0 the QA's slow.json (poles 0.997·e^{±0.3i}, residues 1 ± 0.5i, h0 0),
// channel 1 poles 0.99·e^{±1.1i} and h0 0.5.
func slowRTFBank(t *testing.T) *filters.Bank {
	t.Helper()
	var chans []filters.Filter
	for _, c := range []struct {
		p, r complex128
		h0   float64
	}{
		{complex(0.9524704796582292, 0.2946336460413555), complex(1, 0.5), 0},
		{cmplx.Rect(0.99, 1.1), complex(0.3, -0.2), 0.5},
	} {
		d, err := filters.NewDiagonal([]complex128{c.p, cmplx.Conj(c.p)}, []complex128{c.r, cmplx.Conj(c.r)}, c.h0)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, d)
	}
	b, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkRTFTruncGolden exports slow with trunc_len (for fold, with h[M] added back to h_0, as
// export wrote it before) and checks it against what the reference code computed: the
// module's get_k is the bank's response to rounding (not for fold), and ReadBack reports the
// module kernel's error gen_layouts.py measured, 0.23 included.
func checkRTFTruncGolden(t *testing.T, g goldenFile, slow *filters.Bank, file string, truncLen int, fold bool) {
	t.Helper()
	doc := filters.Document{Bank: slow}
	o := layouts.Options{Values: map[string]string{"trunc-len": strconv.Itoa(truncLen)}}
	named, _, err := layouts.Export(doc, layouts.RTF, o, "blocks.1.filter.")
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if fold {
		h0 := named[1].Array.Clone()
		for c, f := range slow.Channels {
			h0.Data[c] += f.Impulse(rtf.FFTLen(truncLen) + 1)[rtf.FFTLen(truncLen)]
		}
		named[1].Array = h0
		b := encode(t, file, named, arrays.Float64)
		path := filepath.Join(exportDir, file)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, b) {
			t.Errorf("%s: the file differs from the one the reference code checked", file)
		}
	} else {
		checkExportGolden(t, g, file, named, arrays.Float64)
	}
	if *update {
		return
	}
	res, ok := g.Exports[file]
	if !ok {
		t.Errorf("%s: gen_layouts.py has not checked it", file)
		return
	}
	c, err := layouts.ReadBack(doc, named, arrays.Float64, layouts.RTF, o, "blocks.1.filter.")
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	// Both figures are rounding (1e-14 to 1e-13) for the files written now; for the folded
	// one they are the same error computed twice.
	if c.Length != truncLen || !(math.Abs(c.RelError-res.RelError) <= 1e-12+1e-9*res.RelError) {
		t.Errorf("%s: read back to %.6g over %d samples, while the module's get_k is %.6g off over %d", file, c.RelError, c.Length, res.RelError, truncLen)
	}
	if fold && !(res.RelError > 0.1) {
		t.Errorf("%s: the module's get_k is %.3g off; the folded file should show h[M] at t = 0", file, res.RelError)
	}
}

// mimoImpulses are the responses of every pair of m, (outputs, inputs, n).
func mimoImpulses(t *testing.T, m *filters.MIMO, n int) [][][]float64 {
	out := make([][][]float64, m.Outputs)
	for o := range out {
		out[o] = make([][]float64, m.Inputs)
		for i := range out[o] {
			f, err := m.Channel(o, i)
			if err != nil {
				t.Fatal(err)
			}
			out[o][i] = f.Impulse(n)
		}
	}
	return out
}

// checkExportGolden writes the export under -update; else checks that it is the file the
// reference code checked and that the reference code computed it within exportTol.
func checkExportGolden(t *testing.T, g goldenFile, file string, named []arrays.Named, dt arrays.DType) {
	t.Helper()
	b := encode(t, file, named, dt)
	path := filepath.Join(exportDir, file)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(old, b) {
		t.Errorf("%s: the export differs from the file the reference code checked (go test -run TestExportGolden -update, then gen_layouts.py)", file)
	}
	res, ok := g.Exports[file]
	if !ok {
		t.Errorf("%s: gen_layouts.py has not checked it", file)
		return
	}
	if res.RelError > exportTol[dt.String()] || len(res.DTypes) != 1 || res.DTypes[0] != dt.String() {
		t.Errorf("%s: the reference code computes the bank to %.3g (dtypes %v), want within %g in %s", file, res.RelError, res.DTypes, exportTol[dt.String()], dt)
	}
}

// TestReferenceSafetensorsReader: gen_layouts.py's safetensors reader, with which its export
// checks and testdata/scale/check_distilled.py read the files ssmlab writes, reads every
// float dtype ssmlab writes (float64, float32, bfloat16) as written. It read F64 and F32
// only: a bfloat16 tensor was a KeyError. It skips where /usr/bin/python3 lacks torch.
func TestReferenceSafetensorsReader(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("needs %s with torch (Debian's python3-torch): %v", py, err)
	}
	// Values every dtype holds exactly, each of a different exponent and mantissa: a reader
	// that took one dtype's bytes for another's reads other numbers.
	values := []float64{1, -2.5, 0.15625, 384}
	cases := []struct{ raw, torch string }{{"F64", "torch.float64"}, {"F32", "torch.float32"}, {"BF16", "torch.bfloat16"}}
	var infos []arrays.RawInfo
	var data [][]byte
	for _, c := range cases {
		b, err := arrays.EncodeRaw(values, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, arrays.RawInfo{Name: c.raw, DType: c.raw, Shape: []int{2, 2}})
		data = append(data, b)
	}
	var file bytes.Buffer
	if err := arrays.WriteRaw(&file, arrays.FormatSafetensors, infos, arrays.RawOptions{}, func(i int) ([]byte, error) { return data[i], nil }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dtypes.safetensors")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `import json, sys
sys.path.insert(0, sys.argv[1])
import gen_layouts
st = gen_layouts.load_safetensors(sys.argv[2])
print(json.dumps({k: {"dtype": str(v.dtype), "shape": list(v.shape), "values": v.double().reshape(-1).tolist()} for k, v in st.items()}))`
	cmd := exec.Command(py, "-c", script, goldenDir, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var got map[string]struct {
		DType  string    `json:"dtype"`
		Shape  []int     `json:"shape"`
		Values []float64 `json:"values"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range cases {
		g, ok := got[c.raw]
		if !ok {
			t.Errorf("%s: not read (%s)", c.raw, out)
			continue
		}
		if g.DType != c.torch || !slices.Equal(g.Shape, []int{2, 2}) || !slices.Equal(g.Values, values) {
			t.Errorf("%s: read as %s %v %v, want %s [2 2] %v", c.raw, g.DType, g.Shape, g.Values, c.torch, values)
		}
	}
}
