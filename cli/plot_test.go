package cli

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// plotFiles writes the files the plot tests draw: the order-3 test filter, its tf form, a
// bank of two channels, kernels, an unstable filter, and a small "distillation" (target
// kernels, a fitted bank and its report).
func plotFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	base := testFilter(t)
	writeDoc(t, dir, "f.json", filters.Document{Name: "toy", Filter: base})
	tf, _, err := filters.Convert(base, filters.FormTF)
	if err != nil {
		t.Fatal(err)
	}
	writeDoc(t, dir, "f-tf.json", filters.Document{Name: "toy tf", Filter: tf})
	a, err := filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := filters.NewTransferFunction([]float64{-0.9}, []float64{0.5}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	writeDoc(t, dir, "bank.json", filters.Document{Name: "bank", Bank: &filters.Bank{Channels: []filters.Filter{a, b}}})
	writeText(t, dir, "kernels.json", `{"name": "k", "kernels": [[1, 0.5, 0.25, 0.125, 0.0625], [0.1, 0.5, 0.45, 0.4, 0.36]]}`)
	writeText(t, dir, "unstable.json", `{"form": "tf", "a": [-1.5], "b": [1], "h0": 0}`)
	writeText(t, dir, "report.json", `{"model": "rtf", "order": 1, "steps": 10, "mean_rel_error": 0.03, "max_rel_error": 0.06,
"channels": [{"rel_error": 0.0625}, {"rel_error": 0.001}]}`)
	writeText(t, dir, "report3.json", `{"model": "rtf", "order": 1, "channels": [{}, {}, {}]}`)
	return dir
}

func TestPlotFormats(t *testing.T) {
	dir := plotFiles(t)
	f := filepath.Join(dir, "f.json")
	for _, c := range []struct {
		args  []string
		check func([]byte) bool
	}{
		{[]string{f, "--impulse", "-o", "imp.svg"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("<?xml")) }},
		{[]string{f, "--spectrum", "--log", "-o", "spec.pdf"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("%PDF-")) }},
		{[]string{f, "--group-delay", "--pz", "-o", "gd.png", "--dpi", "40"}, func(b []byte) bool { _, err := png.Decode(bytes.NewReader(b)); return err == nil }},
		{[]string{f, "--magnitude", "--phase", "--impulse", "--log", "-o", "three.SVG", "--width", "12cm", "--height", "4in"}, func(b []byte) bool {
			return bytes.Contains(b, []byte(`width="340.16pt" height="288pt"`))
		}},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			out := filepath.Join(dir, c.args[len(c.args)-1])
			for i, a := range c.args {
				if a == "-o" {
					c.args[i+1] = filepath.Join(dir, c.args[i+1])
					out = c.args[i+1]
				}
			}
			r := run(t, "", append([]string{"plot"}, c.args...)...)
			if r.code != 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, "wrote ") || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("%v", r)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(data) {
				t.Fatalf("%s is not as expected: %.100q", out, data)
			}
		})
	}
}

func TestPlotOverlayAndDeterminism(t *testing.T) {
	dir := plotFiles(t)
	out := filepath.Join(dir, "o.svg")
	args := []string{"plot", filepath.Join(dir, "f.json"), filepath.Join(dir, "f-tf.json"), filepath.Join(dir, "bank.json"),
		"--channel", "all", "--impulse", "--pz", "--label", "dense", "--label", "tf", "--label", "B", "-o", out}
	r := run(t, "", args...)
	if r.code != 0 || !strings.Contains(r.stderr, "2 panel(s), 4 series") {
		t.Fatalf("%v", r)
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, legend := range []string{">dense<", ">tf<", ">B, ch 0<", ">B, ch 1<", ">poles<", ">zeros<"} {
		if !bytes.Contains(first, []byte(legend)) {
			t.Errorf("the figure has no legend entry %s", legend)
		}
	}
	if r := run(t, "", args...); r.code != 0 {
		t.Fatalf("%v", r)
	}
	second, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Error("the same command wrote different files")
	}
}

func TestPlotKernelsAndStdin(t *testing.T) {
	dir := plotFiles(t)
	out := filepath.Join(dir, "k.svg")
	kernels, err := os.ReadFile(filepath.Join(dir, "kernels.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, string(kernels), "plot", "-", filepath.Join(dir, "bank.json"), "--channel", "1", "--impulse", "--spectrum", "--group-delay", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "4 panel(s), 2 series") {
		t.Fatalf("%v", r)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(">k, ch 1<")) || !bytes.Contains(data, []byte(">bank, ch 1<")) {
		t.Error("legend entries missing")
	}
}

func TestPlotDistillation(t *testing.T) {
	dir := plotFiles(t)
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, c := range []struct {
		name string
		args []string
	}{
		{"with report", []string{"--target", p("kernels.json"), "--result", p("bank.json"), "--report", p("report.json"), "-o", p("d.svg")}},
		{"without report", []string{"--target", p("kernels.json"), "--result", p("bank.json"), "-o", p("d.png"), "--dpi", "40"}},
		{"filter target", []string{"--target", p("bank.json"), "--result", p("bank.json"), "--length", "50", "-o", p("d2.svg")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", append([]string{"plot"}, c.args...)...)
			if r.code != 0 || !strings.Contains(r.stderr, "2 channel(s)") {
				t.Fatalf("%v", r)
			}
		})
	}
	data, err := os.ReadFile(p("d.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"rtf order 1 fitted to k: relative error mean 0.03, worst 0.06 (10 steps)", "channel 0: rel. error 0.062", "channel 1: rel. error 0.001"} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("the figure does not say %q", s)
		}
	}
}

func TestPlotErrors(t *testing.T) {
	dir := plotFiles(t)
	p := func(n string) string { return filepath.Join(dir, n) }
	f := p("f.json")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string // in the message
	}{
		{"no output", []string{f, "--impulse"}, ExitUsage, "-o OUT is required"},
		{"bad extension", []string{f, "--impulse", "-o", p("x.jpg")}, ExitUsage, `".jpg"`},
		{"no kind", []string{f, "-o", p("x.svg")}, ExitUsage, "say what to draw"},
		{"no file", []string{"--impulse", "-o", p("x.svg")}, ExitUsage, "at least one FILE"},
		{"labels", []string{f, f, "--impulse", "--label", "a", "-o", p("x.svg")}, ExitUsage, "--label given 1 time for 2 FILEs"},
		{"channel syntax", []string{f, "--impulse", "--channel", "x", "-o", p("x.svg")}, ExitUsage, "--channel"},
		// A channel named twice was drawn twice.
		{"channel twice", []string{f, "--impulse", "--channel", "0,0", "-o", p("x.svg")}, ExitUsage, `--channel "0,0" names channel 0 twice`},
		{"length", []string{f, "--impulse", "--length", "0", "-o", p("x.svg")}, ExitUsage, "--length 0"},
		{"width", []string{f, "--impulse", "--width", "1km", "-o", p("x.svg")}, ExitUsage, "--width"},
		{"pixels", []string{f, "--impulse", "--width", "20in", "--height", "20in", "--dpi", "1200", "-o", p("x.png")}, ExitUsage, "576000000 pixels, above the limit 50000000: lower --width, --height or --dpi"},
		{"two stdin", []string{"-", "-", "--impulse", "-o", p("x.svg")}, ExitUsage, "once"},
		{"target without result", []string{"--target", p("kernels.json"), "-o", p("x.svg")}, ExitUsage, "both --target"},
		{"kind with target", []string{"--target", f, "--result", f, "--pz", "-o", p("x.svg")}, ExitUsage, "do not apply"},
		// Flags a figure does not use were ignored without a word (exit 0, the same figure).
		{"freq with target", []string{"--target", f, "--result", f, "--freq", "10", "-o", p("x.svg")}, ExitUsage, "--freq does not apply to the distillation figure"},
		{"ladder channel", []string{"--ladder", f, "--channel", "1", "-o", p("x.svg")}, ExitUsage, "--channel does not apply to the ladder figure"},
		{"ladder label", []string{"--ladder", f, "--label", "a", "-o", p("x.svg")}, ExitUsage, "--label does not apply to the ladder figure"},
		{"ladder log", []string{"--ladder", f, "--log", "-o", p("x.svg")}, ExitUsage, "--log does not apply to the ladder figure"},
		{"ladder length", []string{"--ladder", f, "--length", "100", "-o", p("x.svg")}, ExitUsage, "--length does not apply to the ladder figure"},
		{"ladder freq", []string{"--ladder", f, "--freq", "10", "-o", p("x.svg")}, ExitUsage, "--freq does not apply to the ladder figure"},
		{"ladder columns", []string{"--ladder", f, "--columns", "2", "-o", p("x.svg")}, ExitUsage, "--columns does not apply to the ladder figure"},
		{"missing file", []string{p("nope.json"), "--impulse", "-o", p("x.svg")}, ExitFailure, p("nope.json")},
		{"channel range", []string{p("bank.json"), "--impulse", "--channel", "2", "-o", p("x.svg")}, ExitFailure, "bank.json: --channel 2: it has 2 channels"},
		{"kernels have no poles", []string{p("kernels.json"), "--pz", "-o", p("x.svg")}, ExitFailure, "kernels have no poles"},
		{"overflow", []string{f, p("unstable.json"), "--impulse", "--length", "5000", "-o", p("x.svg")}, ExitFailure, "unstable.json: unstable: impulse response"},
		{"result is kernels", []string{"--target", p("kernels.json"), "--result", p("kernels.json"), "-o", p("x.svg")}, ExitFailure, "holds kernels, not the fitted filters"},
		{"channel mismatch", []string{"--target", p("kernels.json"), "--result", f, "-o", p("x.svg")}, ExitFailure, "not a target and its fit"},
		{"report mismatch", []string{"--target", p("kernels.json"), "--result", p("bank.json"), "--report", p("report3.json"), "-o", p("x.svg")}, ExitFailure, "reports 3 channel(s)"},
		{"bad report", []string{"--target", p("kernels.json"), "--result", p("bank.json"), "--report", f, "-o", p("x.svg")}, ExitFailure, "not a distill report"},
		{"unwritable", []string{f, "--impulse", "-o", p("no/such/dir/x.svg")}, ExitFailure, "x.svg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", append([]string{"plot"}, c.args...)...)
			if r.code != c.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "ssmlab: ") || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("want exit %d and one line with %q; got %v", c.code, c.want, r)
			}
			if _, err := os.Stat(p("x.svg")); err == nil {
				t.Fatal("a failed plot wrote its output")
			}
		})
	}
}

// TestReportsReadStrictly: plot's --ladder and --report, and train's --data, read their
// JSON strictly and name a filter file given in their place; --ladder said "not a distill
// --orders ladder: 0 orders, 0 reports", --report read a bank's channels as reports of
// nothing, and --data said `json: unknown field "name"`.
func TestReportsReadStrictly(t *testing.T) {
	dir := t.TempDir()
	bank := writeDoc(t, dir, "bank.json", filters.Document{Bank: &filters.Bank{Channels: []filters.Filter{testFilter(t), testFilter(t)}}})
	svg := filepath.Join(dir, "x.svg")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plot", "--ladder", bank, "-o", svg}, bank + " is a filter file, not a distill --orders ladder"},
		{[]string{"plot", "--target", bank, "--result", bank, "--report", bank, "-o", svg}, bank + " is a filter file, not a distill report"},
		{[]string{"train", "--task", "sysid", "--data", bank}, bank + ` is a filter file, not input/output data, {"u": [...], "y": [...]}`},
		{[]string{"plot", "--ladder", writeText(t, dir, "extra.json", `{"orders": [4], "reports": [], "bounds": []}`), "-o", svg}, `extra.json: not a distill --orders ladder: unknown key "bounds"`},
	} {
		oneErrorLine(t, run(t, "", tc.args...), ExitFailure, tc.want)
	}
}
