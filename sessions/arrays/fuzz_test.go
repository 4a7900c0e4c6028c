package arrays_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/fuzzcorpus"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The fuzzers check that no input makes a reader panic, that every rejection is one line
// wrapping ErrInvalid or ErrUnsupported, and that every accepted array is valid and survives
// a float64 round trip through the same format bit for bit. Their seed corpora are the
// golden files, the hostile inputs of hostile_test.go and small encoded arrays; they are
// also committed under testdata/fuzz (regenerate with -write-corpus), where the inputs
// fuzzing found are kept as regression cases.

// checkReject fails unless err is a proper rejection.
func checkReject(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, arrays.ErrInvalid) && !errors.Is(err, arrays.ErrUnsupported) {
		t.Fatalf("error wraps neither ErrInvalid nor ErrUnsupported: %v", err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("error spans lines: %q", err)
	}
}

func goldenFiles(t testing.TB, ext string) [][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func npySeeds(t testing.TB) [][]byte {
	seeds := goldenFiles(t, ".npy")
	for _, tc := range badNPY() {
		seeds = append(seeds, tc.data)
	}
	return seeds
}

func FuzzNPY(f *testing.F) {
	for _, s := range npySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := arrays.DecodeNPY(data)
		b, errStream := arrays.ReadNPY(bytes.NewReader(data))
		if (err == nil) != (errStream == nil) {
			t.Fatalf("DecodeNPY and ReadNPY disagree: %v / %v", err, errStream)
		}
		if err != nil {
			checkReject(t, err)
			checkReject(t, errStream)
			return
		}
		if !a.Equal(b) {
			t.Fatal("DecodeNPY and ReadNPY read different arrays")
		}
		enc, err := arrays.EncodeNPY(a, arrays.Float64)
		if err != nil {
			t.Fatalf("an accepted array does not encode: %v", err)
		}
		back, err := arrays.DecodeNPY(enc)
		if err != nil || !back.Equal(a) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func npzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, b := range goldenFiles(t, ".npz") {
		entries, err := fuzzcorpus.SplitZip(b)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, entries...)
	}
	for _, tc := range badNPZ(t) {
		if tc.name != "bomb that lies" { // it inflates 1 MiB from 1.2 KB: slow to fuzz
			seeds = append(seeds, tc.data)
		}
	}
	// In its place a bomb that claims as much and holds one value.
	return append(seeds, lyingZip(t, "b.npy", uint64(len(bombHeader))+8*arrays.MaxElements, 0, append(bytes.Clone(bombHeader), f8(1)...)))
}

func FuzzNPZ(f *testing.F) {
	for _, s := range npzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		z, err := arrays.OpenNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			checkReject(t, err)
			return
		}
		var named []arrays.Named
		for _, in := range z.Arrays() {
			a, err := z.Read(in.Name)
			if err != nil {
				checkReject(t, err)
				continue
			}
			named = append(named, arrays.Named{Name: in.Name, Array: a})
		}
		if len(named) == 0 || named[0].Name == "" {
			return // an entry named ".npy" cannot be written back
		}
		named = named[:1]
		enc, err := arrays.EncodeNPZ(named, arrays.NPZOptions{})
		if err != nil {
			t.Fatalf("an accepted array does not encode: %v", err)
		}
		z2, err := arrays.OpenNPZ(bytes.NewReader(enc), int64(len(enc)))
		if err != nil {
			t.Fatal(err)
		}
		back, err := z2.Read(named[0].Name)
		if err != nil || !back.Equal(named[0].Array) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzNPZEntry wraps fuzzed .npy bytes in a valid zip archive, stored or deflated, so that
// the mutations reach the .npy reader inside an .npz past the zip checksums, and checks
// that the archive reader agrees with DecodeNPY on every input.
func FuzzNPZEntry(f *testing.F) {
	for i, s := range npySeeds(f) {
		f.Add(s, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, compress bool) {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		method := zip.Store
		if compress {
			method = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "a.npy", Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		want, wantErr := arrays.DecodeNPY(data)
		z, err := arrays.OpenNPZ(bytes.NewReader(b.Bytes()), int64(b.Len()))
		var got *arrays.Array
		if err == nil {
			got, err = z.Read("a")
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("the archive reader says %v, DecodeNPY %v", err, wantErr)
		}
		if err != nil {
			checkReject(t, err)
			return
		}
		if !got.Equal(want) {
			t.Fatal("the archive reader and DecodeNPY read different arrays")
		}
	})
}

func safetensorsSeeds(t testing.TB) [][]byte {
	seeds := goldenFiles(t, ".safetensors")
	for _, tc := range badSafetensors() {
		seeds = append(seeds, tc.data)
	}
	return seeds
}

func FuzzSafetensors(f *testing.F) {
	for _, s := range safetensorsSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := arrays.OpenSafetensors(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			checkReject(t, err)
			return
		}
		var named []arrays.Named
		for _, in := range s.Arrays() {
			a, err := s.Read(in.Name)
			if err != nil {
				checkReject(t, err)
				continue
			}
			named = append(named, arrays.Named{Name: in.Name, Array: a})
		}
		if len(named) == 0 || named[0].Name == "" {
			return
		}
		enc, err := arrays.EncodeSafetensors(named, arrays.SafetensorsOptions{Metadata: s.Metadata})
		if err != nil {
			t.Fatalf("accepted arrays do not encode: %v", err)
		}
		s2, err := arrays.OpenSafetensors(bytes.NewReader(enc), int64(len(enc)))
		if err != nil {
			t.Fatalf("re-encoded file does not open: %v", err)
		}
		for _, n := range named {
			back, err := s2.Read(n.Name)
			if err != nil || !back.Equal(n.Array) {
				t.Fatalf("round trip of %q: %v", n.Name, err)
			}
		}
	})
}

func csvSeeds(t testing.TB) [][]byte {
	seeds := append(goldenFiles(t, ".csv"), goldenFiles(t, ".txt")...)
	for _, s := range []string{"1,2\n3,4\n", "# c\nx y\n1 2\n", "1,,2\n", "nan\n", "1e400\n", `"1","2"` + "\r\n"} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

func FuzzCSV(f *testing.F) {
	for _, s := range csvSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := arrays.ReadCSV(bytes.NewReader(data))
		if err != nil {
			checkReject(t, err)
			return
		}
		if err := a.Validate(); err != nil || len(a.Shape) != 2 {
			t.Fatalf("accepted array is invalid: %v %v", a.Shape, err)
		}
		enc, err := arrays.EncodeCSV(a)
		if err != nil {
			if a.Shape[1] == 0 {
				return
			}
			t.Fatalf("an accepted array does not encode: %v", err)
		}
		back, err := arrays.ReadCSV(bytes.NewReader(enc))
		if err != nil || !back.Equal(a) {
			t.Fatalf("round trip: %v\n%q", err, enc)
		}
	})
}

func jsonSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for i, shape := range roundTripShapes {
		b, err := json.Marshal(randomArray(t, uint64(i), shape...))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	b, _ := json.Marshal(randomArray(t, 99, 3, 20))
	seeds = append(seeds, b, []byte("[[1, 2], [3]]"), []byte(`{"dtype": "<f8", "shape": [1000000, 1000000], "data": ""}`), []byte("[[[]]]"))
	return seeds
}

func FuzzArrayJSON(f *testing.F) {
	for _, s := range jsonSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var a arrays.Array
		if err := json.Unmarshal(data, &a); err != nil {
			return // encoding/json's own syntax errors carry no sentinel
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("accepted array is invalid: %v", err)
		}
		enc, err := json.Marshal(&a)
		if err != nil {
			t.Fatalf("an accepted array does not encode: %v", err)
		}
		var back arrays.Array
		if err := json.Unmarshal(enc, &back); err != nil || !back.Equal(&a) {
			t.Fatalf("round trip: %v\n%s", err, enc)
		}
	})
}

// TestSeedCorpus writes the seed corpora to testdata/fuzz with -write-corpus; otherwise it
// checks that the committed corpora are the seeds as the tests build them now
// (fuzzcorpus.Check). Every fuzzer's seeds are small (fuzzcorpus.CheckSmall).
func TestSeedCorpus(t *testing.T) {
	quote := func(b []byte) string { return "[]byte(" + strconv.Quote(string(b)) + ")" }
	corpora := map[string][]string{}
	for name, seeds := range map[string][][]byte{
		"FuzzNPY":         npySeeds(t),
		"FuzzNPZ":         npzSeeds(t),
		"FuzzSafetensors": safetensorsSeeds(t),
		"FuzzCSV":         csvSeeds(t),
		"FuzzArrayJSON":   jsonSeeds(t),
	} {
		fuzzcorpus.CheckSmall(t, name, seeds)
		for _, s := range seeds {
			corpora[name] = append(corpora[name], quote(s))
		}
	}
	for i, s := range npySeeds(t) {
		corpora["FuzzNPZEntry"] = append(corpora["FuzzNPZEntry"], quote(s)+"\nbool("+strconv.FormatBool(i%2 == 0)+")")
	}
	fuzzcorpus.Check(t, corpora)
	fuzzcorpus.CheckSmall(t, "FuzzTorch", torchSeeds(t))
	var raw [][]byte
	for _, s := range rawSeeds(t) {
		raw = append(raw, s.data)
	}
	fuzzcorpus.CheckSmall(t, "FuzzRawFile", raw)
}
