package layouts_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// fuzzOptions reads "k=v;k=v" into layout options; an item "pair=O,I" adds a MIMO pair.
func fuzzOptions(s string) (layouts.Options, bool) {
	o := layouts.Options{Values: map[string]string{}}
	if s == "" {
		return o, true
	}
	for _, item := range strings.Split(s, ";") {
		k, v, _ := strings.Cut(item, "=")
		if k == "pair" {
			a, b, _ := strings.Cut(v, ",")
			i, err1 := strconv.Atoi(a)
			j, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil {
				return o, false
			}
			o.Pairs = append(o.Pairs, [2]int{i, j})
			continue
		}
		if n, err := strconv.Atoi(v); k == "length" && err == nil && n > 1<<12 {
			return o, false // a long kernel is slow to evaluate, not wrong
		}
		o.Values[k] = v
	}
	return o, true
}

// FuzzImportLayer reads a fuzzed array file (seeded with the golden checkpoint of every
// layout) with fuzzed layout options: detection and import never panic, a refusal is an
// error on one line, and what is accepted is a valid bank (finite poles, residues and
// direct terms) or finite kernels, with a one-line note. A float option that is NaN or
// infinite is refused by its name.
func FuzzImportLayer(f *testing.F) {
	for _, name := range []string{
		"rtf_32.safetensors", "s4d_32.safetensors", "s4d_minimal_32.safetensors", "s4_32.safetensors",
		"stripedhyena_32.safetensors", "hyena_32.safetensors", "lru_32.safetensors",
		"rotrnn_32.safetensors", "s5_64.npz", "s5_bidir_64.pt", "s5_bidir_cn_64.pt", "sos_ellip7_32.npz",
	} {
		data, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
	}
	data, _ := os.ReadFile(filepath.Join(goldenDir, "s4d_32.safetensors"))
	f.Add(data, "disc=bilinear;dt-transform=softplus")
	f.Add(data, "disc=dss;length=16")
	data, _ = os.ReadFile(filepath.Join(goldenDir, "hyena_32.safetensors"))
	f.Add(data, "shift=0.5;normalized=true;length=40")
	f.Add(data, "shift=NaN") // was refused as "entry (0, 0) is NaN", naming no option
	data, _ = os.ReadFile(filepath.Join(goldenDir, "s5_64.npz"))
	f.Add(data, "step-rescale=2;clip-eigs=true;pair=0,1")
	f.Add(data, "step-rescale=+Inf") // was read as poles at 0
	data, _ = os.ReadFile(filepath.Join(goldenDir, "rtf_32.safetensors"))
	f.Add(data, "trunc-len=32;h0=twice")
	f.Fuzz(func(t *testing.T, data []byte, opts string) {
		o, ok := fuzzOptions(opts)
		if !ok {
			return
		}
		af, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), "fuzz.npz")
		if err != nil {
			return
		}
		nonFinite := "" // a float option that is NaN or infinite, which import must refuse by name
		for k, v := range o.Values {
			if x, err := strconv.ParseFloat(v, 64); (k == "shift" || k == "step-rescale") && err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
				nonFinite = k
			}
		}
		detected := layouts.Detect(af.Arrays())
		for _, l := range detected[:min(len(detected), 2)] {
			r, err := layouts.Import(af, l, o)
			if nonFinite != "" && (err == nil || !strings.Contains(err.Error(), "--"+nonFinite)) {
				t.Fatalf("%s %q with %q: %v, want --%s refused", l.Layout, l.Prefix, opts, err, nonFinite)
			}
			if err != nil {
				if err.Error() == "" || strings.ContainsAny(err.Error(), "\n\r") {
					t.Fatalf("%s %q: error %q is not one line", l.Layout, l.Prefix, err)
				}
				continue
			}
			if strings.ContainsAny(r.Note, "\n\r") {
				t.Fatalf("%s: note %q is not one line", l.Layout, r.Note)
			}
			switch {
			case r.Bank != nil:
				if err := r.Bank.Validate(); err != nil {
					t.Fatalf("%s %q with %q: the bank read is invalid: %v", l.Layout, l.Prefix, opts, err)
				}
			case r.Kernels != nil:
				for i, v := range r.Kernels.Data {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s %q with %q: kernel value %d is %v", l.Layout, l.Prefix, opts, i, v)
					}
				}
			default:
				t.Fatalf("%s: neither a bank nor kernels, and no error", l.Layout)
			}
		}
	})
}
