package layouts_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
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
func TestExportGolden(t *testing.T) {
	bank := randomModal(t, 21, 3)
	g := loadGolden(t)
	if *update {
		if err := os.MkdirAll(exportDir, 0o755); err != nil {
			t.Fatal(err)
		}
		imp := make([][]float64, len(bank.Channels))
		for i, f := range bank.Channels {
			imp[i] = f.Impulse(g.Length)
		}
		b, _ := json.Marshal(map[string]any{"impulse": imp})
		if err := os.WriteFile(filepath.Join(exportDir, "bank.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range exportCases() {
		named, _, err := layouts.Export(filters.Document{Bank: bank}, c.lay, layouts.Options{}, "blocks.1.filter.")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		b := encode(t, c.file, named, c.dt)
		path := filepath.Join(exportDir, c.file)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(old, b) {
			t.Errorf("%s: the export differs from the file the reference code checked (go test -run TestExportGolden -update, then gen_layouts.py)", c.file)
		}
		res, ok := g.Exports[c.file]
		if !ok {
			t.Errorf("%s: gen_layouts.py has not checked it", c.file)
			continue
		}
		if res.RelError > exportTol[c.dt.String()] || len(res.DTypes) != 1 || res.DTypes[0] != c.dt.String() {
			t.Errorf("%s: the reference code computes the bank to %.3g (dtypes %v), want within %g in %s", c.file, res.RelError, res.DTypes, exportTol[c.dt.String()], c.dt)
		}
	}
}
