package cli

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// guidePath is docs/guide.md, seen from this package's directory.
const guidePath = "../docs/guide.md"

// TestGuide runs the commands of docs/guide.md's sh and console blocks in order, in one empty
// directory, as the guide says they run: each ssmlab command in this process, any other (the
// here-document of the first file) with bash, each exiting 0 and writing valid files. A block
// marked "<!-- docs test: skip: REASON -->" is not run and is listed with the reason (the
// install, the benchmark, and a model checkpoint's distillation, which needs a checkpoint).
// The guide's claim that its examples make their own files was untested: two needed a
// checkpoint that no example writes.
func TestGuide(t *testing.T) {
	doc, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	steps := docSteps(string(doc))
	if len(steps) < 15 {
		t.Fatalf("found %d commands in %s's sh and console blocks", len(steps), guidePath)
	}
	bash, bashErr := exec.LookPath("bash")
	t.Chdir(t.TempDir())
	comment := regexp.MustCompile(`\s#.*$`)
	var notRun []string
	for _, s := range steps {
		cmdLine, _, _ := strings.Cut(s.cmd, "\n")
		where := fmt.Sprintf("%s:%d: %s", guidePath, s.line, cmdLine)
		if s.mark.reason != "" {
			notRun = append(notRun, where+"  ("+s.mark.reason+")")
			continue
		}
		rest, ok := strings.CutPrefix(s.cmd, "ssmlab ")
		if !ok {
			if bashErr != nil {
				t.Skipf("%s: bash is not installed", where)
			}
			if out, err := exec.Command(bash, "-o", "pipefail", "-c", s.cmd).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", where, err, out)
			}
			continue
		}
		args, err := shellWords(strings.TrimSpace(comment.ReplaceAllString(rest, "")))
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if r := run(t, "", args...); r.code != 0 {
			t.Fatalf("%s: %v", where, r)
		}
		for _, out := range outputsOf(args) {
			checkOutput(t, where, out)
		}
	}
	t.Logf("%d guide commands ran; not run:\n%s", len(steps)-len(notRun), strings.Join(notRun, "\n"))
}
