package sessions_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

const layoutsDir = "../testdata/layouts/"

// TestImportLayerBadInput: an unknown layout, or one the file does not hold, lists what was
// detected; a missing or mis-shaped tensor is named with the shape expected.
func TestImportLayerBadInput(t *testing.T) {
	for _, tc := range []struct {
		o    sessions.ImportOptions
		want string
	}{
		{sessions.ImportOptions{Layout: "mamba"}, `unknown layout "mamba" (want rtf, s4d, s4, stripedhyena, hyena, lru, s5, rotrnn, sos) (or kernels); the file holds s4d "layers.0.layer."`},
		{sessions.ImportOptions{Layout: "lru"}, `no layer of layout lru; detected: s4d "layers.0.layer."`},
		{sessions.ImportOptions{Layout: "s4"}, `the tensor "layers.0.layer.kernel.P" is missing: want shape (rank, n_ssm, N/2, 2)`},
		{sessions.ImportOptions{Tensor: "layers.9"}, ""}, // no such layer: read as an array, which does not exist either
		{sessions.ImportOptions{Options: map[string]string{"h0": "twice"}}, "--h0 is an option of the rtf layout, not of s4d"},
	} {
		_, err := sessions.Import(layoutsDir+"s4d_64.pt", tc.o)
		if err == nil || tc.want != "" && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
	// A mis-shaped tensor: S4D's B with the wrong N/2.
	af, err := arrays.Open(layoutsDir + "s4d_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	var src layouts.NamedSource
	for _, in := range af.Arrays() {
		a, err := af.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(in.Name, "kernel.B") {
			a = &arrays.Array{Shape: []int{1, 1, 3, 2}, Data: a.Data[:6]}
		}
		src = append(src, arrays.Named{Name: in.Name, Array: a})
	}
	l, err := layouts.Find(src.Arrays(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = layouts.Import(src, l, layouts.Options{})
	if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), `the tensor "layers.0.layer.kernel.B" has shape (1, 1, 3, 2), want (1, n_ssm, N/2, 2) = (1, 4, 2)`) {
		t.Errorf("mis-shaped B: %v", err)
	}
}

// TestParameterNotKernels: an LRU's B_re asked for by name is its layer (said in the note),
// and read as kernels only with --layout kernels, with a warning.
func TestParameterNotKernels(t *testing.T) {
	it, err := sessions.Import(layoutsDir+"lru_64.pt", sessions.ImportOptions{Tensor: "layers_0.seq.B_re"})
	if err != nil || it.Entry == nil || !strings.HasPrefix(it.Note, "lru layer layers_0.seq:") || len(it.Warnings) != 1 || !strings.Contains(it.Warnings[0], "multi-input multi-output") {
		t.Errorf("--tensor B_re: %+v, %v; want the LRU layer, with the MIMO warning", it, err)
	}
	it, err = sessions.Import(layoutsDir+"lru_64.pt", sessions.ImportOptions{Tensor: "layers_0.seq.B_re", Layout: sessions.Kernels})
	if err != nil || it.Target == nil || len(it.Warnings) != 1 || !strings.Contains(it.Warnings[0], "the B_re parameter of a lru layer, not kernels") {
		t.Errorf("--layout kernels --tensor B_re: %+v, %v; want kernels with a warning", it, err)
	}
}

// TestLoneParameterSaysWhy: a file whose one array that reads as kernels is a layer's
// parameter (an RTF layer without its h_0), alone or beside a complex one, is read as kernels,
// with a warning that says why; it said "because it was asked for by name" though no --tensor
// was given, and then "the file's only array" beside another.
func TestLoneParameterSaysWhy(t *testing.T) {
	abData := []float64{-0.5, 0.1, 0, -0.4, 0, 0, 1, 0.5, 0.25, 1, 0, 0}
	raw := make([]byte, 8*len(abData))
	for i, x := range abData {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
	}
	abInfo := arrays.RawInfo{Name: "layers.0.filter.ab", DType: "F64", Shape: []int{4, 3}}
	freqs := arrays.RawInfo{Name: "layers.0.filter.freqs", DType: "C64", Shape: []int{2}}
	dir := t.TempDir()
	var paths []string
	for _, infos := range [][]arrays.RawInfo{{abInfo}, {abInfo, freqs}} {
		var buf bytes.Buffer
		if err := arrays.WriteRaw(&buf, arrays.FormatNPZ, infos, arrays.RawOptions{}, func(i int) ([]byte, error) {
			if i == 0 {
				return raw, nil
			}
			return make([]byte, 16), nil
		}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("ab-%d.npz", len(infos)))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	for _, c := range []struct {
		path, tensor, want string
	}{
		{paths[0], "", "it was read as kernels, being the file's one array that can be (--layout rtf reads the layer, naming the tensors it lacks)"},
		{paths[1], "", "it was read as kernels, being the file's one array that can be (--layout rtf reads the layer, naming the tensors it lacks)"},
		{paths[0], "layers.0.filter.ab", "it was read as kernels because it was asked for by name"},
	} {
		it, err := sessions.Import(c.path, sessions.ImportOptions{Tensor: c.tensor, Layout: sessions.Kernels})
		if err != nil || it.Target == nil || len(it.Warnings) != 1 || !strings.Contains(it.Warnings[0], `"layers.0.filter.ab" is named as the ab parameter of a rtf layer, not kernels; `+c.want) {
			t.Errorf("%s --tensor %q: %+v, %v; want kernels with a warning saying %q", filepath.Base(c.path), c.tensor, it, err, c.want)
		}
	}
}

// TestPartialLayerSaid: a layer without a tensor its detection needs (an LRU's nu_log) is no
// layer, and import and distill said only "choose one" of its arrays, or that the file holds
// no layer of a known layout; they name the prefix, its layout and how to read it so, which
// names what it lacks. State-space matrices A, B, C, D are no layer's.
func TestPartialLayerSaid(t *testing.T) {
	af, err := arrays.Open(layoutsDir + "lru_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	var ts []arrays.Named
	for _, in := range af.Arrays() {
		if strings.HasSuffix(in.Name, "nu_log") {
			continue
		}
		a, err := af.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, arrays.Named{Name: in.Name, Array: a})
	}
	var abcd []arrays.Named
	for _, n := range []string{"A", "B", "C", "D"} {
		abcd = append(abcd, arrays.Named{Name: n, Array: arrays.Vector([]float64{1, 0.5})})
	}
	dir := t.TempDir()
	write := func(name string, ts []arrays.Named) string {
		data, err := arrays.EncodeNPZ(ts, arrays.NPZOptions{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	lru, plain := write("lru.npz", ts), write("abcd.npz", abcd)
	const hint = `"layers_0.seq." holds tensors of a lru layer (theta_log, gamma_log, B_re, B_im, and 3 more) but is none: --layout lru --tensor layers_0.seq. names what it lacks`
	if _, err := sessions.Import(lru, sessions.ImportOptions{}); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("import: %v; want %q", err, hint)
	}
	if _, err := sessions.OpenCheckpoint(lru, sessions.CheckpointOptions{Length: 64}); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("distill: %v; want %q", err, hint)
	}
	if _, err := sessions.Import(lru, sessions.ImportOptions{Layout: "lru", Tensor: "layers_0.seq."}); err == nil || !strings.Contains(err.Error(), `the tensor "layers_0.seq.nu_log" is missing`) {
		t.Errorf("import --layout lru: %v; want the missing tensor named", err)
	}
	if _, err := sessions.Import(plain, sessions.ImportOptions{}); err == nil || strings.Contains(err.Error(), "holds tensors of a") {
		t.Errorf("A, B, C, D: %v; want no layout named", err)
	}
}

// TestListFile lists a Lightning-style checkpoint's layer.
func TestListFile(t *testing.T) {
	l, err := sessions.ListFile(layoutsDir + "hyena_64.pt")
	if err != nil || l.Format != arrays.FormatTorch || len(l.Layers) != 1 || l.Layers[0].Layout != layouts.Hyena || l.Layers[0].Length != 48 || l.Layers[0].Channels != 3 {
		t.Errorf("%+v, %v", l, err)
	}
}

// TestListFileS4Length: an S4 layer is listed with the l_kernel its buffer holds, the length
// import undoes its C̃ for (option length), from a torch.save, safetensors or .npz file; it
// was not listed, though import and distill use it.
func TestListFileS4Length(t *testing.T) {
	for _, file := range []string{"s4_64.pt", "s4_lkernel_32.safetensors", "s4_lkernel_64.npz"} {
		l, err := sessions.ListFile(layoutsDir + file)
		if err != nil || len(l.Layers) != 1 || l.Layers[0].Options["length"] != "64" {
			t.Errorf("%s: %+v, %v; want length 64 among the options", file, l.Layers, err)
		}
	}
}

// TestImportMistypedPrefix: a --tensor that is neither an array nor a layer's prefix names
// the file's layers; the message listed the first ten arrays, which in a model of three
// layers did not reach the last two. It is an *OptionError of "tensor" (a command-line
// mistake, as a --layers that picks none is; it was a failure), still of arrays.ErrNotFound;
// so is a prefix no layer of the --layout given has.
func TestImportMistypedPrefix(t *testing.T) {
	for _, o := range []sessions.ImportOptions{{Tensor: "backbone.layers.2.mixer.filter"}, {Tensor: "backbone.layers.2.mixer.filter", Layout: "hyena"}} {
		_, err := sessions.Import("../testdata/scale/hyena_lm.safetensors", o)
		oe := (*sessions.OptionError)(nil)
		if !errors.As(err, &oe) || oe.Option != "tensor" || !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), `tensor "backbone.layers.2.mixer.filter" is no `) || !strings.Contains(err.Error(), `the file's layers are hyena "backbone.layers.0.mixer.filter_fn.", hyena "backbone.layers.1.mixer.filter_fn.", hyena "backbone.layers.2.mixer.filter_fn."`) {
			t.Errorf("a mistyped prefix (layout %q): %v", o.Layout, err)
		}
		if o.Layout == "" && !errors.Is(err, arrays.ErrNotFound) || o.Layout != "" && !errors.Is(err, layouts.ErrNotFound) {
			t.Errorf("a mistyped prefix (layout %q): %v is not of ErrNotFound", o.Layout, err)
		}
	}
}

// TestV3NamesSaid: a checkpoint of state-spaces/s4's v3 names (kernel.kernel.log_dt,
// log_w_real, w_imag), which no layout reads, is refused by import and distill naming the
// repository's converter to the v4 names; they said only that no layer was found.
func TestV3NamesSaid(t *testing.T) {
	const p = "layers.0.layer.kernel.kernel."
	var ts []arrays.Named
	for _, n := range []string{p + "log_dt", p + "log_w_real", p + "w_imag", p + "B", p + "C", "layers.0.layer.D"} {
		ts = append(ts, arrays.Named{Name: n, Array: arrays.Vector([]float64{-1, -2})})
	}
	data, err := arrays.EncodeNPZ(ts, arrays.NPZOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v3.npz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const hint = `"layers.0.layer.kernel.kernel.log_dt" is state-spaces/s4's v3 naming: that repository's checkpoints/convert_v3_to_v4.py renames`
	if _, err := sessions.Import(path, sessions.ImportOptions{}); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("import: %v", err)
	}
	if _, err := sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Length: 64}); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("distill: %v", err)
	}
}

// rawTensors returns the tensors of a model file as stored: what arrays.WriteRaw writes back.
func rawTensors(t *testing.T, path string) ([]arrays.RawInfo, [][]byte) {
	t.Helper()
	src, err := arrays.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	infos, err := src.RawInfos()
	if err != nil {
		t.Fatal(err)
	}
	data := make([][]byte, len(infos))
	for i, in := range infos {
		if data[i], err = src.ReadRaw(in.Name); err != nil {
			t.Fatal(err)
		}
	}
	return infos, data
}

// TestS4KernelLengthOneVerdict: an S4 layer's l_kernel buffer gets one verdict from import
// --list (ListFile), import and distill's checkpoint planner (OpenCheckpoint), the rule of
// layouts.S4KernelLength: 0 (C stored as it is) or a length in [2, 2^22]. The listing took
// any positive value and left others out without a word, import took [0, 2^24] and the
// planner distilled at values above 1, reading a buffer that was not an integer as none; so
// l_kernel 1 was listed and imported, 2^23 listed, imported and planned at 2^23 samples,
// -1 and 2^25 listed without a length, and a float buffer distilled at --length.
func TestS4KernelLengthOneVerdict(t *testing.T) {
	infos, data := rawTensors(t, layoutsDir+"s4_64.pt")
	const buf = "kernel.l_kernel"
	k := slices.IndexFunc(infos, func(in arrays.RawInfo) bool { return strings.HasSuffix(in.Name, buf) })
	if k < 0 {
		t.Fatalf("s4_64.pt has no %s", buf)
	}
	prefix := strings.TrimSuffix(infos[k].Name, buf)
	// write returns a copy of s4_64.pt whose buffer is v of raw type dtype.
	write := func(v int64, dtype string) string {
		in, d := slices.Clone(infos), slices.Clone(data)
		in[k].DType = dtype
		var err error
		if dtype == "I64" {
			d[k] = binary.LittleEndian.AppendUint64(nil, uint64(v))
		} else if d[k], err = arrays.EncodeRaw([]float64{float64(v)}, dtype); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "s4.pt")
		var b bytes.Buffer
		if err := arrays.WriteRaw(&b, arrays.FormatTorch, in, arrays.RawOptions{}, func(i int) ([]byte, error) { return d[i], nil }); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const given = 32 // distill's --length
	for _, tc := range []struct {
		v     int64
		dtype string
		want  string // the refusal; "" where it is taken
	}{
		{64, "I64", ""},
		{0, "I64", ""},
		{2, "I64", ""},
		{1 << 22, "I64", ""},
		{-1, "I64", "l_kernel -1 is neither 0 (C stored as it is) nor a kernel length in [2, 4194304]"},
		{1, "I64", "l_kernel 1 is neither 0 (C stored as it is) nor a kernel length in [2, 4194304]"},
		{1<<22 + 1, "I64", "l_kernel 4194305 is neither 0"},
		{1 << 25, "I64", "l_kernel 33554432 is neither 0"},
		{64, "F32", "is not one int64 or int32"},
	} {
		name := fmt.Sprintf("l_kernel %d (%s)", tc.v, tc.dtype)
		v := verdictsOf(t, write(tc.v, tc.dtype), sessions.ImportOptions{Layout: "s4"}, given)
		if tc.want != "" {
			layer := fmt.Sprintf("s4 layer %q: ", prefix)
			v.refused(t, name, tc.want, func(err error) bool { return strings.Contains(err.Error(), layer) })
			continue
		}
		if !v.taken(t, name) {
			continue
		}
		// Taken: each says the same length, or for 0 none (C as stored; distilled at --length).
		listed, plannedAt, undone := v.list.Layers[0].Options["length"], v.ck.Layers[0].Length, fmt.Sprintf("undone for L = %d from l_kernel", tc.v)
		if tc.v == 0 {
			if listed != "" || plannedAt != given || !strings.Contains(v.item.Note, "C taken as stored: l_kernel is 0") {
				t.Errorf("%s: listed length %q, planned at %d, import's note %q; want none, %d, C taken as stored", name, listed, plannedAt, v.item.Note, given)
			}
		} else if listed != strconv.FormatInt(tc.v, 10) || plannedAt != int(tc.v) || !strings.Contains(v.item.Note, undone) {
			t.Errorf("%s: listed length %q, planned at %d, import's note %q; want %d in each", name, listed, plannedAt, v.item.Note, tc.v)
		}
	}
}

// verdicts are what import --list (ListFile), import and distill's checkpoint planner
// (OpenCheckpoint) make of one file.
type verdicts struct {
	list sessions.Listing
	item sessions.Item
	ck   *sessions.Checkpoint // closed when the test ends
	errs map[string]error     // each one's error, by its name
}

var verdictNames = []string{"import --list", "import", "the checkpoint planner"}

// verdictsOf reads path as import --list, import (with o) and the planner (at the length
// given, for layers that record none) do.
func verdictsOf(t *testing.T, path string, o sessions.ImportOptions, given int) verdicts {
	t.Helper()
	var v verdicts
	errs := make([]error, 3)
	v.list, errs[0] = sessions.ListFile(path)
	v.item, errs[1] = sessions.Import(path, o)
	v.ck, errs[2] = sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Length: given})
	if ck := v.ck; ck != nil {
		t.Cleanup(func() { ck.Close() })
	}
	v.errs = map[string]error{}
	for i, what := range verdictNames {
		v.errs[what] = errs[i]
	}
	return v
}

// refused checks that each refused the file saying want, and that ok holds of its error.
func (v verdicts) refused(t *testing.T, name, want string, ok func(error) bool) {
	t.Helper()
	for _, what := range verdictNames {
		if err := v.errs[what]; err == nil || !ok(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %s: %v, want it refused saying %q", name, what, err, want)
		}
	}
}

// taken reports whether each took the file, and says which did not.
func (v verdicts) taken(t *testing.T, name string) bool {
	t.Helper()
	for _, what := range verdictNames {
		if v.errs[what] != nil {
			t.Errorf("%s: import --list %v, import %v, the checkpoint planner %v; want it taken", name, v.errs[verdictNames[0]], v.errs[verdictNames[1]], v.errs[verdictNames[2]])
			return false
		}
	}
	return true
}

// TestRTFTruncLenOneVerdict: an RTF layer's trunc_len in a safetensors file's metadata gets
// one verdict from import --list (ListFile), import and distill's checkpoint planner
// (OpenCheckpoint), the rule of rtfTruncLen: an integer in [0, 2^22]. The listing left a
// value import and the planner refuse out without a word, listing the layer as if it had no
// trunc_len.
func TestRTFTruncLenOneVerdict(t *testing.T) {
	infos, data := rawTensors(t, layoutsDir+"rtf_32.safetensors")
	const given = 32 // distill's --length
	for _, tc := range []struct {
		meta string
		want string // the refusal; "" where it is taken
	}{
		{"64", ""},
		{"0", ""},
		{"2", ""}, // not 2^22, the largest: undoing its correction takes seconds (trunc_len · N · D)
		{"-1", `the file's metadata says trunc_len "-1": want an integer in [0, 4194304]`},
		{"4194305", `the file's metadata says trunc_len "4194305": want an integer in [0, 4194304]`},
		{"64.5", `the file's metadata says trunc_len "64.5": want an integer in [0, 4194304]`},
		{"", `the file's metadata says trunc_len "": want an integer in [0, 4194304]`},
	} {
		var b bytes.Buffer
		if err := arrays.WriteRaw(&b, arrays.FormatSafetensors, infos, arrays.RawOptions{Metadata: map[string]string{"trunc_len": tc.meta}}, func(i int) ([]byte, error) { return data[i], nil }); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "rtf.safetensors")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("trunc_len %q", tc.meta)
		v := verdictsOf(t, path, sessions.ImportOptions{}, given)
		if tc.want != "" {
			v.refused(t, name, tc.want, func(err error) bool {
				return errors.Is(err, sessions.ErrInvalid) && strings.HasPrefix(err.Error(), path+": ")
			})
			continue
		}
		if !v.taken(t, name) {
			continue
		}
		// Taken: each says the same trunc_len; 0 is distilled at --length.
		plannedAt := tc.meta
		if tc.meta == "0" {
			plannedAt = strconv.Itoa(given)
		}
		if listed, from := v.list.Layers[0].Options["trunc-len"], "trunc_len "+tc.meta+" from the file's metadata"; listed != tc.meta || strconv.Itoa(v.ck.Layers[0].Length) != plannedAt || !strings.Contains(v.item.Note, from) {
			t.Errorf("%s: listed trunc-len %q, planned at %d, import's note %q; want %s, %s, %q", name, listed, v.ck.Layers[0].Length, v.item.Note, tc.meta, plannedAt, from)
		}
	}
}

// TestCheckpointTruncLenGiven: distill's --trunc-len that import would refuse is refused by
// the planner whatever the file's metadata says; with trunc_len recorded in the metadata it
// was dropped for the metadata's without a word.
func TestCheckpointTruncLenGiven(t *testing.T) {
	bank := filtertest.TFBank(41, 3, 6)
	out := must(sessions.Export([]sessions.Item{{Entry: &sessions.Entry{Name: "b", Bank: bank}}}, sessions.ExportOptions{Format: sessions.ExportSafetensors, TruncLen: 64}))
	path := filepath.Join(t.TempDir(), "b.safetensors")
	if err := os.WriteFile(path, out.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]string{
		"abc":     `trunc-len "abc" is not an integer`,
		"-1":      "trunc-len -1 is outside [0, 4194304]",
		"4194305": "trunc-len 4194305 is outside [0, 4194304]",
		"32":      "trunc-len 32 conflicts with trunc_len 64",
	} {
		ck, err := sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Options: map[string]string{"trunc-len": v}, Length: 32})
		if !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("--trunc-len %s: %v, want it refused saying %q", v, err, want)
		}
		if ck != nil {
			ck.Close()
		}
	}
	ck, err := sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Options: map[string]string{"trunc-len": "64"}, Length: 32})
	if err != nil || ck.Layers[0].Length != 64 || ck.Layers[0].LengthFrom != "trunc_len 64, from --trunc-len" {
		t.Fatalf("--trunc-len 64 as recorded: %+v, %v", ck, err)
	}
	ck.Close()
}

// TestHyenaLengthOptionOneRule: a Hyena layer's option length (import's --length, the
// samples its implicit filter is evaluated at) has one rule in import and the checkpoint
// planner (layouts.HyenaLength): 0 (or none) is the stored length, a length up to it is
// taken, and a value that is not an integer in [0, 2^22] is refused naming the range. The
// planner took 0 as a kernel length of 0 and refused the layer as too short, and a negative
// length the same way; it refused one that is not an integer with a message of its own.
func TestHyenaLengthOptionOneRule(t *testing.T) {
	const file = layoutsDir + "hyena_32.pt" // 48 positions stored
	lengthVerdicts(t, file, `hyena layer "backbone.layers.0.mixer.filter_fn."`, 8, []lengthCase{
		{"16", 16, ""},
		{"48", 48, ""},
		{"0", 48, ""}, // the stored length
		{"-1", 0, `--length "-1": want an integer in [0, 4194304]`},
		{"4194305", 0, `--length "4194305": want an integer in [0, 4194304]`},
		{"abc", 0, `--length "abc": want an integer in [0, 4194304]`},
		{"49", 0, "--length 49 is beyond the 48 positions pos_emb holds"},
	}, func(tc lengthCase, it sessions.Item, ck *sessions.Checkpoint) {
		if n := it.Target.Kernels.Shape[len(it.Target.Kernels.Shape)-1]; n != tc.taken || ck.Layers[0].Length != tc.taken {
			t.Errorf("--length %s: imported %d samples, planned at %d; want %d", tc.v, n, ck.Layers[0].Length, tc.taken)
		}
	})
}

// TestCheckpointTruncLenOne: an RTF layer's trunc_len 1, which import --list and import take
// (valid for the RTF module), is refused by the planner saying where it comes from and what
// to do. It said "kernel length 1: give the length to distil at", though --length does not
// change an RTF layer's trunc_len.
func TestCheckpointTruncLenOne(t *testing.T) {
	const given = 32 // distill's --length
	infos, data := rawTensors(t, layoutsDir+"rtf_32.safetensors")
	var b bytes.Buffer
	if err := arrays.WriteRaw(&b, arrays.FormatSafetensors, infos, arrays.RawOptions{Metadata: map[string]string{"trunc_len": "1"}}, func(i int) ([]byte, error) { return data[i], nil }); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(t.TempDir(), "rtf.safetensors")
	if err := os.WriteFile(meta, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	v := verdictsOf(t, meta, sessions.ImportOptions{}, given)
	if v.errs["import --list"] != nil || v.errs["import"] != nil {
		t.Fatalf("trunc_len 1 in the metadata: import --list %v, import %v; want it taken", v.errs["import --list"], v.errs["import"])
	}
	for _, tc := range []struct {
		name, path string
		truncLen   string // --trunc-len; "" for none
		want       string
		option     bool // the value given alone is at fault: an *OptionError
	}{
		{"the metadata's", meta, "", `trunc_len 1 (the file's metadata): an RTF layer is distilled at its trunc_len; a fit needs at least 2 samples, and --length does not change it; --layers leaves the layer out`, false},
		{"the metadata's, given again", meta, "1", `trunc_len 1 (--trunc-len): an RTF layer is distilled at its trunc_len; a fit needs at least 2 samples, and --length does not change it; --layers leaves the layer out`, false},
		{"--trunc-len's", layoutsDir + "rtf_32.safetensors", "1", `trunc-len 1: rtf layer "layers.0.filter." is distilled at its trunc_len; a fit needs at least 2 samples, and --length does not change it; give --trunc-len 2 or more, or none to distil it at --length`, true},
	} {
		o := sessions.CheckpointOptions{Length: given}
		if tc.truncLen != "" {
			o.Options = map[string]string{"trunc-len": tc.truncLen}
		}
		ck, err := sessions.OpenCheckpoint(tc.path, o)
		if ck != nil {
			ck.Close()
		}
		if !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s trunc_len 1: %v, want it refused saying %q", tc.name, err, tc.want)
		}
		if oe := (*sessions.OptionError)(nil); errors.As(err, &oe) != tc.option {
			t.Errorf("%s trunc_len 1: %v is an *OptionError: %v, want %v", tc.name, err, !tc.option, tc.option)
		}
	}
}

// TestS4LengthOptionOneRule: an S4 layer's option length (import's --length), the l_kernel
// its C̃ is undone for in place of its buffer's, takes the buffer's rule
// (layouts.S4KernelLength): 0 (the buffer's) or a length in [2, 2^22], in import and the
// checkpoint planner alike. Its range was the option's, shared with other layouts, so
// import undid C̃ for L = 1, which the buffer rule refuses, and the planner refused it as a
// kernel length to give.
func TestS4LengthOptionOneRule(t *testing.T) {
	const file = layoutsDir + "s4_64.pt" // l_kernel 64
	lengthVerdicts(t, file, `s4 layer "encoder.layers.2.layer."`, 32, []lengthCase{
		{"2", 2, ""},
		{"4096", 4096, ""},
		{"0", 64, ""}, // the buffer's
		{"1", 0, `s4 layer "encoder.layers.2.layer.": --length 1: an S4 layer's C̃ is undone for a kernel length (its l_kernel) in [2, 4194304]`},
		{"4194305", 0, "--length"},
	}, func(tc lengthCase, it sessions.Item, ck *sessions.Checkpoint) {
		if undone := fmt.Sprintf("undone for L = %d from", tc.taken); !strings.Contains(it.Note, undone) || ck.Layers[0].Length != tc.taken {
			t.Errorf("--length %s: import's note %q, planned at %d; want C̃ undone for and planned at %d", tc.v, it.Note, ck.Layers[0].Length, tc.taken)
		}
	})
}

// lengthCase is an option length (import's --length) and what import and the checkpoint
// planner both make of it: taken, the length they take, or 0 where both refuse it saying want.
type lengthCase struct {
	v     string
	taken int
	want  string
}

// lengthVerdicts runs import and the checkpoint planner (at distill's --length plan) on file
// with each case's option length: both refuse it where the case says so, as a value of the
// option the layer cannot take (layouts.ErrOptionValue: the user's mistake, not the file's)
// naming the layer (layer, as layouts names one: `hyena layer "PREFIX"`), else both take it
// and took checks what they made of it. Import named no layer where the value was outside
// the option's range (-1, 2^22 + 1, abc), which the planner named.
func lengthVerdicts(t *testing.T, file, layer string, plan int, cases []lengthCase, took func(tc lengthCase, it sessions.Item, ck *sessions.Checkpoint)) {
	t.Helper()
	for _, tc := range cases {
		o := map[string]string{"length": tc.v}
		it, errImport := sessions.Import(file, sessions.ImportOptions{Options: o})
		ck, errPlan := sessions.OpenCheckpoint(file, sessions.CheckpointOptions{Options: o, Length: plan})
		if tc.taken == 0 {
			for what, err := range map[string]error{"import": errImport, "the checkpoint planner": errPlan} {
				if !errors.Is(err, sessions.ErrInvalid) || !errors.Is(err, layouts.ErrOptionValue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), layer+": ") {
					t.Errorf("--length %s: %s: %v, want it refused as an option value, saying %q of %s", tc.v, what, err, tc.want, layer)
				}
			}
			if ck != nil {
				ck.Close()
			}
			continue
		}
		if errImport != nil || errPlan != nil {
			t.Errorf("--length %s: import %v, the checkpoint planner %v; want it taken", tc.v, errImport, errPlan)
			continue
		}
		took(tc, it, ck)
		ck.Close()
	}
}

// TestListNamesMissingChannels: import --list gave a layer whose channel-bearing tensor is
// missing (an S4D layer without kernel.C) as "channels": 0 without a word, where import
// names the tensor; the listing says the same as the layer's Problem.
func TestListNamesMissingChannels(t *testing.T) {
	af, err := arrays.Open(layoutsDir + "s4d_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer af.Close()
	var ts []arrays.Named
	for _, in := range af.Arrays() {
		if strings.HasSuffix(in.Name, "kernel.C") {
			continue
		}
		a, err := af.Read(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, arrays.Named{Name: in.Name, Array: a})
	}
	data, err := arrays.EncodeNPZ(ts, arrays.NPZOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "noc.npz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ierr := sessions.Import(path, sessions.ImportOptions{})
	if ierr == nil || !strings.Contains(ierr.Error(), `kernel.C" is missing`) {
		t.Fatalf("import: %v, want the missing kernel.C named", ierr)
	}
	ls, err := sessions.ListFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Layers) == 0 {
		t.Fatal("no layer listed")
	}
	for _, l := range ls.Layers {
		if l.Channels == 0 && (l.Problem == "" || !strings.Contains(ierr.Error(), l.Problem)) {
			t.Errorf("layer %q lists 0 channels with problem %q; import says %v", l.Prefix, l.Problem, ierr)
		}
	}
	// A whole layer lists no problem.
	full, err := sessions.ListFile(layoutsDir + "s4d_64.pt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range full.Layers {
		if l.Problem != "" || l.Channels == 0 {
			t.Errorf("whole layer %q: channels %d, problem %q", l.Prefix, l.Channels, l.Problem)
		}
	}
}

// TestShardIndexSaid: a sharded Hugging Face checkpoint's index (JSON with a "weight_map")
// given to import, import --list or distill CKPT is named as such, with its shards; import
// said it was an invalid filter, distill that it was not an array file.
func TestShardIndexSaid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors.index.json")
	index := `{"metadata": {"total_size": 64}, "weight_map": {"b.kernel.C": "model-00002-of-00002.safetensors", "a.kernel.C": "model-00001-of-00002.safetensors", "a.kernel.B": "model-00001-of-00002.safetensors"}}`
	if err := os.WriteFile(path, []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
	_, ierr := sessions.Import(path, sessions.ImportOptions{})
	_, lerr := sessions.ListFile(path)
	_, cerr := sessions.OpenCheckpoint(path, sessions.CheckpointOptions{Length: 64})
	for what, err := range map[string]error{"import": ierr, "list": lerr, "distill": cerr} {
		se := (*sessions.ShardIndexError)(nil)
		if !errors.As(err, &se) || !slices.Equal(se.Shards, want) || !strings.Contains(err.Error(), "the index of a sharded checkpoint") || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: %v, want the index named with its shards %v", what, err, want)
		}
	}
}
