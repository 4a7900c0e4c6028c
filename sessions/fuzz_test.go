package sessions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/internal/fuzzcorpus"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The fuzzers check that no input makes a reader panic, that every rejection is one line of
// a known kind, and that what is accepted survives a round trip. Their seed corpora are
// committed under testdata/fuzz (regenerate with -write-corpus), where inputs found by
// fuzzing are kept as regression cases.

// The seeds are small (fuzzcorpus.MaxSeed): kernels of two samples, or of just too many to
// be written inline, and each golden .npz cut into archives of one array.

func sessionSeeds(t testing.TB) [][]byte {
	filter := sessions.New()
	must(filter.AddFilter(filters.Document{Name: "d", Filter: filtertest.Dense()}))
	target := sessions.New()
	must(target.AddTarget(sessions.Target{Name: "k", Kernels: kernels(t, 1, 2, 2)}))
	packed := sessions.New() // kernels of more than arrays.InlineMax numbers are packed
	must(packed.AddTarget(sessions.Target{Name: "p", Kernels: kernels(t, 2, 1, arrays.InlineMax+1)}))
	var seeds [][]byte
	for _, s := range []*sessions.Session{filter, target, packed} {
		var b bytes.Buffer // without Marshal's indentation, which is most of a small session
		if err := json.Compact(&b, must(sessions.Marshal(s))); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b.Bytes())
	}
	for _, tc := range badSessions(t) {
		seeds = append(seeds, []byte(tc.text))
	}
	return seeds
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range sessionSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := sessions.Unmarshal(data)
		if err != nil {
			var ve *sessions.VersionError
			if !errors.Is(err, sessions.ErrInvalid) && !errors.As(err, &ve) {
				t.Fatalf("error of an unknown kind: %v", err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		b1, err := sessions.Marshal(s)
		if err != nil {
			t.Fatalf("an accepted session does not marshal: %v", err)
		}
		s2, err := sessions.Unmarshal(b1)
		if err != nil {
			t.Fatalf("a marshalled session does not unmarshal: %v\n%s", err, b1)
		}
		if b2 := must(sessions.Marshal(s2)); !bytes.Equal(b1, b2) {
			t.Fatalf("Marshal∘Unmarshal is not stable:\n%s\nthen\n%s", b1, b2)
		}
	})
}

// importNames are the file names FuzzImportData pretends its input has: the name decides
// only whether a file without magic bytes is CSV.
var importNames = []string{"x.json", "x.csv", "x.npy"}

// importSeed is an input of FuzzImportData and the index of its name in importNames.
type importSeed struct {
	data []byte
	name uint8
}

func importSeeds(t testing.TB) []importSeed {
	var seeds []importSeed
	for _, pat := range []string{"*.npy", "*.npz", "*.safetensors", "*.csv"} {
		paths, _ := filepath.Glob(filepath.Join(goldenDir, pat))
		for _, p := range paths {
			b := must(os.ReadFile(p))
			switch filepath.Ext(p) {
			case ".csv":
				seeds = append(seeds, importSeed{b, 1})
			case ".npz": // each array alone; rtf.npz's two are one RTF layer, kept together
				for _, e := range must(fuzzcorpus.SplitZip(b)) {
					seeds = append(seeds, importSeed{e, 2})
				}
				if filepath.Base(p) == "rtf.npz" {
					seeds = append(seeds, importSeed{b, 2})
				}
			default:
				seeds = append(seeds, importSeed{b, 2})
			}
		}
	}
	tgt := &sessions.Target{Name: "k", Kernels: kernels(t, 1, 2, 2)}
	ragged := []byte(`{"kernels": [[1, 2], [3]]}`)
	return append(seeds,
		importSeed{must(filterfile.Marshal(filters.Document{Filter: filtertest.Dense()})), 0},
		importSeed{must(sessions.MarshalTarget(tgt)), 0},
		importSeed{ragged, 0},
		importSeed{ragged, 1}, // JSON named .csv: read as CSV
		importSeed{[]byte(`{"form": "tf", "a": [1], "b": []}`), 0})
}

func FuzzImportData(f *testing.F) {
	for _, s := range importSeeds(f) {
		f.Add(s.data, s.name)
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		name := importNames[int(which)%len(importNames)]
		it, err := sessions.ImportData(data, name, sessions.ImportOptions{})
		if err != nil {
			var ce *sessions.ChoiceError
			known := errors.Is(err, sessions.ErrInvalid) || errors.Is(err, filters.ErrInvalid) ||
				errors.Is(err, arrays.ErrInvalid) || errors.Is(err, arrays.ErrUnsupported) || errors.As(err, &ce)
			if !known {
				t.Fatalf("error of an unknown kind: %v", err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		s := sessions.New()
		if _, err := s.Add(it); err != nil {
			t.Fatalf("an imported item is not valid: %v", err)
		}
		exp, err := sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportJSON})
		out := exp.Data
		if err != nil {
			t.Fatalf("an imported item does not export: %v", err)
		}
		back, err := sessions.ImportData(out, "x.json", sessions.ImportOptions{})
		if err != nil {
			t.Fatalf("an exported item does not import: %v\n%s", err, out)
		}
		again, _ := sessions.Export([]sessions.Item{back}, sessions.ExportOptions{Format: sessions.ExportJSON})
		if !bytes.Equal(out, again.Data) {
			t.Fatalf("JSON export is not stable:\n%s\nthen\n%s", out, again.Data)
		}
	})
}

// TestSeedCorpus writes the seed corpora with -write-corpus; otherwise it checks that the
// committed corpora are the seeds as the tests build them now (fuzzcorpus.Check). The seeds
// are small (fuzzcorpus.CheckSmall).
func TestSeedCorpus(t *testing.T) {
	corpora := map[string][]string{}
	fuzzcorpus.CheckSmall(t, "FuzzUnmarshal", sessionSeeds(t))
	var imports [][]byte
	for _, s := range importSeeds(t) {
		imports = append(imports, s.data)
	}
	fuzzcorpus.CheckSmall(t, "FuzzImportData", imports)
	for _, s := range sessionSeeds(t) {
		corpora["FuzzUnmarshal"] = append(corpora["FuzzUnmarshal"], "[]byte("+strconv.Quote(string(s))+")")
	}
	for _, s := range importSeeds(t) {
		corpora["FuzzImportData"] = append(corpora["FuzzImportData"], fmt.Sprintf("[]byte(%s)\nbyte(%q)", strconv.Quote(string(s.data)), s.name))
	}
	fuzzcorpus.Check(t, corpora)
}
