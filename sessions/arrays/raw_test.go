package arrays_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/fuzzcorpus"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/raw/go (then run gen_raw.py)")

// rawDir holds raw.npz, raw.safetensors and expected.json (testdata/golden/raw/gen_raw.py).
const rawDir = "../../testdata/golden/raw"

type rawGolden struct {
	Files map[string]map[string]struct {
		DType  string `json:"dtype"`
		Shape  []int  `json:"shape"`
		SHA256 string `json:"sha256"`
		Bytes  int64  `json:"bytes"`
	} `json:"files"`
	Written map[string]bool `json:"written"`
}

func openRaw(t *testing.T, src string) *arrays.File {
	t.Helper()
	path := filepath.Join(rawDir, src)
	if rest, ok := strings.CutPrefix(src, "torch/"); ok {
		path = filepath.Join(torchDir, rest)
	}
	af, err := arrays.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { af.Close() })
	return af
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// readRawGolden reads the raw golden files' expectations (gen_raw.py's expected.json).
func readRawGolden(t *testing.T) rawGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rawDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g rawGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRawGolden reads every tensor of files torch.save, numpy.savez and a safetensors writer
// made, whatever its element type, layout (transposed, sliced, Fortran order) and byte order,
// as the little-endian C-order bytes the reference libraries give; copies each file to every
// format that can hold its types with WriteRaw and reads the copies back unchanged; and
// checks that the reference libraries read the committed copies (gen_raw.py) as the originals.
func TestRawGolden(t *testing.T) {
	g := readRawGolden(t)
	if len(g.Files) < 5 {
		t.Fatalf("expected.json lists %d files", len(g.Files))
	}
	for src, want := range g.Files {
		af := openRaw(t, src)
		infos, err := af.RawInfos()
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if len(infos) != len(want) {
			t.Errorf("%s: %d tensors, want %d", src, len(infos), len(want))
		}
		raws := make([][]byte, len(infos))
		for i, in := range infos {
			w, ok := want[in.Name]
			if !ok {
				t.Errorf("%s: unexpected tensor %q", src, in.Name)
				continue
			}
			if in.DType != w.DType || !slices.Equal(in.Shape, w.Shape) || in.Bytes() != w.Bytes {
				t.Errorf("%s: %q is %s %v (%d bytes), want %s %v (%d bytes)", src, in.Name, in.DType, in.Shape, in.Bytes(), w.DType, w.Shape, w.Bytes)
			}
			if raws[i], err = af.ReadRaw(in.Name); err != nil {
				t.Fatalf("%s: %q: %v", src, in.Name, err)
			}
			if sum(raws[i]) != w.SHA256 {
				t.Errorf("%s: %q: the bytes differ from the reference's", src, in.Name)
			}
		}
		for _, f := range []struct {
			format arrays.Format
			ext    string
		}{{arrays.FormatTorch, ".pt"}, {arrays.FormatSafetensors, ".safetensors"}, {arrays.FormatNPZ, ".npz"}} {
			var b bytes.Buffer
			err := arrays.WriteRaw(&b, f.format, infos, arrays.RawOptions{}, func(i int) ([]byte, error) { return raws[i], nil })
			if err != nil {
				if !strings.Contains(err.Error(), "cannot hold") && !strings.Contains(err.Error(), "does not write") {
					t.Errorf("%s to %s: %v", src, f.format, err)
				}
				continue
			}
			name := strings.ReplaceAll(src, "/", "__") + f.ext
			back, err := arrays.OpenReader(bytes.NewReader(b.Bytes()), int64(b.Len()), name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := back.RawInfos()
			if err != nil || len(got) != len(infos) {
				t.Fatalf("%s: %v, %d tensors", name, err, len(got))
			}
			for i, in := range got {
				r, err := back.ReadRaw(in.Name)
				if err != nil || in.Name != infos[i].Name || in.DType != infos[i].DType || !slices.Equal(in.Shape, infos[i].Shape) || !bytes.Equal(r, raws[i]) {
					t.Errorf("%s: tensor %d (%q) did not round-trip: %v", name, i, in.Name, err)
				}
			}
			path := filepath.Join(rawDir, "go", name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			committed, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(committed, b.Bytes()) {
				t.Errorf("%s: differs from the file the reference libraries checked (go test -run TestRawGolden -update, then gen_raw.py): %v", name, err)
			}
			if ok, checked := g.Written[name]; !checked || !ok {
				t.Errorf("%s: the reference libraries read it back as the original: %v (checked: %v)", name, ok, checked)
			}
		}
	}
}

// TestListingNamesDTypesAlike: an element type is listed by one name whatever the container
// holds it (.npy "<f8" or ">f8", safetensors "F64", torch.float64 are all "float64"), and
// distinct types by distinct names: over the raw golden files, which hold integers, booleans,
// half and complex tensors, big-endian and Fortran-ordered ones; and over the same arrays
// written to every container.
func TestListingNamesDTypesAlike(t *testing.T) {
	g := readRawGolden(t)
	named := map[string]string{} // raw type → its listed name
	seen := map[string]string{}  // listed name → the file that listed it
	for src, want := range g.Files {
		for _, in := range openRaw(t, src).Arrays() {
			raw := want[in.Name].DType
			if name, ok := named[raw]; ok && name != in.DType {
				t.Errorf("%s: %q of %s is listed as %s, %s as %s", src, in.Name, raw, in.DType, seen[name], name)
			}
			named[raw], seen[in.DType] = in.DType, src
		}
	}
	byName := map[string]string{}
	for raw, name := range named {
		if other, dup := byName[name]; dup {
			t.Errorf("%s and %s are both listed as %s", raw, other, name)
		}
		byName[name] = raw
	}
	want := map[string]string{"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
		"C64": "complex64", "I64": "int64", "I32": "int32", "U8": "uint8", "BOOL": "bool"}
	if !maps.Equal(named, want) {
		t.Errorf("listed names %v, want %v", named, want)
	}

	a := []arrays.Named{{Name: "x", Array: arrays.Vector([]float64{1, 2})}}
	for _, d := range []arrays.DType{arrays.Float64, arrays.Float32, arrays.BFloat16} {
		files := map[string][]byte{}
		files["x.safetensors"], _ = arrays.EncodeSafetensors(a, arrays.SafetensorsOptions{DType: d})
		files["x.pt"], _ = arrays.EncodeTorch(a, arrays.TorchOptions{DType: d})
		if d != arrays.BFloat16 { // NumPy has none
			files["x.npz"], _ = arrays.EncodeNPZ(a, arrays.NPZOptions{DType: d})
			files["x.npy"], _ = arrays.EncodeNPY(a[0].Array, d)
		}
		for name, b := range files {
			af, err := arrays.OpenReader(bytes.NewReader(b), int64(len(b)), name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := af.Arrays()[0].DType; got != d.String() {
				t.Errorf("%s of %s: listed as %s, want %s", name, d, got, d)
			}
		}
	}
}

// The encoders of float arrays write what WriteRaw writes: one writer per format.
func TestEncodersAreRaw(t *testing.T) {
	a := []arrays.Named{{Name: "x", Array: &arrays.Array{Shape: []int{2, 2}, Data: []float64{1, -2.5, 3e-3, 4}}}, {Name: "s", Array: &arrays.Array{Shape: []int{}, Data: []float64{7}}}}
	for _, d := range []arrays.DType{arrays.Float64, arrays.Float32, arrays.BFloat16} {
		raws := make([][]byte, len(a))
		infos := make([]arrays.RawInfo, len(a))
		for i, x := range a {
			var err error
			if raws[i], err = arrays.EncodeRaw(x.Array.Data, arrays.RawType(d)); err != nil {
				t.Fatal(err)
			}
			infos[i] = arrays.RawInfo{Name: x.Name, DType: arrays.RawType(d), Shape: x.Array.Shape}
		}
		raw := func(f arrays.Format) []byte {
			var b bytes.Buffer
			if err := arrays.WriteRaw(&b, f, infos, arrays.RawOptions{Metadata: map[string]string{"k": "v"}}, func(i int) ([]byte, error) { return raws[i], nil }); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		st, err := arrays.EncodeSafetensors(a, arrays.SafetensorsOptions{DType: d, Metadata: map[string]string{"k": "v"}})
		if err != nil || !bytes.Equal(st, raw(arrays.FormatSafetensors)) {
			t.Errorf("%v: EncodeSafetensors differs from WriteRaw: %v", d, err)
		}
		pt, err := arrays.EncodeTorch(a, arrays.TorchOptions{DType: d})
		if err != nil || !bytes.Equal(pt, raw(arrays.FormatTorch)) {
			t.Errorf("%v: EncodeTorch differs from WriteRaw: %v", d, err)
		}
		if d == arrays.BFloat16 {
			continue
		}
		npz, err := arrays.EncodeNPZ(a, arrays.NPZOptions{DType: d})
		if err != nil || !bytes.Equal(npz, raw(arrays.FormatNPZ)) {
			t.Errorf("%v: EncodeNPZ differs from WriteRaw: %v", d, err)
		}
	}
}

func TestWriteRawRefuses(t *testing.T) {
	ok := func(int) ([]byte, error) { return make([]byte, 8), nil }
	for _, c := range []struct {
		f     arrays.Format
		infos []arrays.RawInfo
		want  string
	}{
		{arrays.FormatSafetensors, []arrays.RawInfo{{Name: "c", DType: "C64", Shape: []int{1}}}, `"c" is complex64, which safetensors cannot hold`},
		{arrays.FormatNPZ, []arrays.RawInfo{{Name: "b", DType: "BF16", Shape: []int{4}}}, `"b" is bfloat16, which NumPy files cannot hold`},
		{arrays.FormatTorch, []arrays.RawInfo{{Name: "u", DType: "U16", Shape: []int{4}}}, `"u" is uint16, which ssmlab does not write`},
		{arrays.FormatTorch, []arrays.RawInfo{{Name: "x", DType: "F64", Shape: []int{1}}, {Name: "x", DType: "F64", Shape: []int{1}}}, "two arrays"},
		{arrays.FormatTorch, []arrays.RawInfo{{Name: "x", DType: "F32", Shape: []int{1}}}, "4 bytes"},
		{arrays.FormatCSV, []arrays.RawInfo{{Name: "x", DType: "F64", Shape: []int{1}}}, "cannot write"},
	} {
		err := arrays.WriteRaw(&bytes.Buffer{}, c.f, c.infos, arrays.RawOptions{}, ok)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.f, c.infos, err, c.want)
		}
	}
}

// TestEncodeRawNamesItsTypes: the types EncodeRaw's refusal lists are exactly those it
// encodes. It listed F16, which it refused ("cannot write float16").
func TestEncodeRawNamesItsTypes(t *testing.T) {
	_, err := arrays.EncodeRaw([]float64{1}, "I8")
	msg := err.Error()
	i := strings.LastIndex(msg, "want ")
	if i < 0 {
		t.Fatalf("%q lists no types", msg)
	}
	listed := strings.FieldsFunc(strings.ReplaceAll(msg[i+len("want "):], " or ", ","), func(r rune) bool { return r == ',' || r == ' ' })
	for _, dtype := range []string{"F64", "F32", "F16", "BF16", "C64", "C128", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL", "F8_E5M2", "F8_E4M3"} {
		_, err := arrays.EncodeRaw([]float64{1, -0.5}, dtype)
		if want := slices.Contains(listed, dtype); (err == nil) != want {
			t.Errorf("%s: listed %v (%q), encoded: %v", dtype, want, msg, err)
		}
	}
}

// FuzzRawFile reads every tensor of any file as raw bytes: no panic, never more bytes than
// the file holds, exactly RawInfo.Bytes of them, and for the float types the same values
// Read converts.
func FuzzRawFile(f *testing.F) {
	for _, s := range rawSeeds(f) {
		f.Add(s.data, s.name)
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		af, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), name)
		if err != nil {
			return
		}
		infos, err := af.RawInfos()
		if err != nil {
			return
		}
		for _, in := range infos {
			raw, err := af.ReadRaw(in.Name)
			if err != nil {
				continue
			}
			if int64(len(raw)) != in.Bytes() {
				t.Fatalf("%q: %d bytes, RawInfo says %d", in.Name, len(raw), in.Bytes())
			}
			if len(raw) > len(data) && af.Format != arrays.FormatNPZ {
				t.Fatalf("%q: %d bytes from a file of %d", in.Name, len(raw), len(data))
			}
			if in.DType != "F64" && in.DType != "F32" {
				continue
			}
			a, err := af.Read(in.Name)
			if err != nil {
				continue
			}
			var want []byte
			if want, err = arrays.EncodeRaw(a.Data, in.DType); err != nil || !bytes.Equal(want, raw) {
				t.Fatalf("%q: ReadRaw and Read disagree (%v)", in.Name, err)
			}
		}
	})
}

// rawSeed is an input of FuzzRawFile: a file and its name.
type rawSeed struct {
	data []byte
	name string
}

// rawSeeds are the raw golden files cut into files of one tensor each (the arrays of
// raw.npz, 250 to 300 bytes, where the whole is 1.6 KB; the tensors of raw.safetensors as
// WriteRaw writes them) and the small torch.save files, each with a name of its format.
func rawSeeds(t testing.TB) []rawSeed {
	var out []rawSeed
	npz, err := os.ReadFile(filepath.Join(rawDir, "raw.npz"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fuzzcorpus.SplitZip(npz)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out = append(out, rawSeed{e, "raw.npz"})
	}
	af, err := arrays.Open(filepath.Join(rawDir, "raw.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	infos, err := af.RawInfos()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		raw, err := af.ReadRaw(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := arrays.WriteRaw(&b, arrays.FormatSafetensors, []arrays.RawInfo{in}, arrays.RawOptions{}, func(int) ([]byte, error) { return raw, nil }); err != nil {
			t.Fatal(err)
		}
		out = append(out, rawSeed{b.Bytes(), "raw.safetensors"})
	}
	for _, b := range smallTorch(t) {
		out = append(out, rawSeed{b, "x.pt"})
	}
	return out
}

// TestReadIntAnyContainer: an S4 layer's l_kernel buffer, an int64 scalar, reads from a
// safetensors and an .npz file as from a torch.save one (testdata/layouts/gen_ckpt.py); it
// was refused outside torch.save files ("integer tensors are read from torch.save files
// only"). A float tensor, or one of more than one element, is not an integer scalar.
func TestReadIntAnyContainer(t *testing.T) {
	for _, name := range []string{"s4_lkernel_32.safetensors", "s4_lkernel_64.npz", "s4_64.pt"} {
		af, err := arrays.Open(filepath.Join("../../testdata/layouts", name))
		if err != nil {
			t.Fatal(err)
		}
		defer af.Close()
		prefix := "model.layers.0.layer.layer."
		if name == "s4_64.pt" {
			prefix = "encoder.layers.2.layer."
		}
		if n, err := af.ReadInt(prefix + "kernel.l_kernel"); err != nil || n != 64 {
			t.Errorf("%s: l_kernel %d, %v; want 64", name, n, err)
		}
		if _, err := af.ReadInt(prefix + "kernel.inv_dt"); !errors.Is(err, arrays.ErrUnsupported) {
			t.Errorf("%s: inv_dt read as an integer: %v", name, err)
		}
		if _, err := af.ReadInt(prefix + "kernel.nothing"); !errors.Is(err, arrays.ErrNotFound) {
			t.Errorf("%s: a missing tensor: %v", name, err)
		}
	}
}

// TestWrittenRawType: WrittenRawType says of every raw type and container what the writers
// do: where it gives a type, EncodeRaw and WriteRaw write it and the file reads back as that
// type; where it gives none, one of them refuses it. (A copy of this table in package
// sessions said so for F64, F32 and BF16 alone.)
func TestWrittenRawType(t *testing.T) {
	for _, raw := range arrays.RawTypes {
		for _, f := range []arrays.Format{arrays.FormatTorch, arrays.FormatSafetensors, arrays.FormatNPZ} {
			d, ok := arrays.WrittenRawType(raw, f)
			data, err := arrays.EncodeRaw([]float64{1.5, -2}, raw)
			var b bytes.Buffer
			if err == nil {
				err = arrays.WriteRaw(&b, f, []arrays.RawInfo{{Name: "x", DType: raw, Shape: []int{2}}}, arrays.RawOptions{}, func(int) ([]byte, error) { return data, nil })
			}
			if ok != (err == nil) {
				t.Errorf("%s in %s: WrittenRawType says %v, the writers %v", raw, f, ok, err)
				continue
			}
			if !ok {
				continue
			}
			back, err := arrays.OpenReader(bytes.NewReader(b.Bytes()), int64(b.Len()), "x."+string(f))
			if err != nil {
				t.Fatalf("%s in %s: %v", raw, f, err)
			}
			if in := back.Arrays(); len(in) != 1 || in[0].DType != d.String() {
				t.Errorf("%s in %s: reads back as %+v, WrittenRawType says %s", raw, f, in, d)
			}
		}
	}
}

// TestTiedTensorsStayTied: a torch.save file's tied tensors (tied.pt: "head" is "emb", as
// a model whose output layer shares its embedding's parameter saves them) are listed as
// tied, and written back to a torch.save file as one storage, which reads back tied with
// the same bytes; to safetensors as copies. A view of the storage at an offset ("row") is
// a copy. They were written as two storages.
func TestTiedTensorsStayTied(t *testing.T) {
	af := openTorch(t, "tied.pt")
	infos, err := af.RawInfos()
	if err != nil {
		t.Fatal(err)
	}
	var tied []string
	for _, in := range infos {
		if in.Tied != "" {
			tied = append(tied, in.Name+" → "+in.Tied)
		}
	}
	if want := []string{"head → emb"}; !slices.Equal(tied, want) {
		t.Fatalf("tied tensors %q, want %q", tied, want)
	}
	data := func(i int) ([]byte, error) { return af.ReadRaw(infos[i].Name) }
	for _, f := range []arrays.Format{arrays.FormatTorch, arrays.FormatSafetensors} {
		var b bytes.Buffer
		if err := arrays.WriteRaw(&b, f, infos, arrays.RawOptions{}, data); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := arrays.OpenReader(bytes.NewReader(b.Bytes()), int64(b.Len()), "out."+string(f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got, err := back.RawInfos()
		if err != nil || len(got) != len(infos) {
			t.Fatalf("%s: %d tensors, %v", f, len(got), err)
		}
		for i, in := range got {
			wantTied := infos[i].Tied
			if f != arrays.FormatTorch {
				wantTied = ""
			}
			r, err := back.ReadRaw(in.Name)
			w, _ := data(i)
			if err != nil || in.Name != infos[i].Name || in.Tied != wantTied || !bytes.Equal(r, w) {
				t.Errorf("%s: tensor %q: tied to %q (want %q), %v, same bytes %v", f, in.Name, in.Tied, wantTied, err, bytes.Equal(r, w))
			}
		}
	}
}

// TestWriteRawTiedChecked: a tensor tied to one that is not an earlier untied tensor of its
// type and shape is refused before anything is written.
func TestWriteRawTiedChecked(t *testing.T) {
	a := arrays.RawInfo{Name: "a", DType: "F32", Shape: []int{2}}
	for _, infos := range [][]arrays.RawInfo{
		{{Name: "b", DType: "F32", Shape: []int{2}, Tied: "a"}, a},                                                        // later
		{a, {Name: "b", DType: "F64", Shape: []int{2}, Tied: "a"}},                                                        // another type
		{a, {Name: "b", DType: "F32", Shape: []int{1, 2}, Tied: "a"}},                                                     // another shape
		{a, {Name: "b", DType: "F32", Shape: []int{2}, Tied: "c"}},                                                        // none
		{a, {Name: "b", DType: "F32", Shape: []int{2}, Tied: "a"}, {Name: "c", DType: "F32", Shape: []int{2}, Tied: "b"}}, // tied itself
	} {
		var b bytes.Buffer
		err := arrays.WriteRaw(&b, arrays.FormatTorch, infos, arrays.RawOptions{}, func(int) ([]byte, error) { return make([]byte, 8), nil })
		if err == nil || !strings.Contains(err.Error(), "which is no earlier untied tensor of its type and shape") || b.Len() != 0 {
			t.Errorf("%+v: %v (%d bytes written), want it refused", infos, err, b.Len())
		}
	}
}
