package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// TestBadSecondOutputWritesNothing: a command that writes two files (or stdout and a file)
// fails before writing any when one of them cannot be written; before, convert wrote -o (or
// printed the filter) and then failed on --report (missing directory, or a directory in its
// place), and export and analyze --reduce did their work and printed their notes first.
func TestBadSecondOutputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.json", filters.Document{Filter: testFilter(t)})
	missing := filepath.Join(dir, "missing")
	out, rep := filepath.Join(dir, "out.json"), filepath.Join(dir, "rep.json")
	before := numtest.DirNames(t, dir)
	for _, args := range [][]string{
		{"convert", in, "--to", "tf", "-o", out, "--report", filepath.Join(missing, "r.json")},
		{"convert", in, "--to", "tf", "--report", filepath.Join(missing, "r.json")},
		{"convert", in, "--to", "tf", "-o", out, "--report", dir},
		{"distill", in, "--order", "2", "--length", "64", "-o", filepath.Join(missing, "x.json"), "--report", rep},
		{"distill", in, "--orders", "1,2", "--length", "64", "-o", filepath.Join(missing, "x{n}.json"), "--report", rep},
		{"analyze", in, "--reduce", "1", "-o", filepath.Join(missing, "x.json")},
		{"export", in, "-o", filepath.Join(missing, "x.npz")},
	} {
		r := run(t, "", args...)
		if r.code != ExitFailure || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, dir) {
			t.Errorf("%s: want exit 1, one line naming the path, nothing on stdout; got %v", strings.Join(args, " "), r)
		}
		if now := numtest.DirNames(t, dir); !slices.Equal(now, before) {
			t.Errorf("%s: left %v (before: %v)", strings.Join(args, " "), now, before)
		}
	}
}

// TestOutputNamingInputRefused: an output that names the command's input is a command-line
// mistake (exit 2) and leaves the input as it was; before, convert (-o or --report), import and
// export replaced the input (import -o model.pt put JSON in place of the checkpoint), and
// analyze --reduce took ./in.json for another file than in.json.
func TestOutputNamingInputRefused(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.json", filters.Document{Filter: testFilter(t)})
	orig, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, ".", "in.json")
	for _, args := range [][]string{
		{"convert", in, "--to", "tf", "-o", in},
		{"convert", in, "--to", "tf", "-o", dir + "/other.json", "--report", dotted},
		{"distill", in, "--order", "2", "--length", "64", "-o", in},
		{"distill", in, "--order", "2", "--length", "64", "--report", dotted},
		{"import", in, "-o", dotted},
		{"export", in, "-o", in},
		{"analyze", in, "--reduce", "1", "-o", dotted},
	} {
		r := run(t, "", args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "is also an input") {
			t.Errorf("%s: want exit 2 naming the input; got %v", strings.Join(args, " "), r)
		}
		if now, _ := os.ReadFile(in); string(now) != string(orig) {
			t.Fatalf("%s: the input changed", strings.Join(args, " "))
		}
	}
}

// TestPlotAndPresetCheckOutput: plot and preset check -o as the other commands do: a missing
// directory is named as such (it was "no such file or directory", after the figure was
// drawn), and plot refuses to draw over one of its inputs.
func TestPlotAndPresetCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.svg", filters.Document{Filter: testFilter(t)})
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", in, "--impulse", "-o", filepath.Join(missing, "x.svg")}, ExitFailure, "the directory " + missing + " does not exist"},
		{[]string{"preset", "butter", "-o", filepath.Join(missing, "x.json")}, ExitFailure, "the directory " + missing + " does not exist"},
		{[]string{"plot", in, "--impulse", "-o", in}, ExitUsage, "is also an input"},
	} {
		r := run(t, "", tc.args...)
		if r.code != tc.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: want exit %d saying %q; got %v", tc.args, tc.code, tc.want, r)
		}
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"in.svg"}) {
		t.Errorf("left %v", names)
	}
}

// TestExportToStdoutSaysStdout: export -o - names stdout in its summary ("to - as npz").
func TestExportToStdoutSaysStdout(t *testing.T) {
	in := writeDoc(t, t.TempDir(), "in.json", filters.Document{Filter: testFilter(t)})
	r := run(t, "", "export", in, "-o", "-", "--format", "npz")
	if r.code != 0 || r.stdout == "" || !strings.Contains(r.stderr, "to stdout as npz") {
		t.Errorf("%v", r)
	}
}

// TestExportPrefixNeedsDot: export --prefix without the trailing "." is exit 2 before any
// work; it failed as "the tensors do not hold the filters to the documented accuracy". A
// prefix that is not UTF-8 is exit 2 too; the tensor writer refused it (exit 1).
func TestExportPrefixNeedsDot(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.json", filters.Document{Filter: testFilter(t)})
	for _, c := range []struct{ prefix, want string }{
		{"layers.0.filter", "(layers.0.filter.)"},
		{"\xab.", `--prefix "\xab." is not valid UTF-8`},
	} {
		r := run(t, "", "export", in, "-o", filepath.Join(dir, "x.safetensors"), "--prefix", c.prefix)
		if r.code != ExitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("--prefix %q: %v", c.prefix, r)
		}
	}
}

// TestExportIDMistakes: --id "t1,t2" says to repeat --id (it said only 'no such item'), and
// the same item twice is named as such (it was 'arrays: two arrays are named "t1.kernels"').
// Each is a command-line mistake (exit 2), as an ID or name the session does not hold is,
// listing the items (it exited 1).
func TestExportIDMistakes(t *testing.T) {
	dir := t.TempDir()
	in := writeText(t, dir, "k.json", `{"kernels": [[1, 0.5, 0.25], [1, -0.5, 0.25]]}`)
	sess := filepath.Join(dir, "s.ssmlab")
	for _, name := range []string{"a", "b"} {
		if r := run(t, "", "import", in, "--name", name, "--session", sess); r.code != 0 {
			t.Fatal(r)
		}
	}
	out := filepath.Join(dir, "x.npz")
	if r := run(t, "", "export", sess, "--id", "t1,t2", "-o", out); r.code != ExitUsage || !strings.Contains(r.stderr, "--id t1 --id t2") {
		t.Errorf("--id t1,t2: %v", r)
	}
	if r := run(t, "", "export", sess, "--id", "c", "-o", out); r.code != ExitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, `--id "c" is no item's ID or name: the session holds t1 ("a"), t2 ("b")`) {
		t.Errorf("--id c: %v", r)
	}
	if r := run(t, "", "export", sess, "--id", "t1", "--id", "t1", "-o", out); r.code != ExitUsage || !strings.Contains(r.stderr, "name the same item") {
		t.Errorf("--id t1 --id t1: %v", r)
	}
}

// TestOutputsNamingOneFileRefused: two outputs of one command that name the same file are a
// command-line mistake (exit 2) named as convert names it, and nothing is written; distill
// and train wrote the report and then the filter over it, and exited 0.
func TestOutputsNamingOneFileRefused(t *testing.T) {
	dir := t.TempDir()
	in := writeDoc(t, dir, "in.json", filters.Document{Filter: testFilter(t)})
	same := filepath.Join(dir, "same.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", in, "--to", "tf", "-o", same, "--report", same}, "--report and -o both name " + same + ": the report would overwrite the filter"},
		{[]string{"distill", in, "--order", "2", "--length", "64", "-o", same, "--report", same}, "-o and --report both name " + same + ": the filter would overwrite the report"},
		{[]string{"distill", in, "--order", "2", "--length", "64", "-o", same, "--report", filepath.Join(dir, ".", "same.json")}, "-o and --report both name"},
		{[]string{"distill", in, "--orders", "1,2", "--length", "64", "-o", filepath.Join(dir, "f{n}.json"), "--report", filepath.Join(dir, "f2.json")}, "the filter of order 2 would overwrite the report"},
		{[]string{"train", "--task", "delay", "--order", "2", "-o", same, "--report", same}, "-o and --report both name"},
		{distillModelArgs(filepath.Join(dir, "m.pt"), "--work-dir", filepath.Join(dir, "m.pt")), "-o and --work-dir both name"},
		{distillModelArgs(filepath.Join(dir, "m.pt"), "--work-dir", filepath.Join(dir, "m.pt.manifest.json")), "its manifest would overwrite the work directory"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 saying %q; got %v", strings.Join(tc.args, " "), tc.want, r)
		}
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"in.json"}) {
		t.Errorf("left %v", names)
	}
}
