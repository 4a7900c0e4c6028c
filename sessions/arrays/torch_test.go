package arrays_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/fuzzcorpus"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// torchDir holds the files torch.save wrote (testdata/golden/torch/gen_torch.py) and the
// values they hold, in expected.json.
const torchDir = "../../testdata/golden/torch"

func openTorch(t *testing.T, name string) *arrays.File {
	t.Helper()
	af, err := arrays.Open(filepath.Join(torchDir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { af.Close() })
	if af.Format != arrays.FormatTorch {
		t.Fatalf("%s: format %s, want torch", name, af.Format)
	}
	return af
}

// TestTorchGolden reads every float tensor torch.save wrote, bit for bit: dtypes float64,
// float32, float16, bfloat16 and complex64, transposed and sliced views of a shared storage,
// a scalar, an nn.Module's state_dict and a Lightning checkpoint's; in the files of several
// tensors and in the small ones (small_*, the fuzzers' seeds) of one or two.
func TestTorchGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(torchDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]json.RawMessage
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	files := slices.Sorted(maps.Keys(exp))
	if files = slices.DeleteFunc(files, func(k string) bool { return k == "torch" }); len(files) < 9 {
		t.Fatalf("expected.json holds the values of %d files, want 9", len(files))
	}
	for _, file := range files {
		var want map[string]numtest.GoldenArray
		if err := json.Unmarshal(exp[file], &want); err != nil {
			t.Fatal(err)
		}
		af := openTorch(t, file)
		infos := map[string]arrays.Info{}
		for _, in := range af.Arrays() {
			infos[in.Name] = in
		}
		for name, w := range want {
			in, ok := infos[name]
			if !ok {
				t.Errorf("%s: %q not listed (%v)", file, name, af.Arrays())
				continue
			}
			if !slices.Equal(in.Shape, w.Shape) || !in.Supported {
				t.Errorf("%s: %q listed as %+v, want shape %v", file, name, in, w.Shape)
			}
			a, err := af.Read(name)
			if err != nil {
				t.Errorf("%s: %q: %v", file, name, err)
				continue
			}
			if !slices.Equal(a.Shape, w.Shape) || !slices.Equal(a.Data, w.Data) {
				t.Errorf("%s: %q reads %v %v, want %v %v", file, name, a.Shape, a.Data, w.Shape, w.Data)
			}
		}
		if strings.HasSuffix(file, ".ckpt") {
			if af.Root() != "state_dict" || len(af.Arrays()) != len(want) {
				t.Errorf("lightning: root %q, %d tensors listed, want the %d of state_dict", af.Root(), len(af.Arrays()), len(want))
			}
		}
	}
	af := openTorch(t, "state.pt")
	if _, err := af.Read("step"); !errors.Is(err, arrays.ErrUnsupported) || !strings.Contains(err.Error(), "int64") {
		t.Errorf("int64 tensor: %v, want ErrUnsupported naming int64", err)
	}
	for _, in := range af.Arrays() {
		if in.Name == "c64" && (!in.Complex || in.DType != "complex64") {
			t.Errorf("c64 listed as %+v", in)
		}
	}
}

func TestTorchLegacyRefused(t *testing.T) {
	_, err := arrays.Open(filepath.Join(torchDir, "legacy.pt"))
	if !errors.Is(err, arrays.ErrUnsupported) || !strings.Contains(err.Error(), "legacy") || !strings.Contains(err.Error(), "torch.save") {
		t.Errorf("legacy torch.save file: %v, want ErrUnsupported saying how to re-save it", err)
	}
}

// torchZip wraps a pickle as the data.pkl of a torch.save archive, without the version
// entry, which the reader ignores (the fuzzers' seeds are best small).
func torchZip(t testing.TB, pkl []byte, extra map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	add := func(name string, data []byte) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	add("archive/data.pkl", pkl)
	for k, v := range extra {
		add(k, v)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// evilPickles would run code in Python's unpickler; each names the global that does it.
var evilPickles = []struct{ name, pkl, global string }{
	{"os.system, protocol 0", "cos\nsystem\n(S'echo pwned'\ntR.", `"os.system"`},
	{"posix.system, protocol 2", "\x80\x02cposix\nsystem\nq\x00X\x0b\x00\x00\x00echo pwnedq\x01\x85q\x02Rq\x03.", `"posix.system"`},
	{"builtins.eval, protocol 4", "\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x8c\x04eval\x93\x8c\x0bprint('hi')\x85R.", `"builtins.eval"`},
	{"a class of the training code", "\x80\x02c__main__\nNet\n)\x81.", `"__main__.Net"`},
	{"os.system inside a state_dict", "\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00wcos\nsystem\nX\x02\x00\x00\x00ls\x85Ru.", `"os.system"`},
}

// TestTorchRefusesCode: a pickle that would call os.system (or any global outside the
// allowlist) is refused by name, and nothing runs.
func TestTorchRefusesCode(t *testing.T) {
	for _, e := range evilPickles {
		data := torchZip(t, []byte(e.pkl), nil)
		_, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), "evil.pt")
		if !errors.Is(err, arrays.ErrUnsupported) || !strings.Contains(err.Error(), e.global) || !strings.Contains(err.Error(), "never runs") {
			t.Errorf("%s: %v, want ErrUnsupported naming %s", e.name, err, e.global)
		}
		checkReject(t, err)
	}
}

// TestTorchObjectsBesideTheModel: a Lightning checkpoint as state-spaces/s4's and safari's
// train.py save it, whose hyper_parameters are an OmegaConf DictConfig (classes, their
// states, a defaultdict's items: testdata/layouts/gen_ckpt.py), reads its state_dict; the
// objects beside it are left unread, nothing of them imported or run. It was refused, naming
// omegaconf.dictconfig.DictConfig. A file of such objects and no tensor stays refused
// naming one (TestTorchRefusesCode), and so does one whose object holds a tensor.
func TestTorchObjectsBesideTheModel(t *testing.T) {
	af, err := arrays.Open("../../testdata/layouts/hyena_lightning_32.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	if af.Root() != "state_dict" {
		t.Errorf("root %q, want state_dict", af.Root())
	}
	infos := af.Arrays()
	if len(infos) != 15 {
		t.Errorf("%d tensors listed, want the 15 of state_dict: %v", len(infos), infos)
	}
	for _, in := range infos {
		if !strings.HasPrefix(in.Name, "model.backbone.layers.0.mixer.") {
			t.Errorf("%q listed: not the state_dict's", in.Name)
		}
	}
	// Under a key no convention names, the whole file is read, around an argparse.Namespace
	// and a numpy.float64 that hold no tensor; it was refused, naming argparse.Namespace.
	af2, err := arrays.Open("../../testdata/layouts/s4d_args_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer af2.Close()
	if in := af2.Arrays(); len(in) != 6 || !strings.HasPrefix(in[0].Name, "model_state.layers.0.layer.") {
		t.Errorf("s4d_args_64.pt: %v, want the 6 tensors of model_state", in)
	}
	// An object of the training code's class that holds a tensor cannot be read around.
	if _, err := arrays.Open("../../testdata/layouts/holder_tensor.pt"); !errors.Is(err, arrays.ErrUnsupported) || !strings.Contains(err.Error(), `"__main__.Holder"`) {
		t.Errorf("holder_tensor.pt: %v, want a refusal naming __main__.Holder", err)
	}
}

// TestTorchRoundTrip: EncodeTorch writes what OpenTorch reads back, exactly in float64 and
// rounded to float32 and bfloat16 (to nearest even) otherwise.
func TestTorchRoundTrip(t *testing.T) {
	a, _ := arrays.New([]int{2, 3}, []float64{1, -2.5, math.Pi, 1e-3, 65504.123, -7})
	b := arrays.Vector([]float64{0.1, 0.2})
	for _, d := range []arrays.DType{arrays.Float64, arrays.Float32, arrays.BFloat16} {
		data, err := arrays.EncodeTorch([]arrays.Named{{Name: "layer.w", Array: a}, {Name: "layer.b", Array: b}}, arrays.TorchOptions{DType: d})
		if err != nil {
			t.Fatal(err)
		}
		af, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), "x.pt")
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for _, want := range []arrays.Named{{Name: "layer.w", Array: a}, {Name: "layer.b", Array: b}} {
			got, err := af.Read(want.Name)
			if err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			for i, x := range want.Array.Data {
				if got.Data[i] != d.Round(x) {
					t.Errorf("%s: %s[%d] = %v, want %v", d, want.Name, i, got.Data[i], d.Round(x))
				}
			}
			if !slices.Equal(got.Shape, want.Array.Shape) {
				t.Errorf("%s: %s shape %v", d, want.Name, got.Shape)
			}
		}
		if in := af.Arrays(); in[0].DType != d.String() {
			t.Errorf("%s: listed dtype %q", d, in[0].DType)
		}
	}
	if _, err := arrays.EncodeTorch([]arrays.Named{{Name: "x", Array: b}}, arrays.TorchOptions{DType: arrays.Float16}); err == nil {
		t.Error("EncodeTorch wrote float16")
	}
}

// TestTorchStorageBounds: views and storages that reach past their data are refused before
// anything is allocated for them.
func TestTorchStorageBounds(t *testing.T) {
	tensor := func(numel, off, size, stride string) string {
		return "\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00wctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu" +
			numel + "tQ" + off + size + stride + "\x89ccollections\nOrderedDict\n)RtRu."
	}
	four := map[string][]byte{"archive/data/0": make([]byte, 16)}
	for _, c := range []struct{ name, pkl, want string }{
		{"storage larger than its entry", tensor("K\x05", "K\x00", "K\x05\x85", "K\x01\x85"), "entry holds 16 bytes"},
		{"view past the storage", tensor("K\x04", "K\x01", "K\x04\x85", "K\x01\x85"), "reaches past"},
		{"huge storage", tensor("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x01", "K\x00", "K\x01\x85", "K\x01\x85"), "beyond the limit"},
		{"negative stride", tensor("K\x04", "K\x03", "K\x02\x85", "J\xff\xff\xff\xff\x85"), "stride"},
	} {
		data := torchZip(t, []byte(c.pkl), four)
		_, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), "x.pt")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		} else {
			checkReject(t, err)
		}
	}
}

// smallTorch are the small torch.save files of torchDir without the alignment padding and
// the version entry, which the reader ignores: 490 to 760 bytes each, where the files of
// several tensors are 1.4 to 2.6 KB.
func smallTorch(t testing.TB) [][]byte {
	paths, err := filepath.Glob(filepath.Join(torchDir, "small_*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no small torch.save files in %s: %v", torchDir, err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := fuzzcorpus.Rezip(b, func(name string) bool { return !strings.HasSuffix(name, "/version") })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func torchSeeds(t testing.TB) [][]byte {
	legacy, err := os.ReadFile(filepath.Join(torchDir, "legacy.pt"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := append(smallTorch(t), legacy)
	for _, e := range evilPickles {
		seeds = append(seeds, torchZip(t, []byte(e.pkl), nil))
	}
	return seeds
}

// FuzzTorch: no input makes the torch reader panic or run away; every rejection is a proper
// one, and every tensor it lists reads or is refused properly.
func FuzzTorch(f *testing.F) {
	for _, s := range torchSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		af, err := arrays.OpenReader(bytes.NewReader(data), int64(len(data)), "x.pt")
		if err != nil {
			checkReject(t, err)
			return
		}
		for _, in := range af.Arrays() {
			a, err := af.Read(in.Name)
			if err != nil {
				checkReject(t, err)
				continue
			}
			if err := a.Validate(); err != nil || !slices.Equal(a.Shape, in.Shape) {
				t.Fatalf("%q: read %v (listed %v): %v", in.Name, a.Shape, in.Shape, err)
			}
		}
	})
}

// TestTorchChecksum: a bit flipped in a storage's data is caught by the entry's CRC-32 on
// the first read of any tensor of it, even of a view that misses the flipped byte, in one line
// naming the tensor and the entry (torch.load refuses such a file too), however often it is
// read. The file still opens and lists, as its data is read only when asked for, and the
// tensors of the other storages read.
func TestTorchChecksum(t *testing.T) {
	data, err := os.ReadFile("../../testdata/layouts/lru_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	bad := flipBit(t, data, "lru_64/data/3", 5) // B_re's storage
	af, err := arrays.OpenReader(bytes.NewReader(bad), int64(len(bad)), "lru_64.pt")
	if err != nil {
		t.Fatalf("opening: %v", err)
	}
	const want = `torch: tensor "layers_0.seq.B_re": entry "lru_64/data/3": checksum error`
	for _, in := range af.Arrays() {
		for range 2 {
			_, err := af.Read(in.Name)
			_, errRaw := af.ReadRaw(in.Name)
			if in.Name != "layers_0.seq.B_re" {
				if err != nil || errRaw != nil {
					t.Errorf("%s: %v, %v", in.Name, err, errRaw)
				}
				continue
			}
			expectError(t, "Read", err, arrays.ErrInvalid, want)
			expectError(t, "ReadRaw", errRaw, arrays.ErrInvalid, want)
		}
	}

	// small_views.pt: t (all of a 2×2 storage, transposed) and s (its last element).
	data, err = os.ReadFile(filepath.Join(torchDir, "small_views.pt"))
	if err != nil {
		t.Fatal(err)
	}
	bad = flipBit(t, data, "small_views/data/0", 0)
	af, err = arrays.OpenReader(bytes.NewReader(bad), int64(len(bad)), "small_views.pt")
	if err != nil {
		t.Fatalf("opening: %v", err)
	}
	for _, name := range []string{"s", "t"} {
		_, err := af.Read(name)
		expectError(t, name, err, arrays.ErrInvalid, `entry "small_views/data/0": checksum error`)
	}
}

// TestTruncatedTorchFile: a torch.save file cut in half is no longer a readable zip, which
// npz and torch.save files both are; the error says so without calling it an npz ("npz: not
// a valid zip archive" for model.pt).
func TestTruncatedTorchFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(torchDir, "module.pt"))
	if err != nil {
		t.Fatal(err)
	}
	half := data[:len(data)/2]
	_, err = arrays.OpenReader(bytes.NewReader(half), int64(len(half)), "module.pt")
	expectError(t, "half of module.pt", err, arrays.ErrInvalid, "torch.save")
	if err != nil && strings.Contains(err.Error(), "npz:") {
		t.Errorf("half of module.pt: %v names the file an npz", err)
	}
}

// TestTorchFlattened: Flattened says where a torch.save file's tensors sit in what is read:
// a Lightning checkpoint's state_dict is flat and alone; a model under a key no convention
// names sits below the top level, beside values that are not tensors.
func TestTorchFlattened(t *testing.T) {
	for file, want := range map[string]struct {
		nested bool
		others []string
	}{
		"hyena_lightning_32.ckpt": {false, nil},
		"s4d_args_64.pt":          {true, []string{"epoch", "args", "best_acc"}},
		"s4d_64.pt":               {false, nil},
	} {
		af, err := arrays.Open(filepath.Join("../../testdata/layouts", file))
		if err != nil {
			t.Fatal(err)
		}
		nested, others, n := af.Flattened()
		if nested != want.nested || !slices.Equal(others, want.others) || n != len(want.others) {
			t.Errorf("%s: nested %v, others %v (%d); want %v, %v", file, nested, others, n, want.nested, want.others)
		}
		af.Close()
	}
}
