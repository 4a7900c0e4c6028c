package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagFilesRefuseDash: a flag that names a file (--job, --data, --session, --input) given
// "-" is refused as the command-line mistake it is, exit 2, as plot's --ladder and export's
// FILE are: --job - and --data - said "ssmlab: -: no such file or directory" (exit 1), and
// import --session - wrote a session file named "-" in the working directory (exit 0).
func TestFlagFilesRefuseDash(t *testing.T) {
	dir := t.TempDir()
	kernels := writeText(t, dir, "k.json", `{"kernels": [[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]]}`)
	t.Chdir(dir) // a file named "-" would land here
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"distill", kernels, "--order", "1", "--job", "-"}, "distill: --job reads a file, not stdin"},
		{[]string{"train", "--task", "delay", "--job", "-"}, "train: --job reads a file, not stdin"},
		{[]string{"train", "--task", "sysid", "--data", "-"}, "train: --data reads a file, not stdin"},
		{[]string{"import", kernels, "--session", "-"}, "import: --session names a session file, not stdout"},
		{[]string{"merge", "part.json", "--input", "-", "-o", filepath.Join(dir, "m.safetensors")}, "merge: --input reads a file, not stdin"},
	} {
		r := run(t, `{"u": [1, 0, 0, 0], "y": [1, 0, 0, 0]}`, c.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %v, want exit 2 saying %q", c.args, r, c.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("a file named \"-\" was written")
	}
}

// TestLayoutNameIsAFlagMistake: a --layout that names no layout is a command-line mistake
// (exit 2) whatever FILE holds, as export's is: import and distill read the file first and
// failed with exit 1 for an array file, and ignored it (exit 0) for a JSON file.
func TestLayoutNameIsAFlagMistake(t *testing.T) {
	dir := t.TempDir()
	kernels := writeText(t, dir, "k.json", `{"kernels": [[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]]}`)
	csv := writeText(t, dir, "k.csv", "0.5,0.25,0.125,0.0625,0.03125,0.015625,0.0078125,0.00390625\n")
	for _, args := range [][]string{
		{"import", csv, "--layout", "bogus"},
		{"import", kernels, "--layout", "bogus"},
		{"import", kernels, "--layout", "auto"},
		{"distill", csv, "--order", "1", "--layout", "bogus"},
		{"distill", kernels, "--order", "1", "--layout", "bogus"},
		{"distill", csv, "--order", "1", "--layout", "bogus", "-o", filepath.Join(dir, "x.safetensors")},
	} {
		r := run(t, "", args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
			!strings.Contains(r.stderr, `--layout "`) || !strings.Contains(r.stderr, "rtf, s4d, s4, stripedhyena, hyena, lru, s5, rotrnn, sos") {
			t.Errorf("%v: %v, want exit 2 naming --layout and the layouts", args, r)
		}
	}
	// The names it takes still work: kernels for import and distill, auto for distill.
	for _, args := range [][]string{
		{"import", csv, "--layout", "kernels"},
		{"distill", csv, "--order", "1", "--layout", "auto"},
		{"distill", csv, "--order", "1", "--layout", "kernels"},
	} {
		if r := run(t, "", args...); r.code != 0 {
			t.Errorf("%v: %v", args, r)
		}
	}
}

// TestImportFlagNotForTheFile: a flag of import (or distill) that the file gives it nothing to
// apply to is a command-line mistake, exit 2, as a layout option is (--disc for a JSON
// file): --tensor and --columns for a JSON file, and --trunc-len for kernels or a layer not
// rtf, failed with exit 1; --trunc-len for a JSON file and --pair for one or for kernels were ignored (exit 0).
func TestImportFlagNotForTheFile(t *testing.T) {
	dir := t.TempDir()
	kernels := writeText(t, dir, "k.json", `{"kernels": [[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]]}`)
	filter := writeText(t, dir, "f.json", `{"form": "tf", "a": [-0.5], "b": [1], "h0": 0}`)
	csv := writeText(t, dir, "k.csv", "0.5,0.25,0.125,0.0625,0.03125,0.015625,0.0078125,0.00390625\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import", kernels, "--tensor", "x"}, "--tensor x: a JSON file holds no tensors"},
		{[]string{"import", filter, "--columns"}, "--columns reads an array's columns"},
		{[]string{"import", filter, "--trunc-len", "5"}, "--trunc-len 5 applies to an RTF layer, and a JSON file holds none"},
		{[]string{"import", kernels, "--pair", "0,0"}, "--pair picks slices of a MIMO layer (lru, s5, rotrnn), and a JSON file holds none"},
		{[]string{"import", csv, "--trunc-len", "5"}, "--trunc-len 5 applies to an RTF layer, and the file holds none"},
		{[]string{"import", csv, "--pair", "0,0"}, "--pair picks slices of a MIMO layer (lru, s5, rotrnn), and the file holds none"},
		{[]string{"distill", filter, "--order", "1", "--tensor", "x"}, "--tensor x: a JSON file holds no tensors"},
		// A layer that is not rtf, as export says of its layout (it was exit 1).
		{[]string{"import", filepath.Join("..", "testdata", "layouts", "s4d_64.pt"), "--trunc-len", "5"}, "--trunc-len 5 applies to the rtf layout, not to the s4d layout"},
	} {
		r := run(t, "", c.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %v, want exit 2 saying %q", c.args, r, c.want)
		}
	}
}

// TestPairForALayerNotMIMO: --pair for a layer that is no MIMO layer is a command-line
// mistake (exit 2), as it is for kernels or a JSON file; it failed with exit 1.
func TestPairForALayerNotMIMO(t *testing.T) {
	dir := t.TempDir()
	f, npz := filepath.Join(dir, "b.json"), filepath.Join(dir, "b.npz")
	if r := run(t, "", "preset", "butter", "--order", "2", "-o", f); r.code != 0 {
		t.Fatal(r)
	}
	if r := run(t, "", "export", f, "-o", npz); r.code != 0 {
		t.Fatal(r)
	}
	r := run(t, "", "import", npz, "--pair", "0,0")
	if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "--pair picks slices of a MIMO layer (lru, s5, rotrnn), not of rtf") {
		t.Errorf("%v, want exit 2 naming --pair", r)
	}
}

// TestNoArgumentCommands: an argument to a command that takes none is named as such (exit 2,
// as oneFile's "want one FILE argument, got 3"); cobra.NoArgs said 'unknown command "x.json"
// for "ssmlab train"', as if a subcommand were mistyped.
func TestNoArgumentCommands(t *testing.T) {
	for _, args := range [][]string{
		{"train", "--task", "delay", "x.json"},
		{"backends", "x.json", "y.json"},
	} {
		r := run(t, "", args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
			!strings.Contains(r.stderr, ": want no arguments, got ") || strings.Contains(r.stderr, "unknown command") {
			t.Errorf("%v: %v, want exit 2 saying it takes no arguments", args, r)
		}
	}
}

// TestListJSONFile: import --list of a JSON file, which holds no layers or arrays, is a flag
// that does not apply to the file (exit 2), as --tensor for one is; it failed with exit 1
// saying "unsupported array: not an array file ssmlab knows", which named every format but
// the one the file is in.
func TestListJSONFile(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{
		`{"kernels": [[0.5, 0.25]]}`,
		"\ufeff\n " + `{"form": "tf", "a": [-0.5], "b": [1], "h0": 0}`,
	} {
		path := writeText(t, dir, "f.json", text)
		r := run(t, "", "import", path, "--list")
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
			!strings.Contains(r.stderr, path+": --list lists the layers and arrays of an array file") || !strings.Contains(r.stderr, "a JSON file holds none") {
			t.Errorf("%q: %v, want exit 2 naming --list", text, r)
		}
	}
	// A file that is neither is still not an array file (exit 1).
	if r := run(t, "", "import", writeText(t, dir, "x.npy", "not an array"), "--list"); r.code != 1 || !strings.Contains(r.stderr, "not an array file") {
		t.Errorf("not an array file: %v", r)
	}
}
