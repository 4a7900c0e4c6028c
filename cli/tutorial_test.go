package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// updateDocs rewrites docs/img/ from the figures the tutorial makes:
// go test ./cli -run Tutorial -update-docs. Look at the pictures before committing them.
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/img/ from the tutorial's figures")

// tutorialPath is docs/tutorial.md, seen from this package's directory.
const tutorialPath = "../docs/tutorial.md"

// Pixel tolerances of the docs' PNG figures against a fresh rendering (as in
// analysis/figures: anti-aliasing may round differently across platforms).
const (
	docPNGTol  = 8
	docPNGFrac = 0.002
)

// tutorialStep is one "$ ssmlab …" line of a console block.
type tutorialStep struct {
	line int
	args []string // without "ssmlab"
	want []string // the output lines the block shows under it
}

// tutorialSteps returns the ssmlab commands of the console blocks of a Markdown document, in
// order.
func tutorialSteps(t *testing.T, doc string) []tutorialStep {
	t.Helper()
	var steps []tutorialStep
	for _, s := range docSteps(doc) {
		cmd, ok := strings.CutPrefix(s.cmd, "ssmlab ")
		if !s.console || !ok {
			continue
		}
		words, err := shellWords(cmd)
		if err != nil {
			t.Fatalf("%s:%d: %v", tutorialPath, s.line, err)
		}
		steps = append(steps, tutorialStep{line: s.line, args: words, want: s.want})
	}
	return steps
}

// docStep is one command of a Markdown document: a "$ " line of a console block, with the
// output lines the block shows under it, or a command line of a sh block. A here-document's
// lines belong to its command.
type docStep struct {
	line    int
	cmd     string   // as written, without the "$ "
	console bool     // from a console block
	want    []string // the output lines a console block shows under it
	mark    docMark  // the block's mark, if any
}

// docMark is a block's mark, on the line just before its fence, for the docs tests:
// "<!-- docs test: skip: REASON -->" (not run, and listed with the reason) or
// "<!-- docs test: skip unless ENV: REASON -->" (run only when the environment variable ENV
// is set).
type docMark struct {
	unless string // the variable that has the block run
	reason string
}

var (
	docMarkRE = regexp.MustCompile(`^<!-- docs test: skip(?: unless ([A-Z0-9_]+))?: (.+) -->$`)
	// hereDocRE finds a here-document's delimiter: <<EOF, <<'EOF', <<-"EOF".
	hereDocRE = regexp.MustCompile(`<<-?\s*['"]?(\w+)['"]?`)
)

// docSteps returns the commands of the console and sh blocks of a Markdown document, in order.
func docSteps(doc string) []docStep {
	var steps []docStep
	block, prev := "", "" // the open block's kind ("" outside one), the previous line
	start := 0            // the line of the open block's fence
	var mark docMark
	hereDoc := "" // the delimiter of the here-document being read
	add := func(s docStep) {
		s.mark = mark
		steps = append(steps, s)
		if m := hereDocRE.FindStringSubmatch(s.cmd); m != nil {
			hereDoc = m[1]
		}
	}
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case hereDoc != "":
			steps[len(steps)-1].cmd += "\n" + line
			if trimmed == hereDoc {
				hereDoc = ""
			}
		case strings.HasPrefix(line, "```") && block != "":
			block = ""
		case strings.HasPrefix(line, "```"):
			block, start = strings.Fields(strings.TrimPrefix(line, "```") + " none")[0], i+1
			mark = docMark{}
			if m := docMarkRE.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				mark = docMark{unless: m[1], reason: m[2]}
			}
		case block == "console" && strings.HasPrefix(line, "$ "):
			add(docStep{line: i + 1, cmd: strings.TrimPrefix(line, "$ "), console: true})
		case block == "console" && len(steps) > 0 && steps[len(steps)-1].line > start:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		case block == "sh" && trimmed != "" && !strings.HasPrefix(trimmed, "#"):
			add(docStep{line: i + 1, cmd: line})
		}
		prev = line
	}
	return steps
}

// shellWords splits a command line as a POSIX shell would for the plain commands the
// tutorial may use: words, single and double quotes, backslash escapes. Pipes,
// redirections, substitutions and variables are refused: every step must run as written
// without a shell.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			if q := s[i+1 : i+1+j]; strings.ContainsAny(q, "$`\\") {
				return nil, fmt.Errorf("expansions in double quotes are not supported: %q", s)
			} else {
				w.WriteString(q)
			}
			i += j + 1
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case strings.IndexByte("|&;<>()$`*?[#~", c) >= 0:
			return nil, fmt.Errorf("%q: the tutorial's commands must run without a shell (no %q)", s, c)
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// outputsOf returns the files a command writes: the values of -o/--output, --report and
// --session.
func outputsOf(args []string) []string {
	var out []string
	var orders []string // distill --orders: -o NAME{n} is one file per order
	for i, a := range args {
		if a == "--orders" && i+1 < len(args) {
			orders = strings.Split(args[i+1], ",")
		}
	}
	for i, a := range args {
		for _, f := range []string{"-o", "--output", "--report", "--session"} {
			var path string
			switch {
			case a == f && i+1 < len(args):
				path = args[i+1]
			case strings.HasPrefix(a, f+"=") && f != "-o":
				path = strings.TrimPrefix(a, f+"=")
			default:
				continue
			}
			if !strings.Contains(path, "{n}") {
				out = append(out, path)
			}
			for _, n := range orders {
				out = append(out, strings.ReplaceAll(path, "{n}", n))
			}
		}
	}
	return out
}

// checkOutput checks that a file written by a tutorial step exists and is what its extension
// says.
func checkOutput(t *testing.T, where, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if len(data) == 0 {
		t.Fatalf("%s: %s is empty", where, path)
	}
	bad := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s: %s", where, path, fmt.Sprintf(format, args...))
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		if _, err := readDoc(path); err == nil {
			return
		}
		if _, err := sessions.UnmarshalTarget(data); err == nil {
			return
		}
		var rep train.Report
		if json.Unmarshal(data, &rep) == nil && len(rep.Channels) > 0 && rep.Model != "" {
			return
		}
		var ladder ladderReport
		if json.Unmarshal(data, &ladder) == nil && len(ladder.Orders) > 0 && len(ladder.Reports) == len(ladder.Orders) {
			return
		}
		var conv filters.Report // convert --report: one report, or a bank's {"channels": [...]}
		var bank struct{ Channels []filters.Report }
		if json.Unmarshal(data, &conv) == nil && conv.From != "" && conv.To != "" && conv.Length > 0 ||
			json.Unmarshal(data, &bank) == nil && len(bank.Channels) > 0 && bank.Channels[0].Length > 0 {
			return
		}
		bad("neither a filter file, a target file, a distill report, a ladder nor a conversion report")
	case ".svg":
		if !(bytes.HasPrefix(data, []byte("<?xml")) || bytes.HasPrefix(data, []byte("<svg"))) || !bytes.Contains(data, []byte("</svg>")) {
			bad("not an SVG file")
		}
	case ".png":
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			bad("not a PNG file: %v", err)
		}
	case ".pdf":
		if !bytes.HasPrefix(data, []byte("%PDF-")) {
			bad("not a PDF file")
		}
	case ".ssmlab":
		if _, err := sessions.Load(path); err != nil {
			bad("%v", err)
		}
	case ".npz", ".npy", ".safetensors", ".csv", ".pt":
		// every layer of a checkpoint that holds several (a whole model distilled)
		tensors := []string{""}
		if l, err := sessions.ListFile(path); err == nil && len(l.Layers) > 1 {
			tensors = tensors[:0]
			for _, layer := range l.Layers {
				tensors = append(tensors, layer.Prefix)
			}
		}
		for _, tensor := range tensors {
			if _, err := sessions.Import(path, sessions.ImportOptions{Tensor: tensor}); err != nil {
				bad("%v", err)
			}
		}
	}
}

// TestTutorial runs every command of docs/tutorial.md in order, in one empty directory,
// checks that each succeeds, prints what the tutorial shows under it (times and progress
// aside) and writes valid files, and that the figures in docs/img are the ones the tutorial
// makes now (-update-docs rewrites them; the printed lines are edited by hand).
func TestTutorial(t *testing.T) {
	doc, err := os.ReadFile(tutorialPath)
	if err != nil {
		t.Fatal(err)
	}
	steps := tutorialSteps(t, string(doc))
	if len(steps) < 10 {
		t.Fatalf("found %d ssmlab commands in %s; the console blocks must hold them as \"$ ssmlab …\" lines", len(steps), tutorialPath)
	}
	imgDir, err := filepath.Abs("../docs/img")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work)
	var skipped []string
	for _, s := range steps {
		where := fmt.Sprintf("%s:%d: ssmlab %s", tutorialPath, s.line, strings.Join(s.args, " "))
		if !IsCommand(s.args[0]) {
			// Steps for commands still being built are skipped (with the test), not failed, so
			// that the tutorial can be written ahead of them.
			skipped = append(skipped, where)
			continue
		}
		r := run(t, "", s.args...)
		if r.code != 0 {
			t.Fatalf("%s: %v", where, r)
		}
		for _, out := range outputsOf(s.args) {
			checkOutput(t, where, out)
		}
		if msg := consoleDiff(s.want, r.stderr+r.stdout); msg != "" {
			t.Errorf("%s: %s", where, msg)
		}
	}
	checkDocImages(t, imgDir, work)
	if len(skipped) > 0 {
		t.Skipf("%d tutorial step(s) need commands this build lacks:\n%s", len(skipped), strings.Join(skipped, "\n"))
	}
}

// durationRE matches a printed duration (0.19s, 22ms): times depend on the machine.
var durationRE = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)

// consoleLines normalises a command's console output for comparison with the tutorial's:
// progress lines ("step k/N …", whose number depends on the machine's speed) and the "…"
// that stands for them are dropped, durations are masked, and the lines are sorted (stdout
// and stderr interleave on a terminal but are captured apart here).
func consoleLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" || l == "…" || strings.HasPrefix(l, "step ") {
			continue
		}
		out = append(out, durationRE.ReplaceAllString(l, "<time>"))
	}
	slices.Sort(out)
	return out
}

// consoleDiff compares what a command printed with the lines a document shows under it, as
// consoleLines normalises both, and says how they differ ("" when they agree). A "…" within a
// shown line stands for any text; a shown line that is only "…" stands for printed lines left
// out (progress, or lines the document does not show), so that the shown lines need only be
// among the printed ones. Otherwise the printed lines must be the shown ones.
func consoleDiff(shown []string, printed string) string {
	want, got := consoleLines(shown), consoleLines(strings.Split(printed, "\n"))
	elided := slices.ContainsFunc(shown, func(l string) bool { return strings.TrimSpace(l) == "…" })
	// Exact lines first, so that a pattern does not take the line an exact one needs.
	used := make([]bool, len(got))
	var missing []string
	for _, exact := range []bool{true, false} {
		for _, w := range want {
			if strings.Contains(w, "…") == exact {
				continue
			}
			re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(w), "…", ".*") + "$")
			i := 0
			for i < len(got) && (used[i] || !re.MatchString(got[i])) {
				i++
			}
			if i == len(got) {
				missing = append(missing, w)
				continue
			}
			used[i] = true
		}
	}
	var extra []string
	for i, g := range got {
		if !used[i] {
			extra = append(extra, g)
		}
	}
	if len(missing) == 0 && (elided || len(extra) == 0) {
		return ""
	}
	return fmt.Sprintf("the document shows (sorted, progress and times left out)\n  %s\nbut the command prints\n  %s",
		strings.Join(want, "\n  "), strings.Join(got, "\n  "))
}

// checkDocImages compares every figure in docs/img with the tutorial's file of the same name,
// and checks that the Markdown files of docs/ refer only to figures that exist.
func checkDocImages(t *testing.T, imgDir, work string) {
	t.Helper()
	entries, err := os.ReadDir(imgDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
	}
	if *updateDocs {
		// The figures the docs refer to and those already in docs/img are rewritten from the
		// tutorial's files of the same names.
		if err := os.MkdirAll(imgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		names := referencedImages(t, filepath.Dir(imgDir))
		for name := range have {
			names = append(names, name)
		}
		for _, name := range names {
			data, err := os.ReadFile(filepath.Join(work, name))
			if err != nil {
				t.Fatalf("docs refer to img/%s, which the tutorial does not make", name)
			}
			if err := os.WriteFile(filepath.Join(imgDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			have[name] = true
		}
	}
	for name := range have {
		want, err := os.ReadFile(filepath.Join(imgDir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			t.Errorf("docs/img/%s was not made by the tutorial: every figure in the docs must come from a command in docs/tutorial.md", name)
			continue
		}
		if !sameFigure(t, name, got, want) {
			t.Errorf("docs/img/%s differs from what the tutorial's command makes now; run go test ./cli -run Tutorial -update-docs and look at the new picture", name)
		}
	}
	for _, name := range referencedImages(t, filepath.Dir(imgDir)) {
		if !have[name] {
			t.Errorf("the docs refer to img/%s, which docs/img lacks (go test ./cli -run Tutorial -update-docs creates it)", name)
		}
	}
}

// referencedImages lists the figures the Markdown files of docs (img/NAME) and the README
// (docs/img/NAME) refer to.
func referencedImages(t *testing.T, docs string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(docs, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(docs, "..", "README.md"))
	re := regexp.MustCompile(`(?:\]\(|src=")(?:\./)?(?:docs/)?img/([^)"\s]+)`)
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

// sameFigure compares SVG and other text exactly and PNG files by decoded pixels.
func sameFigure(t *testing.T, name string, got, want []byte) bool {
	t.Helper()
	if !strings.EqualFold(filepath.Ext(name), ".png") {
		return bytes.Equal(got, want)
	}
	g, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatalf("docs/img/%s: %v", name, err)
	}
	if g.Bounds() != w.Bounds() {
		return false
	}
	bad, b := 0, g.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, a1 := g.At(x, y).RGBA()
			r2, g2, b2, a2 := w.At(x, y).RGBA()
			for _, d := range []int{int(r1>>8) - int(r2>>8), int(g1>>8) - int(g2>>8), int(b1>>8) - int(b2>>8), int(a1>>8) - int(a2>>8)} {
				if d > docPNGTol || d < -docPNGTol {
					bad++
					break
				}
			}
		}
	}
	return float64(bad) <= docPNGFrac*float64(b.Dx()*b.Dy())
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string]string{
		`plot a.json --title 'two words' -o x.svg`: "plot|a.json|--title|two words|-o|x.svg",
		`import f.npy --name "hyena L3"`:           "import|f.npy|--name|hyena L3",
		`a\ b c`:                                   "a b|c",
	} {
		got, err := shellWords(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("shellWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"analyze x | jq .", "convert x > y", "preset $NAME", `a "b`} {
		if _, err := shellWords(in); err == nil {
			t.Errorf("shellWords(%q) accepted a shell construct", in)
		}
	}
	if got := outputsOf([]string{"distill", "h.json", "-o", "r.json", "--report=rep.json", "--session", "s.ssmlab"}); strings.Join(got, " ") != "r.json rep.json s.ssmlab" {
		t.Errorf("outputsOf: %q", got)
	}
}
