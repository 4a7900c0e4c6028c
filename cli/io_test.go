package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// numpyDir holds the files NumPy wrote (testdata/golden/numpy/gen_numpy.py).
const numpyDir = "../testdata/golden/numpy"

// oneErrorLine checks a failed run: the exit code, nothing on stdout, and one stderr line
// containing want.
func oneErrorLine(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("want exit %d, empty stdout and one stderr line containing %q; got %v", code, want, r)
	}
}

func TestImportRTFLayer(t *testing.T) {
	r := run(t, "", "import", filepath.Join(numpyDir, "rtf.safetensors"))
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	doc, err := filterfile.Unmarshal([]byte(r.stdout))
	if err != nil || doc.Bank == nil || len(doc.Bank.Channels) != 3 || doc.Bank.Form() != filters.FormTF || doc.Name != "rtf:layers.0.filter" {
		t.Fatalf("stdout is not the bank: %v\n%s", err, r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "imported ") || !strings.Contains(r.stderr, `rtf layer layers.0.filter: ab (6, 4) float32`) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr = %q", r.stderr)
	}
}

func TestImportKernelsAndPassThrough(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "bank.json")
	r := run(t, "", "import", filepath.Join(numpyDir, "multi.npz"), "--tensor", "bank", "--name", "three", "-o", out)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("%v", r)
	}
	tgt, err := sessions.UnmarshalTarget(ioMust(os.ReadFile(out)))
	if err != nil || tgt.Name != "three" || !slices.Equal(tgt.Kernels.Shape, []int{3, 5}) {
		t.Fatalf("target file: %v %+v", err, tgt)
	}
	// The target file reads back as itself, from a file or stdin.
	again := run(t, "", "import", out)
	if again.code != 0 || again.stdout != string(ioMust(os.ReadFile(out))) {
		t.Errorf("re-import: %v", again)
	}
	stdin := run(t, string(ioMust(os.ReadFile(out))), "import", "-")
	if stdin.code != 0 || stdin.stdout != again.stdout {
		t.Errorf("stdin: %v", stdin)
	}
	// A filter file passes through.
	fp := writeDoc(t, dir, "f.json", filters.Document{Name: "toy", Filter: testFilter(t)})
	pass := run(t, "", "import", fp)
	if pass.code != 0 || pass.stdout != string(ioMust(os.ReadFile(fp))) {
		t.Errorf("filter pass-through: %v", pass)
	}
}

func TestImportList(t *testing.T) {
	r := run(t, "", "import", filepath.Join(numpyDir, "rtf.safetensors"), "--list")
	var l struct {
		Format string `json:"format"`
		Layers []struct {
			Prefix   string            `json:"prefix"`
			Layout   string            `json:"layout"`
			Channels int               `json:"channels"`
			Order    int               `json:"order"`
			DType    string            `json:"dtype"`
			Options  map[string]string `json:"options"`
		} `json:"layers"`
		Arrays []struct {
			Name      string `json:"name"`
			DType     string `json:"dtype"`
			Shape     []int  `json:"shape"`
			Supported bool   `json:"supported"`
		} `json:"arrays"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &l) != nil {
		t.Fatalf("%v", r)
	}
	if l.Format != "safetensors" || len(l.Arrays) != 4 || l.Arrays[3].Supported || len(l.Layers) != 1 {
		t.Fatalf("listing %+v", l)
	}
	if y := l.Layers[0]; y.Prefix != "layers.0.filter." || y.Layout != "rtf" || y.Channels != 3 || y.Order != 4 || y.DType != "float32" || y.Options["h0"] != "once" {
		t.Errorf("layer %+v", y)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeText(t, dir, "bad.npy", "\x93NUMPY\x01\x00\x20\x00{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }")
	oneErrorLine(t, run(t, "", "import", bad), ExitFailure, "bad.npy: invalid array file: npy: bad header")
	i8 := filepath.Join(numpyDir, "int64.npy")
	oneErrorLine(t, run(t, "", "import", i8), ExitFailure, `int64.npy: unsupported array: npy: dtype "<i8"`)
	// A file of several arrays read without --tensor: a choice the command line must make
	// and did not, a command-line mistake as a --tensor the file lacks is (it exited 1).
	oneErrorLine(t, run(t, "", "import", filepath.Join(numpyDir, "multi.npz")), ExitUsage, "--tensor NAME picks one")
	oneErrorLine(t, run(t, "", "import", "../testdata/scale/hyena_lm.pt"), ExitUsage, "layers; choose one with --tensor PREFIX")
	// A sharded checkpoint's index is named, with its shards: a file it cannot use (exit 1).
	index := writeText(t, dir, "model.safetensors.index.json", `{"weight_map": {"a.kernel.C": "model-00001-of-00002.safetensors", "b.kernel.C": "model-00002-of-00002.safetensors"}}`)
	for _, args := range [][]string{{"import", index}, {"import", index, "--list"}, {"distill", index, "--order", "4", "-o", filepath.Join(dir, "o.pt")}, {"distill", index, "--order", "4", "-o", filepath.Join(dir, "o.json")}} {
		oneErrorLine(t, run(t, "", args...), ExitFailure, "the index of a sharded checkpoint, not an array file: its 2 shard files (model-00001-of-00002.safetensors, model-00002-of-00002.safetensors)")
	}
	oneErrorLine(t, run(t, "", "import", filepath.Join(dir, "none.npz")), ExitFailure, "none.npz: no such file")
	// A --tensor the file does not hold is a command-line mistake, as distill's --layers
	// none-such is, listing what the file holds (it exited 1); a single-layer distill too.
	oneErrorLine(t, run(t, "", "import", filepath.Join(numpyDir, "multi.npz"), "--tensor", "nope"), ExitUsage, `multi.npz: --tensor "nope" is no array of the file, which holds "`)
	oneErrorLine(t, run(t, "", "distill", filepath.Join(numpyDir, "multi.npz"), "--tensor", "nope", "--order", "2"), ExitUsage, `multi.npz: --tensor "nope" is no array of the file, which holds "`)
	oneErrorLine(t, run(t, "", "import", "../testdata/scale/hyena_lm.safetensors", "--layout", "hyena", "--tensor", "backbone.layers.9."), ExitUsage, `--tensor "backbone.layers.9." is no hyena layer's prefix: the file's layers are hyena "backbone.layers.0.mixer.filter_fn."`)
	oneErrorLine(t, run(t, "", "import", i8, "-o", "x", "--session", "y"), ExitUsage, "-o and --session exclude each other")
	oneErrorLine(t, run(t, "", "import", i8, "--trunc-len", "-2"), ExitUsage, "--trunc-len -2")
	oneErrorLine(t, run(t, "", "import"), ExitUsage, "want one FILE")
	// --list prints on stdout and imports nothing: -o was ignored.
	out := filepath.Join(dir, "out.json")
	oneErrorLine(t, run(t, "", "import", i8, "--list", "-o", out), ExitUsage, "--list prints the file's layers and arrays on stdout and imports nothing: leave out -o")
	oneErrorLine(t, run(t, "", "import", i8, "--list", "--tensor", "x", "--columns"), ExitUsage, "leave out --columns, --tensor")
	if _, err := os.Stat(out); err == nil {
		t.Errorf("import --list -o wrote %s", out)
	}
}

// TestSessionWorkflow builds a session from files with import --session, inspects it with
// session info and exports it in every format, checking each export against the source.
func TestSessionWorkflow(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, "work.ssmlab")
	for _, args := range [][]string{
		{"import", filepath.Join(numpyDir, "rtf.npz"), "--session", sess, "--name", "layer"},
		{"import", filepath.Join(numpyDir, "bank_f4_be_f.npy"), "--session", sess, "--name", "kernels"},
	} {
		r := run(t, "", args...)
		if r.code != 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, "added ") {
			t.Fatalf("%v", r)
		}
	}
	s := ioMust(sessions.Load(sess))
	if s.Summary() != "1 filter, 1 target, 0 jobs" {
		t.Fatalf("session holds %s", s.Summary())
	}
	if _, err := os.Stat(sess + sessions.BackupSuffix); err != nil {
		t.Errorf("the second import kept no backup: %v", err)
	}

	info := run(t, "", "session", "info", sess)
	if info.code != 0 || !strings.Contains(info.stdout, "ssmlab session, version 2: 1 filter, 1 target, 0 jobs") ||
		!strings.Contains(info.stdout, "f1    layer") || !strings.Contains(info.stdout, "3 kernels of length 5 (from ") {
		t.Errorf("session info:\n%v", info)
	}
	infoJSON := run(t, "", "session", "info", sess, "--json")
	var in struct {
		Filters []struct{ ID, Name, Description string }
	}
	if infoJSON.code != 0 || json.Unmarshal([]byte(infoJSON.stdout), &in) != nil || len(in.Filters) != 1 || in.Filters[0].Description != "bank of 3 tf channels of order 4" {
		t.Errorf("session info --json: %v", infoJSON)
	}

	layer, _ := s.Filter("f1")
	target, _ := s.Target("t2")
	// Everything to safetensors, with IDs in the names.
	st := filepath.Join(dir, "all.safetensors")
	if r := run(t, "", "export", sess, "-o", st); r.code != 0 || !strings.Contains(r.stderr, "exported 2 items") {
		t.Fatalf("%v", r)
	} else if !strings.Contains(r.stderr, " as safetensors: bank of 3 tf channels of order 4 (in the rtf layout); ") {
		// The layer's layout, where the kernels have none (QA: the summary named no layout).
		t.Errorf("the summary names no layout for the layer: %q", r.stderr)
	}
	af := ioMust(arrays.Open(st))
	if got := ioMust(af.Read("t2.kernels")); !got.Equal(target.Kernels) {
		t.Error("t2.kernels differs")
	}
	af.Close()
	// One item by name, to each single-item format.
	for _, format := range []string{"npz", "json", "csv", "npy"} {
		out := filepath.Join(dir, "k."+format)
		if r := run(t, "", "export", sess, "--id", "kernels", "-o", out); r.code != 0 {
			t.Fatalf("%s: %v", format, r)
		}
		it := ioMust(sessions.Import(out, sessions.ImportOptions{}))
		if !slices.Equal(it.Target.Kernels.Data, target.Kernels.Data) {
			t.Errorf("%s: the kernels changed", format)
		}
	}
	// The layer to npz, loadable as an RTF module's state: exact.
	npz := filepath.Join(dir, "layer.npz")
	if r := run(t, "", "export", sess, "--id", "f1", "--format", "npz", "-o", npz); r.code != 0 {
		t.Fatalf("%v", r)
	}
	back := ioMust(sessions.Import(npz, sessions.ImportOptions{}))
	if !bytes.Equal(ioMust(filterfile.Marshal(back.Entry.Document())), ioMust(filterfile.Marshal(filters.Document{Name: back.Entry.Name, Bank: layer.Bank}))) {
		t.Error("the layer changed through npz")
	}
	// Several items do not fit one JSON file.
	oneErrorLine(t, run(t, "", "export", sess, "-o", filepath.Join(dir, "x.json")), ExitFailure, "pick one with --id")
	oneErrorLine(t, run(t, "", "export", sess, "--id", "nothing", "-o", filepath.Join(dir, "x.npz")), ExitUsage, `--id "nothing" is no item's ID or name: the session holds f1 (`)
}

func TestExportFilterFile(t *testing.T) {
	dir := t.TempDir()
	fp := writeDoc(t, dir, "toy.json", filters.Document{Name: "toy", Filter: testFilter(t)})
	out := filepath.Join(dir, "toy.safetensors")
	r := run(t, "", "export", fp, "-o", out, "--prefix", "layers.0.filter.", "--trunc-len", "64", "--dtype", "float32")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	// The dense filter was converted to tf: the accuracy line comes first.
	if !strings.HasPrefix(r.stderr, "converted 1 channel dense → tf") || !strings.Contains(r.stderr, "exported 1 item from ") {
		t.Errorf("stderr = %q", r.stderr)
	}
	// The summary names the layout written, as the check line does for the others (QA).
	if !strings.Contains(r.stderr, " to "+out+" as safetensors in the rtf layout: ") {
		t.Errorf("the summary names no layout: %q", r.stderr)
	}
	af := ioMust(arrays.Open(out))
	defer af.Close()
	var names []string
	for _, in := range af.Arrays() {
		names = append(names, in.Name+" "+in.DType)
	}
	if !slices.Equal(names, []string{"layers.0.filter.ab float32", "layers.0.filter.h_0 float32"}) {
		t.Errorf("tensors %v", names)
	}
	// CSV of a filter is its impulse response.
	csv := run(t, "", "export", fp, "--format", "csv", "--length", "8", "-o", "-")
	a, err := arrays.ReadCSV(strings.NewReader(csv.stdout))
	if csv.code != 0 || err != nil || !slices.Equal(a.Data, testFilter(t).Impulse(8)) {
		t.Errorf("csv: %v %v", csv, err)
	}
}

func TestExportUsage(t *testing.T) {
	dir := t.TempDir()
	fp := writeDoc(t, dir, "toy.json", filters.Document{Filter: testFilter(t)})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", fp}, "-o OUT is required"},
		{[]string{"export", fp, "-o", filepath.Join(dir, "out")}, "--format is required"},
		{[]string{"export", fp, "-o", "x.npz", "--format", "hdf5"}, `unknown export format "hdf5"`},
		{[]string{"export", fp, "-o", "x.npz", "--dtype", "float16"}, `--dtype "float16"`},
		{[]string{"export", fp, "-o", "x.csv", "--length", "0"}, "--length 0"},
		{[]string{"export", fp, "-o", "x.npz", "--id", "f1"}, "--id picks items of a session"},
		{[]string{"export", "-", "-o", "x.npz"}, "not stdin"},
		// A flag of other formats: a filter file's JSON ignored --layout, and exited 0.
		{[]string{"export", fp, "--layout", "s4d", "-o", filepath.Join(dir, "e.json")}, "--layout applies to pt, safetensors or npz, not to json"},
		{[]string{"export", fp, "--disc", "zoh", "-o", filepath.Join(dir, "e.npy")}, "--disc applies to pt, safetensors or npz, not to npy"},
		{[]string{"export", fp, "--prefix", "m.", "-o", filepath.Join(dir, "e.csv")}, "--prefix applies to pt, safetensors or npz, not to csv"},
		{[]string{"export", fp, "--dtype", "float32", "-o", filepath.Join(dir, "e.csv")}, "--dtype applies to pt, safetensors, npz or npy, not to csv"},
		{[]string{"export", fp, "--length", "64", "-o", filepath.Join(dir, "e.json")}, "--length applies to csv, npy, pt, safetensors or npz, not to json"},
		{[]string{"export", fp, "--layout", "rtf", "--length", "64", "-o", filepath.Join(dir, "e.pt")}, "--length applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len"},
		// no layout named: a dense filter's is rtf, which takes no length (refused once read)
		{[]string{"export", fp, "--length", "64", "-o", filepath.Join(dir, "e.pt")}, `--length 64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window; with no layout named, a dense filter is written in the rtf layout`},
		{[]string{"export", fp, "--compress", "-o", filepath.Join(dir, "e.safetensors")}, "--compress applies to npz, not to safetensors"},
	} {
		oneErrorLine(t, run(t, "", tc.args...), ExitUsage, tc.want)
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"toy.json"}) {
		t.Errorf("left %v", names)
	}
}

// TestExportOptionsBeforeInput: an export option no export takes, or one the format does
// not use, is exit 2 naming the flag before the input is read: the input here does not
// exist, and the error is the option's, in sessions' words (ExportOptions.CheckGiven, the
// workbench's :export check too). --layout rtf --disc zoh and --layout sos --trunc-len 64
// were refused only once the input was read.
func TestExportOptionsBeforeInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	out := func(ext string) string { return filepath.Join(dir, "x."+ext) }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dtype", "complex64", "-o", out("npz")}, `--dtype "complex64": want float64, float32 or bfloat16`},
		{[]string{"--dtype", "bf16", "-o", out("npz")}, "--dtype bfloat16: npz has no bfloat16 (pt and safetensors have)"},
		{[]string{"--layout", "hyena", "-o", out("pt")}, `--layout "hyena": want rtf, s4d, stripedhyena, sos`},
		{[]string{"--trunc-len", "-1", "-o", out("pt")}, "--trunc-len -1 is outside [0, 4194304]"},
		{[]string{"--length", "0", "-o", out("csv")}, "--length 0 is outside [1, 1048576]"},
		{[]string{"--layout", "sos", "--trunc-len", "64", "-o", out("pt")}, "--trunc-len 64 applies to the rtf layout, not to the sos layout"},
		{[]string{"--prefix", "layers.0", "-o", out("safetensors")}, `--prefix "layers.0": a prefix ends in "." or "/"`},
		{[]string{"--layout", "rtf", "--disc", "zoh", "-o", out("pt")}, "--disc is an option of the s4d and s5 layout, not of rtf"},
		{[]string{"--layout", "s4d", "--disc", "foo", "-o", out("pt")}, `--disc "foo": want zoh, bilinear, dss`},
		{[]string{"--layout", "stripedhyena", "--short-filter", "true", "-o", out("pt")}, "--short-filter is an option of import"},
		// options of other formats, whatever their value
		{[]string{"--dtype", "float64", "-o", out("csv")}, "--dtype applies to pt, safetensors, npz or npy, not to csv"},
		{[]string{"--trunc-len", "0", "-o", out("json")}, "--trunc-len applies to pt, safetensors or npz, not to json"},
		{[]string{"--length", "1024", "--trunc-len", "8", "-o", out("npz")}, "--length 1024 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout"},
		{[]string{"--length", "1024", "--h0", "twice", "-o", out("npz")}, "--length 1024 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout"},
		{[]string{"--length", "0", "--layout", "s4d", "-o", out("npz")}, "--length 0 is outside [1, 1048576]"},
		{[]string{"--h0", "twice", "-o", out("npy")}, "--h0 applies to pt, safetensors or npz, not to npy"},
		{[]string{"--compress", "-o", out("pt")}, "--compress applies to npz, not to pt"},
	} {
		r := run(t, "", append([]string{"export", missing}, tc.args...)...)
		oneErrorLine(t, r, ExitUsage, "export: "+tc.want)
		if strings.Contains(r.stderr, "missing.json") {
			t.Errorf("%v: the error is the input's: %s", tc.args, r.stderr)
		}
	}
	// the same input with taken options is read, and missing; with no layout named, --length
	// asks for one that takes it, which the filter's form decides
	oneErrorLine(t, run(t, "", "export", missing, "--dtype", "bf16", "--layout", "sos", "-o", out("pt")), ExitFailure, "missing.json")
	oneErrorLine(t, run(t, "", "export", missing, "--length", "1024", "-o", out("npz")), ExitFailure, "missing.json")
	// import's --trunc-len, in the same range
	oneErrorLine(t, run(t, "", "import", missing, "--trunc-len", "-1"), ExitUsage, "import: --trunc-len -1 is outside [0, 4194304]")
	if names := numtest.DirNames(t, dir); len(names) != 0 {
		t.Errorf("left %v", names)
	}
}

// TestSessionInfoJobs: session info lists a job with its status, the target it fits and the
// filter it made, as the workbench saves them.
func TestSessionInfoJobs(t *testing.T) {
	path := writeText(t, t.TempDir(), "jobs.ssmlab", `{"format": "ssmlab-session", "version": 2,
	  "filters": [{"id": "f2", "origin": {"target": "t1", "job": "j3"}, "filter": {"form": "tf", "a": [-0.5], "b": [1], "h0": 0}}],
	  "targets": [{"id": "t1", "name": "k", "kernels": [1, 0.5]}],
	  "jobs": [{"id": "j3", "kind": "distill", "status": "done", "target": "t1", "result": "f2", "spec": {"order": 1}, "report": {"max_rel_error": 0.01}, "log": ["started", "done"]}]}`)
	r := run(t, "", "session", "info", path)
	if r.code != 0 || !strings.Contains(r.stdout, "1 filter, 1 target, 1 job") || !strings.Contains(r.stdout, "j3    distill  done, fits t1, made f2, spec 11 B, report 22 B") {
		t.Errorf("session info:\n%v", r)
	}
	// a job saved while it ran was interrupted: nothing runs it now (issue 21 item 7)
	running := writeText(t, t.TempDir(), "running.ssmlab", `{"format": "ssmlab-session", "version": 2,
	  "targets": [{"id": "t1", "name": "k", "kernels": [1, 0.5]}],
	  "jobs": [{"id": "j2", "kind": "distill", "status": "running", "target": "t1", "spec": {"order": 1}, "log": ["started"]}]}`)
	if r := run(t, "", "session", "info", running); r.code != 0 || !strings.Contains(r.stdout, "j2    distill  interrupted, fits t1") {
		t.Errorf("session info of a job saved running:\n%v", r)
	}
}

// TestSessionInfoOrder: session info lists filters and targets in the file's order, as the
// workbench does; it listed them by their place in their arrays.
func TestSessionInfoOrder(t *testing.T) {
	path := writeText(t, t.TempDir(), "order.ssmlab", `{"format": "ssmlab-session", "version": 2,
	  "filters": [{"id": "f1", "filter": {"form": "tf", "a": [-0.5], "b": [1], "h0": 0}},
	              {"id": "f2", "filter": {"form": "tf", "a": [-0.25], "b": [1], "h0": 0}}],
	  "order": ["f2", "f1"]}`)
	r := run(t, "", "session", "info", path, "--json")
	var in struct {
		Filters []struct {
			ID string `json:"id"`
		} `json:"filters"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &in) != nil || len(in.Filters) != 2 || in.Filters[0].ID != "f2" || in.Filters[1].ID != "f1" {
		t.Errorf("session info --json lists %+v, want f2 then f1:\n%v", in.Filters, r)
	}
}

// TestSessionInfoVersion1: session info of a version-1 file says version 1, and that saving
// writes version 2; it said "version 2" (the version this ssmlab writes, not the file's).
func TestSessionInfoVersion1(t *testing.T) {
	path := writeText(t, t.TempDir(), "old.ssmlab", `{"format": "ssmlab-session", "version": 1,
	  "targets": [{"id": "t1", "name": "k", "kernels": [1, 0.5]}]}`)
	r := run(t, "", "session", "info", path)
	if want := "old.ssmlab: ssmlab session, version 1 (saving writes version 2): "; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("session info of a version-1 file, want %q:\n%v", want, r)
	}
	r = run(t, "", "session", "info", path, "--json")
	var in struct{ Version int }
	if err := json.Unmarshal([]byte(r.stdout), &in); r.code != 0 || err != nil || in.Version != 1 {
		t.Errorf("session info --json of a version-1 file: version %d (%v):\n%v", in.Version, err, r)
	}
	current := writeText(t, t.TempDir(), "new.ssmlab", `{"format": "ssmlab-session", "version": 2}`)
	if r := run(t, "", "session", "info", current); r.code != 0 || !strings.Contains(r.stdout, "ssmlab session, version 2: ") {
		t.Errorf("session info of a version-2 file:\n%v", r)
	}
}

func TestSessionInfoErrors(t *testing.T) {
	dir := t.TempDir()
	newer := writeText(t, dir, "new.ssmlab", `{"format": "ssmlab-session", "version": 3}`)
	oneErrorLine(t, run(t, "", "session", "info", newer), ExitFailure, "session version 3 is newer than this ssmlab supports (2)")
	broken := writeText(t, dir, "broken.ssmlab", `{"format": "ssmlab-session", "version": 1, "filters": [`)
	oneErrorLine(t, run(t, "", "session", "info", broken), ExitFailure, "broken.ssmlab: invalid session: bad JSON")
	oneErrorLine(t, run(t, "", "session", "info"), ExitUsage, "want one FILE")
	// session alone is a usage mistake naming its command (TestUnknownCommand); it printed
	// its help and exited 0.
	oneErrorLine(t, run(t, "", "session"), ExitUsage, "want a command: info")
}

// ioMust returns v, panicking on err.
func ioMust[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTargetFileWhereAFilterIsRead: analyze and convert, which take a filter, say of a target
// file (kernels) that it is one and which commands read it; they said "invalid filter:
// missing key "form" (or "channels" for a bank)" of ssmlab preset hyena's file. A broken
// filter file still gets its own error.
func TestTargetFileWhereAFilterIsRead(t *testing.T) {
	dir := t.TempDir()
	target := `{"name": "k", "kernels": [[1, 0.5, 0.25], [1, -0.5, 0.25]]}`
	path := writeText(t, dir, "k.json", target)
	want := "is a target file (2 kernels of length 3), not a filter: ssmlab distill fits a filter to its kernels, ssmlab plot draws them"
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"analyze", path}},
		{"", []string{"convert", path, "--to", "tf"}},
		{target, []string{"analyze", "-", "--poles"}},
	} {
		oneErrorLine(t, run(t, c.stdin, c.args...), 1, want)
	}
	broken := writeText(t, dir, "broken.json", `{"form": "tf", "a": [0.5], "b": [1], "h0": 0, "kernels": 1}`)
	oneErrorLine(t, run(t, "", "analyze", broken), 1, `unknown key "kernels"`)
}

// Commands that read one filter or target refuse a session file and say how to get an
// item out of it; a missing session file is reported as missing.
func TestSessionFileWhereAFilterIsRead(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, "work.ssmlab")
	if r := run(t, "", "import", filepath.Join(numpyDir, "rtf.npz"), "--session", sess); r.code != 0 {
		t.Fatalf("%v", r)
	}
	for _, args := range [][]string{
		{"analyze", sess},
		{"convert", sess, "--to", "tf"},
		{"plot", sess, "--impulse", "-o", filepath.Join(dir, "x.svg")},
		{"distill", sess, "--order", "2"},
		{"import", sess},
	} {
		oneErrorLine(t, run(t, "", args...), 1, "is a session file, not a filter or target file: `ssmlab session info "+sess+"` lists its items, `ssmlab export "+sess+" --id ID")
	}
	missing := filepath.Join(dir, "missing.ssmlab")
	if r := run(t, "", "analyze", missing); r.code != 1 || strings.Contains(r.stderr, "is a session file") {
		t.Errorf("a missing file is reported as a session: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.svg")); err == nil {
		t.Error("plot wrote a figure of a session file")
	}
}

// export reads RTF tensors back and says how closely they give the filter: a line for a
// filter float32 holds; for poles float32 moves out of the unit circle, the one error line
// (it printed the warnings before it), or with --force a warning.
func TestExportReadBack(t *testing.T) {
	dir := t.TempDir()
	// (1 − p₁z⁻¹)…(1 − p₄z⁻¹) for poles 0.9990…0.9996: float32 keeps ~6e-8 of each
	// coefficient, and a fourfold cluster turns that into a root shift of ~(6e-8)^¼ ≈ 0.016
	den := []float64{1}
	for _, p := range []float64{0.9990, 0.9992, 0.9994, 0.9996} {
		next := make([]float64, len(den)+1)
		for i, v := range den {
			next[i] += v
			next[i+1] -= p * v
		}
		den = next
	}
	crowded := ioMust(filters.NewTransferFunction(den[1:], []float64{1, 0, 0, 0}, 0))
	for _, tc := range []struct {
		filter filters.Filter
		dtype  string
		want   string
	}{
		{testFilter(t), "float64", "checked \"x\": reads back in the rtf layout as float64 (trunc_len 512) to relative error "},
		{crowded, "float32", ": nothing was written: checked \"x\": "},
		// float64 fails too (the correction for trunc_len 512 of poles this close to 1): it
		// was offered as "--dtype float64 may hold it" (QA F6).
		{crowded, "float32", "; it fails in float64 too (the rtf layout's polynomial coefficients lose it, not the dtype); the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it; the tensors"},
		// Without trunc_len float64 holds the coefficients, and is offered, checked.
		{crowded, "float32 no-trunc", "; the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it; --dtype float64 holds it (checked: relative error "},
	} {
		in := writeDoc(t, dir, "f.json", filters.Document{Name: "x", Filter: tc.filter})
		out := filepath.Join(t.TempDir(), "f.npz")
		dtype, noTrunc := strings.CutSuffix(tc.dtype, " no-trunc")
		trunc := []string{"--trunc-len", "512"}
		if noTrunc {
			trunc = nil
		}
		r := run(t, "", append([]string{"export", in, "-o", out, "--dtype", dtype}, trunc...)...)
		_, statErr := os.Stat(out)
		ok := tc.dtype == "float64"
		if (r.code == 0) != ok || (statErr == nil) != ok || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "warning:") || !ok && strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: want %q, and for float32 exit 1, one line and no file:\n%v", tc.dtype, tc.want, r)
		}
		if !ok {
			// --force writes it anyway, with the warning, and exits 0.
			r = run(t, "", append([]string{"export", in, "-o", out, "--dtype", dtype, "--force"}, trunc...)...)
			if _, err := os.Stat(out); r.code != 0 || err != nil || !strings.Contains(r.stderr, "warning: checked \"x\": ") {
				t.Errorf("%s --force: %v (file: %v)", tc.dtype, r, err)
			}
		}
	}
}

// TestExportTruncLenHint: a distilled tf that float64 coefficients hold, exported with
// --trunc-len as the help's example does, is refused in float64 at 1.2e-6 (formats.md, "The
// read-back check"): the refusal says that the correction for trunc_len loses it and that
// the tensors without it hold it, checked, as well as the modal layouts; it named only the
// latter, unchecked (QA F8).
func TestExportTruncLenHint(t *testing.T) {
	dir := t.TempDir()
	hyena, layer := filepath.Join(dir, "hyena.json"), filepath.Join(dir, "layer.json")
	for _, args := range [][]string{{"preset", "hyena", "channels=4", "-o", hyena}, {"distill", hyena, "--order", "4", "-o", layer}} {
		if r := run(t, "", args...); r.code != 0 {
			t.Fatal(r)
		}
	}
	out := filepath.Join(dir, "layer.safetensors")
	r := run(t, "", "export", layer, "-o", out, "--prefix", "layers.0.filter.", "--trunc-len", "1024")
	// The figure itself (1.1e-6–1.2e-6) moves with the fit's rounding.
	oneErrorLine(t, r, 1, " over 1024 samples (channel 0), above the 1e-06 float64 tensors are held to; the correction for trunc_len 1024 loses it: without trunc_len (a module built without it) it holds (checked: relative error ")
	if !strings.Contains(r.stderr, "reads back in the rtf layout as float64 (trunc_len 1024) to relative error 1.") {
		t.Errorf("the refusal does not give the read-back error: %q", r.stderr)
	}
	if r := run(t, "", "export", layer, "-o", out, "--prefix", "layers.0.filter."); r.code != 0 {
		t.Errorf("without --trunc-len: %v", r)
	}
}

// TestExportDefaultLayoutByForm: export without --layout writes a filter in a layout that
// stores its form and holds it: a distilled fit written as poles and residues (its tf
// coefficients lose it) goes to s4d, with a note saying which layout and why, and reads
// back; it went to rtf, whose tensors read back unstable, and was refused, naming s4d as a
// layout that may hold it. --layout rtf keeps that refusal (exit 1), and a tf filter still
// goes to rtf, with no note.
func TestExportDefaultLayoutByForm(t *testing.T) {
	dir := t.TempDir()
	// Twenty modes crowded at radius 0.999 and frequencies 0.2–0.295: tf coefficients of
	// order 40 do not hold them, so distill writes the fit as poles and residues.
	k := make([]float64, 4096)
	for j := range 20 {
		r, w := 0.999-0.0001*float64(j), 0.2+0.005*float64(j)
		for i := range k {
			k[i] += math.Pow(r, float64(i)) * math.Cos(w*float64(i))
		}
	}
	data, err := json.Marshal(map[string]any{"kernels": [][]float64{k}})
	if err != nil {
		t.Fatal(err)
	}
	in := writeText(t, dir, "crowded.json", string(data))
	fit := filepath.Join(dir, "fit.json")
	if r := run(t, "", "distill", in, "--order", "40", "-o", fit); r.code != 0 {
		t.Fatal(r)
	}
	if doc, err := readDoc(fit); err != nil || doc.Filter == nil || doc.Filter.Form() != filters.FormDiagonal {
		t.Fatalf("the test wants a fit of one diagonal filter: %+v, %v", doc, err)
	}

	out := filepath.Join(dir, "fit.safetensors")
	r := run(t, "", "export", fit, "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "note: ") || !strings.Contains(r.stderr, ": written in the s4d layout, chosen for its diagonal form: it stores the poles and residues as they are") ||
		!strings.Contains(r.stderr, "reads back in the s4d layout as float64 to relative error") {
		t.Fatalf("no layout named: want it written in s4d, saying why: %v", r)
	}
	if it, err := sessions.Import(out, sessions.ImportOptions{}); err != nil || !strings.HasPrefix(it.Note, "s4d layer") {
		t.Errorf("%s: %+v, %v", out, it, err)
	}

	// Named, the rtf layout is written or refused as before.
	rtf := filepath.Join(dir, "rtf.safetensors")
	oneErrorLine(t, run(t, "", "export", fit, "--layout", "rtf", "-o", rtf), ExitFailure, "reads back in the rtf layout as float64 with channel 0 unstable")
	if _, err := os.Stat(rtf); !os.IsNotExist(err) {
		t.Errorf("a refused export wrote %s: %v", rtf, err)
	}

	// A tf filter goes to rtf, which stores its coefficients, with no note.
	tf := writeDoc(t, dir, "tf.json", filters.Document{Name: "tf", Filter: ioMust(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0))})
	r = run(t, "", "export", tf, "-o", filepath.Join(dir, "tf.safetensors"))
	if r.code != 0 || strings.Contains(r.stderr, "note:") || !strings.Contains(r.stderr, `checked "tf": reads back in the rtf layout as float64 to relative error`) {
		t.Errorf("a tf filter, no layout named: want rtf, no note: %v", r)
	}
}

// TestExportLengthPicksModalLayout: --length with no --layout asks for a layout that takes
// it: a diagonal filter goes to s4d, as with no option, the note saying so and the check
// comparing over --length samples; one s4d does not hold (unstable) to stripedhyena, not to
// rtf. It was refused before the input was read, as "--length applies to … not to the rtf
// layout", where the layout export would take was s4d.
func TestExportLengthPicksModalLayout(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		poles []complex128
		lay   string
	}{
		{"stable", []complex128{-0.5, 0.5}, "s4d"},
		{"unstable", []complex128{1.5, 0.5}, "stripedhyena"},
	} {
		in := writeDoc(t, dir, tc.name+".json", filters.Document{Name: tc.name, Filter: ioMust(filters.NewDiagonal(tc.poles, []complex128{1, 2}, 0))})
		out := filepath.Join(dir, tc.name+".pt")
		r := run(t, "", "export", in, "--length", "64", "-o", out)
		if r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("note: %q: written in the %s layout, chosen for its diagonal form", tc.name, tc.lay)) ||
			!strings.Contains(r.stderr, fmt.Sprintf("reads back in the %s layout as float64 to relative error", tc.lay)) || !strings.Contains(r.stderr, "over 64 samples (--length)") {
			t.Errorf("%s --length 64: want it written in %s: %v", tc.name, tc.lay, r)
		}
		if it, err := sessions.Import(out, sessions.ImportOptions{}); err != nil || !strings.HasPrefix(it.Note, tc.lay+" layer") {
			t.Errorf("%s: %+v, %v", out, it, err)
		}
	}
}

// TestExportOptionRefusalNamesItem: an option one item of a session's cannot take is
// refused (exit 2) in a line that says, before the flag, the session and the item (by ID):
// of a diagonal filter and a tf one, --length refuses the tf one (f2), whose one layout
// (rtf) has no length. The line kept the flag's refusal alone (`--length 64 applies …`),
// with neither the session's path nor the item's ID in front of it; then it named the item
// there and again in the refusal (`with no layout named, f2 ("tf"), a tf filter, is …`).
func TestExportOptionRefusalNamesItem(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, "work.ssmlab")
	diag := writeDoc(t, dir, "diag.json", filters.Document{Name: "diag", Filter: ioMust(filters.NewDiagonal([]complex128{-0.5, 0.5}, []complex128{1, 2}, 0))})
	tf := writeDoc(t, dir, "tf.json", filters.Document{Name: "tf", Filter: ioMust(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0))})
	for _, in := range []string{diag, tf} {
		if r := run(t, "", "import", in, "--session", sess); r.code != 0 {
			t.Fatalf("%v", r)
		}
	}
	s := ioMust(sessions.Load(sess))
	if len(s.Filters) != 2 || s.Filters[1].ID != "f2" || s.Filters[1].Filter.Form() != filters.FormTF {
		t.Fatalf("the session holds %s, want f2 the tf filter", s.Summary())
	}
	out := filepath.Join(dir, "out.pt")
	r := run(t, "", "export", sess, "--length", "64", "-o", out)
	oneErrorLine(t, r, ExitUsage, "--length 64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout")
	if want := fmt.Sprintf(`ssmlab: export: %s: f2 ("%s"): --length 64 applies`, sess, s.Filters[1].Name); !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "f2") != 1 {
		t.Errorf("stderr %q, want it beginning %q, naming f2 there alone", r.stderr, want)
	}
	oneErrorLine(t, r, ExitUsage, "; with no layout named, a tf filter is written in the rtf layout")
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused export wrote %s", out)
	}
}

// rewordedError words an error its own way, as a wrapper may: its message does not hold the
// error it wraps.
type rewordedError struct {
	msg string
	err error
}

func (e rewordedError) Error() string { return e.msg }
func (e rewordedError) Unwrap() error { return e.err }

// TestFlagMistakeKeepsSource: an option's refusal inside an error that words it its own way
// keeps that error's words whole, the file first, as a command-line mistake (exit 2). It gave
// "--length 1 is below …" alone, without the checkpoint's path.
func TestFlagMistakeKeepsSource(t *testing.T) {
	oe := &sessions.OptionError{Option: "length", Value: "1", Why: " is below the 2 samples a fit needs"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("ck.safetensors: %w", oe), "ck.safetensors: --length 1 is below the 2 samples a fit needs"},
		{fmt.Errorf("ck.safetensors: %w", rewordedError{"layer \"h.0\": length 1 is too short to fit", oe}), `ck.safetensors: layer "h.0": length 1 is too short to fit`},
	} {
		err := flagMistake(c.err)
		if err.Error() != c.want || !errors.As(err, new(*sessions.OptionError)) || errors.As(err, new(*failure)) {
			t.Errorf("flagMistake(%q) = %q, want %q, of the OptionError, no failure", c.err, err, c.want)
		}
	}
}

// TestExportRefusalSaysWhatWasTried: a diagonal filter no default layout holds (a mode at
// 0, which the s4d and stripedhyena layouts cannot write; poles crowded near 1, which rtf's
// coefficients read back unstable) is refused (exit 1) in one line that says why s4d and
// stripedhyena refused it and offers sos alone, which holds it; --force writes it with that
// warning and no note repeating it. The refusal offered "the s4d, stripedhyena or sos
// layout", the first two just tried, and said nothing of them.
func TestExportRefusalSaysWhatWasTried(t *testing.T) {
	dir := t.TempDir()
	poles, res := []complex128{0}, []complex128{1}
	for i := range 16 {
		poles = append(poles, complex(0.95+0.04*float64(i)/15, 0))
		res = append(res, complex(1/float64(i+1), 0))
	}
	in := writeDoc(t, dir, "zc.json", filters.Document{Name: "zc", Filter: ioMust(filters.NewDiagonal(poles, res, 0))})
	out := filepath.Join(dir, "zc.pt")
	const tried = "tried before the rtf layout: the s4d layout cannot hold it (channel 0: pole 0 is 0, which the s4d layout cannot hold (it takes the poles' logarithms)); the stripedhyena layout cannot hold it ("
	const offer = "; the sos layout (second-order sections, not polynomial coefficients of the whole order) may hold it"
	r := run(t, "", "export", in, "-o", out)
	oneErrorLine(t, r, ExitFailure, tried)
	if !strings.Contains(r.stderr, offer) || strings.Contains(r.stderr, "s4d, stripedhyena or sos") {
		t.Errorf("the refusal offers other layouts than sos: %v", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused export wrote %s: %v", out, err)
	}
	r = run(t, "", "export", in, "-o", out, "--force")
	if r.code != 0 || strings.Contains(r.stderr, "note:") || strings.Count(r.stderr, tried) != 1 || !strings.Contains(r.stderr, "warning: checked \"zc\": reads back in the rtf layout as float64 with channel 0 unstable") {
		t.Errorf("--force: %v", r)
	}
	if r := run(t, "", "export", in, "--layout", "sos", "-o", filepath.Join(dir, "zc-sos.pt")); r.code != 0 || !strings.Contains(r.stderr, "reads back in the sos layout as float64") {
		t.Errorf("--layout sos, offered: %v", r)
	}
}

// TestImportListOrder: --list's order is a channel's real state count in every layout, the
// order distill's --order counts and import's note says: a StripedHyena layer of 4 poles
// ("order up to 8" once imported) lists order 8, as an S4D layer of N = 8 (4 modes) does,
// each with its 4 complex modes alongside; an is_real S4D layer's 4 real modes are order 4.
// StripedHyena's order was 4, its count of poles.
func TestImportListOrder(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"stripedhyena_64.pt", `"layout":"stripedhyena","channels":3,"order":8,"complex_modes":4,`},
		{"s4d_64.pt", `"layout":"s4d","channels":3,"order":8,"complex_modes":4,`},
		{"s4d_real_64.pt", `"layout":"s4d","channels":3,"order":4,"dtype"`},
		{"lru_64.pt", `"layout":"lru","channels":3,"order":8,"complex_modes":4,`},
	} {
		path := filepath.Join("..", "testdata", "layouts", c.file)
		if r := run(t, "", "import", path, "--list"); r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s --list: want %s in %v", c.file, c.want, r)
		}
	}
	if r := run(t, "", "import", filepath.Join("..", "testdata", "layouts", "stripedhyena_64.pt"), "-o", filepath.Join(t.TempDir(), "sh.json")); r.code != 0 || !strings.Contains(r.stderr, "of order up to 8 ") {
		t.Errorf("import: %v", r)
	}
}

// TestExportSOS: a filter goes out as second-order sections and comes back as the zpk
// filter it was; scipy's sections are detected (--list) and read; sections float32 cannot
// hold (a pole pair near z = 1 at a small angle, whose a1 and a2 float32 rounds by a tenth
// of the discriminant that places it) are refused unless --force, and --trunc-len is rtf's.
func TestExportSOS(t *testing.T) {
	dir := t.TempDir()
	r := run(t, "", "import", "../testdata/layouts/sos_bank_64.npz", "--list")
	if r.code != 0 || !strings.Contains(r.stdout, `"layers":[{"prefix":"filter.","layout":"sos","channels":3,"order":6,`) {
		t.Fatalf("list: %v", r)
	}
	p := cmplx.Rect(0.9999, 1e-3)
	near := ioMust(filters.NewZPK([]complex128{-0.5}, []complex128{p, cmplx.Conj(p), 0.3}, 0.01, 0))
	in := writeDoc(t, dir, "near.json", filters.Document{Name: "near", Filter: near})
	out := filepath.Join(dir, "near.npz")
	if r = run(t, "", "export", in, "--layout", "sos", "-o", out); r.code != 0 || !strings.Contains(r.stderr, `checked "near": reads back in the sos layout as float64 to relative error`) {
		t.Fatalf("float64: %v", r)
	}
	back := run(t, "", "import", out)
	var doc struct {
		Form  string
		Poles [][2]float64
	}
	if back.code != 0 || json.Unmarshal([]byte(back.stdout), &doc) != nil || doc.Form != "zpk" || len(doc.Poles) != 3 {
		t.Errorf("import of the sections: %v", back)
	}
	out32 := filepath.Join(dir, "near32.npz")
	args := []string{"export", in, "--layout", "sos", "--dtype", "float32", "-o", out32}
	r = run(t, "", args...)
	if _, err := os.Stat(out32); r.code != ExitFailure || err == nil || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "nothing was written: checked \"near\": reads back in the sos layout as float32 to relative error") {
		t.Errorf("float32: %v", r)
	}
	if r = run(t, "", append(args, "--force")...); r.code != 0 || !strings.Contains(r.stderr, "warning: ") {
		t.Errorf("float32 --force: %v", r)
	}
	if _, err := os.Stat(out32); err != nil {
		t.Error(err)
	}
	// a command-line mistake, naming the flag and its value (it was exit 1, "invalid session:
	// trunc_len applies …")
	oneErrorLine(t, run(t, "", "export", in, "--layout", "sos", "--trunc-len", "64", "-o", out), ExitUsage, "export: --trunc-len 64 applies to the rtf layout, not to the sos layout")
}

// TestImportSessionTwice: importing the same file into a session again adds nothing, writes
// nothing and says so, naming the item (a script run twice added it twice); a different
// item of a name in use gets name-2, and is then found again under it.
func TestImportSessionTwice(t *testing.T) {
	dir := t.TempDir()
	in := writeText(t, dir, "k.json", `{"name": "k", "kernels": [[1, 0.5, 0.25], [1, -0.5, 0.25]]}`)
	other := writeText(t, dir, "other.json", `{"name": "k", "kernels": [[1, 0.25, 0.0625]]}`)
	sess := filepath.Join(dir, "s.ssmlab")
	if r := run(t, "", "import", in, "--session", sess); r.code != 0 || !strings.HasPrefix(r.stderr, "added t1 ") {
		t.Fatal(r)
	}
	before, err := os.ReadFile(sess)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "import", in, "--session", sess)
	if r.code != 0 || r.stdout != "" || r.stderr != fmt.Sprintf("%s already holds t1 (\"k\": 2 kernels of length 3), identical to %s: nothing added\n", sess, in) {
		t.Errorf("the second import: %v", r)
	}
	if after, err := os.ReadFile(sess); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the second import changed the session (%v)", err)
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"k.json", "other.json", "s.ssmlab"}) {
		t.Errorf("the directory holds %v (no backup: the session was not written)", names)
	}
	for i := range 2 {
		r := run(t, "", "import", other, "--session", sess)
		if want := []string{"added t2 (\"k-2\"", "already holds t2 (\"k-2\""}[i]; r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("import of another k, #%d: %v, want %q", i+1, r, want)
		}
	}
	if s := ioMust(sessions.Load(sess)); s.Summary() != "0 filters, 2 targets, 0 jobs" {
		t.Errorf("the session holds %s", s.Summary())
	}
}

// TestExportRankLimitedFit: a kernel of order 5 distilled at order 8 keeps 5 fitted poles
// and 3 idle ones (a pair, and a real pole at 0 with no residue), and the fit goes out in
// the modal layouts, which store the poles' logarithms, and reads back: they refused the
// idle pole at 0 (an S4 bank distilled at n = 64, with channels of rank 63, could not be
// exported in them). A pole at 0 with a residue (a tap at t = 1) is still refused.
func TestExportRankLimitedFit(t *testing.T) {
	dir := t.TempDir()
	butter := filepath.Join(dir, "butter.json")
	if r := run(t, "", "preset", "butter", "order=5", "-o", butter); r.code != 0 {
		t.Fatal(r)
	}
	fit := filepath.Join(dir, "fit.json")
	if r := run(t, "", "distill", butter, "--order", "8", "-o", fit); r.code != 0 {
		t.Fatal(r)
	}
	for _, layout := range []string{"s4d", "stripedhyena"} {
		out := filepath.Join(dir, layout+".npz")
		r := run(t, "", "export", fit, "--layout", layout, "-o", out)
		if _, err := os.Stat(out); r.code != 0 || err != nil || !strings.Contains(r.stderr, "reads back in the "+layout+" layout as float64") {
			t.Errorf("%s: %v (file: %v)", layout, r, err)
		}
	}
	tap := writeDoc(t, dir, "tap.json", filters.Document{Name: "tap", Filter: ioMust(filters.NewDiagonal([]complex128{0.5, 0}, []complex128{1, 0.3}, 0))})
	out := filepath.Join(dir, "tap.npz")
	oneErrorLine(t, run(t, "", "export", tap, "--layout", "s4d", "-o", out), ExitFailure, "pole 1 is 0, which the s4d layout cannot hold")
}

// TestExportFailureIsOneLine: an export the read-back check refuses prints its error alone,
// naming the check that failed and counting the other warnings (the README's order-8 Hyena
// fit as float32 RTF coefficients printed its conversion's and read-back's warnings first,
// then the error); --force prints them all.
func TestExportFailureIsOneLine(t *testing.T) {
	dir := t.TempDir()
	hyena, fit, out := filepath.Join(dir, "hyena.json"), filepath.Join(dir, "fit.json"), filepath.Join(dir, "e.pt")
	for _, args := range [][]string{{"preset", "hyena", "channels=4", "w=4", "-o", hyena}, {"distill", hyena, "--order", "8", "-o", fit}} {
		if r := run(t, "", args...); r.code != 0 {
			t.Fatalf("%v: %v", args, r)
		}
	}
	args := []string{"export", fit, "--layout", "rtf", "--dtype", "float32", "-o", out}
	r := run(t, "", args...)
	oneErrorLine(t, r, ExitFailure, fit+`: nothing was written: checked "rtf 8 (`)
	if !strings.Contains(r.stderr, "reads back in the rtf layout as float32 with channel 0 unstable") || !strings.Contains(r.stderr, "--force writes them anyway, with 12 more warnings") {
		t.Errorf("the error line does not say what failed and how many warnings --force prints: %v", r)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
	r = run(t, "", append(args, "--force")...)
	if n := strings.Count(r.stderr, "warning: "); r.code != 0 || n != 13 || !strings.Contains(r.stderr, `warning: checked "rtf 8 (`) {
		t.Errorf("--force: %d warnings, want 13 (the conversion's 12 and the read-back's): %v", n, r)
	}
}

// TestExportModelLength: the order-64 fit of the trained fixed-lag layer 0 (kernels of
// 1024 samples, poles near 0.9999) exported in float32 in the s4d layout is refused over
// the conversion report's window (4096 samples: the responses have not decayed), and passes
// over the 1024 samples its model runs at, given as --length, which the check line names.
// Export had no way to be told the model's length (--length was csv's and npy's only).
func TestExportModelLength(t *testing.T) {
	dir := t.TempDir()
	fit, out := filepath.Join(dir, "f64.json"), filepath.Join(dir, "f.npz")
	if r := run(t, "", "distill", "../testdata/trained/copy-fixed-layer0.npy", "--order", "64", "-o", fit); r.code != 0 {
		t.Fatal(r)
	}
	args := []string{"export", fit, "--layout", "s4d", "--dtype", "float32", "-o", out}
	r := run(t, "", args...)
	oneErrorLine(t, r, ExitFailure, "reads back in the s4d layout as float32 to relative error")
	if !strings.Contains(r.stderr, "over 4096 samples (channel") {
		t.Errorf("without --length: want the report's window of 4096 samples: %v", r)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("%s was written", out)
	}
	r = run(t, "", append(args, "--length", "1024")...)
	m := regexp.MustCompile(`as float32 to relative error (\S+) over 1024 samples \(--length\)\n`).FindStringSubmatch(r.stderr)
	if _, err := os.Stat(out); r.code != 0 || err != nil || m == nil {
		t.Fatalf("--length 1024: %v (file: %v)", r, err)
	}
	if e, err := strconv.ParseFloat(m[1], 64); err != nil || !(e <= sessions.ReadBackLimit(arrays.Float32)) {
		t.Errorf("--length 1024: relative error %s, want at most %g", m[1], sessions.ReadBackLimit(arrays.Float32))
	}
}

// Commands that read a filter file (analyze, convert) or a session (session info) refuse an
// array file — a model checkpoint a user hands them first — by what it is and how to read
// it, not with the JSON decoder's "invalid character 'P' looking for beginning of value".
func TestArrayFileWhereJSONIsRead(t *testing.T) {
	for _, f := range []string{"s4d_32.pt", "rtf_32.safetensors", "lru_64.npz"} {
		path := filepath.Join("..", "testdata", "layouts", f)
		for _, args := range [][]string{{"analyze", path}, {"convert", path, "--to", "tf"}} {
			r := run(t, "", args...)
			oneErrorLine(t, r, 1, path+" is an array file")
			oneErrorLine(t, r, 1, "not a filter file: `ssmlab import "+path+" -o FILTER.json`")
			if strings.Contains(r.stderr, "JSON at line") {
				t.Errorf("%v: the JSON decoder's error: %v", args, r)
			}
		}
		r := run(t, "", "session", "info", path)
		oneErrorLine(t, r, 1, "is an array file")
		oneErrorLine(t, r, 1, "not a session")
		r = run(t, "", "merge", path, "-o", filepath.Join(t.TempDir(), "m.pt"))
		oneErrorLine(t, r, 1, "this is an array file")
		oneErrorLine(t, r, 1, "not a part file")
	}
	// A filter file as a part said `format "", want "ssmlab-distill-part/2"`.
	filter := writeText(t, t.TempDir(), "f.json", `{"form": "tf", "a": [0.5], "b": [1], "h0": 0}`)
	oneErrorLine(t, run(t, "", "merge", filter, "-o", filepath.Join(t.TempDir(), "m.pt")), 1, filter+`: not a part file: no "format" (want "ssmlab-distill-part/2"`)
}

// TestBrokenJSONNamedLikeCSV: a filter file with a syntax error is not called an array file
// because its name ends in .txt, which a CSV file's may (it said "bad.txt is an array file (a
// CSV file)"); a CSV file given where a filter file is read still is one.
func TestBrokenJSONNamedLikeCSV(t *testing.T) {
	dir := t.TempDir()
	bad := writeText(t, dir, "bad.txt", `{"form": "tf", "a": [0.5`)
	r := run(t, "", "analyze", bad)
	oneErrorLine(t, r, 1, bad+": ")
	if strings.Contains(r.stderr, "array file") {
		t.Errorf("a broken filter file called an array file: %v", r)
	}
	csv := writeText(t, dir, "k.csv", "0.5,0.25\n")
	oneErrorLine(t, run(t, "", "analyze", csv), 1, csv+" is an array file (a CSV file), not a filter file")
}

// TestImportOneChannelNote: a layer read as a bank of one channel (one --pair of a
// multi-input multi-output layer) is "a bank of 1 diagonal channel", not "1 diagonal
// channels" (QA), "of order 8", its order, where it said "of order up to 8", the bound of
// the layer's state size (2 per complex mode) for one channel.
func TestImportOneChannelNote(t *testing.T) {
	r := run(t, "", "import", filepath.Join("..", "testdata", "layouts", "lru_64.pt"), "--pair", "0,1", "-o", filepath.Join(t.TempDir(), "x.json"))
	if r.code != 0 || !strings.Contains(r.stderr, "→ bank of 1 diagonal channel of order 8 (") {
		t.Errorf("want the note of a bank of 1 diagonal channel; got %v", r)
	}
	// The default pairs are named by their indices, as --pair's are, not as "(h, h)".
	r = run(t, "", "import", filepath.Join("..", "testdata", "layouts", "lru_64.pt"), "-o", filepath.Join(t.TempDir(), "x.json"))
	if r.code != 0 || !strings.Contains(r.stderr, "so it took the 3 diagonal pairs (output, input) (0, 0), …, (2, 2) as a bank") {
		t.Errorf("want the diagonal pairs named; got %v", r)
	}
}

// TestExportOfSeveralNamesImport: export reads a file that holds several layers or arrays as
// import does, but has no --tensor (nor --list) to choose one; its refusal said "choose one
// with --tensor PREFIX" (layers) or "--tensor NAME picks one; --list shows them" (arrays),
// which export answers with "unknown flag: --tensor". It says to import the one wanted first.
func TestExportOfSeveralNamesImport(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.npz")
	var named []arrays.Named
	for _, n := range []string{"a", "b"} {
		k, err := arrays.New([]int{2, 8}, []float64{1, 0.5, 0.25, 0, 0, 0, 0, 0, 1, -0.5, 0.25, 0, 0, 0, 0, 0})
		if err != nil {
			t.Fatal(err)
		}
		named = append(named, arrays.Named{Name: n, Array: k})
	}
	var buf bytes.Buffer
	if err := arrays.WriteNPZ(&buf, named, arrays.NPZOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ src, list, how string }{
		{"../testdata/scale/hyena_lm.pt", `hyena "backbone.layers.0.mixer.filter_fn."`, "ssmlab import ../testdata/scale/hyena_lm.pt --tensor PREFIX -o ITEM.json"},
		{two, `"a", "b"`, "ssmlab import " + two + " --tensor NAME -o ITEM.json"},
	} {
		r := run(t, "", "export", c.src, "-o", filepath.Join(dir, "x.pt"))
		oneErrorLine(t, r, ExitFailure, c.list)
		if !strings.Contains(r.stderr, "export writes one: import it first ("+c.how+") and export ITEM.json") || strings.Contains(r.stderr, "choose one with --tensor") || strings.Contains(r.stderr, "--list") {
			t.Errorf("export %s: the refusal does not say how export takes one of them: %v", c.src, r)
		}
	}
}
