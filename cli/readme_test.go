package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	readmePath = "../README.md"
	// readmeStepTimeout bounds one README command (go build of a fresh copy on a loaded
	// 2-core machine takes about 15 s).
	readmeStepTimeout = 5 * time.Minute
)

// exitStatusRE reads the exit status a README command is shown to end with, from its
// comment: "# exit status 1".
var exitStatusRE = regexp.MustCompile(`#\s*exit status (\d+)\s*$`)

// TestReadme runs the commands of the README's sh and console blocks in order, each with
// bash (-o pipefail) as a user would type it, in a copy of the checkout's files (tracked
// and new ones, not ignored ones: what a clean clone holds), and checks that each exits 0,
// or with the status its "# exit status N" comment gives, writes valid files (as
// TestTutorial checks them), and prints the lines its console block shows under it (see
// consoleDiff). A block marked on the line before its fence with
// "<!-- docs test: skip: REASON -->" is not run, and is listed with the reason in the
// test's log: the first block (go run . opens the workbench in a terminal, which the tmux
// tests drive; go test ./... is the run this test belongs to). One marked "skip unless
// ENV" runs only with ENV set: the GPU machine's block, SSMLAB_README_GPU=1. The README's
// own go build makes the binary, so the test skips under -short; it takes about 20 s.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	doc, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	steps := docSteps(string(doc))
	if len(steps) < 20 {
		t.Fatalf("found %d commands in %s's sh and console blocks", len(steps), readmePath)
	}
	root := cleanCopy(t, "..")
	var notRun []string
	for _, s := range steps {
		cmdLine, _, _ := strings.Cut(s.cmd, "\n")
		where := fmt.Sprintf("README.md:%d: %s", s.line, cmdLine)
		if m := s.mark; m.reason != "" && (m.unless == "" || os.Getenv(m.unless) == "") {
			notRun = append(notRun, where+"  ("+m.reason+")")
			continue
		}
		want := 0
		if m := exitStatusRE.FindStringSubmatch(cmdLine); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		ctx, cancel := context.WithTimeout(context.Background(), readmeStepTimeout)
		cmd := exec.CommandContext(ctx, bash, "-o", "pipefail", "-c", s.cmd)
		cmd.Dir = root
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		code := 0
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatalf("%s: %v", where, err)
		}
		if code != want {
			t.Fatalf("%s: exit status %d, want %d\nstdout: %s\nstderr: %s", where, code, want, stdout.String(), stderr.String())
		}
		// The files a plain ssmlab command writes (one a shell need not split).
		if args, ok := strings.CutPrefix(cmdLine, "./ssmlab "); ok && code == 0 {
			if words, err := shellWords(strings.TrimSpace(regexp.MustCompile(`\s#.*$`).ReplaceAllString(args, ""))); err == nil {
				for _, out := range outputsOf(words) {
					checkOutput(t, where, filepath.Join(root, out))
				}
			}
		}
		if len(s.want) > 0 {
			if msg := consoleDiff(s.want, stderr.String()+stdout.String()); msg != "" {
				t.Errorf("%s: %s", where, msg)
			}
		}
	}
	t.Logf("%d README commands ran; not run:\n%s", len(steps)-len(notRun), strings.Join(notRun, "\n"))
}

// cleanCopy copies the files of the checkout at dir that git tracks, and the new ones it
// does not ignore, into a temporary directory: what a clean clone with the working tree's
// changes holds. It skips the test outside a git checkout.
func cleanCopy(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	root := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(dir, name)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, dst)
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
