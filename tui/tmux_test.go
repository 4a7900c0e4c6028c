package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTmux runs the real binary in a detached tmux session (a real terminal: alt screen, raw
// mode, resizing), sends keys and checks the captured screen. It covers what the model tests
// cannot: main's dispatch to the workbench, the terminal path and the real presets and job
// backend. It skips when tmux is not installed (apt-get install tmux) and under -short.
func TestTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ssmlab")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// a private server (-S), so the test neither sees nor disturbs the user's sessions
	sock := filepath.Join(dir, "tmux.sock")
	session := fmt.Sprintf("ssmlab-%d", os.Getpid())
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tmux, append([]string{"-S", sock}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	env := []string{"TERM=xterm-256color", "NO_COLOR=", "HOME=" + dir}
	start := exec.Command(tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", dir, bin)
	start.Env = append(os.Environ(), env...)
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })

	capture := func() string { return run("capture-pane", "-p", "-t", session) }
	// wait polls the screen until it shows every text, up to a deadline.
	wait := func(texts ...string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		poll := 10 * time.Millisecond
		for {
			s := capture()
			ok := true
			for _, x := range texts {
				ok = ok && strings.Contains(s, x)
			}
			if ok {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q; last screen:\n%s", texts, s)
			}
			time.Sleep(poll)
			poll = min(2*poll, 200*time.Millisecond)
		}
	}
	keys := func(ks ...string) { run(append([]string{"send-keys", "-t", session}, ks...)...) }
	literal := func(s string) { run("send-keys", "-t", session, "-l", s) }

	// the workbench opens with its panes
	wait("filters (0)", "plots", "jobs", "welcome to ssmlab")

	// a Butterworth filter from the real presets, through the command palette
	keys(":")
	wait("enter run")
	literal("preset butter order=4")
	keys("Enter")
	s := wait("added butter4", "butter4", "zpk 4", "impulse", "magnitude", "pole-zero")
	if !strings.Contains(s, "✓") {
		t.Errorf("no stability mark:\n%s", s)
	}

	// the representation in tf, with the conversion report, then converted
	keys("Tab", "5")
	wait("zpk → tf: rel error", "condition")
	keys("c")
	wait("converted zpk → tf")

	// nudge a pole: converts back to zpk first, then moves it
	keys("Tab", "Right")
	wait("converted tf → zpk")
	keys("n", "Up")
	wait("pole →")

	// distil it into a lower-order RTF as a background job, with the real CPU backend
	keys("D")
	wait("distil the impulse response of butter4")
	keys("Down", "C-u")
	literal("2")
	keys("Down", "Down", "C-u")
	literal("300")
	keys("Enter")
	wait("done: added butter4~rtf2")

	// a smaller window degrades to fewer panes
	run("resize-window", "-t", session, "-x", "80", "-y", "24")
	wait("tab: repr")

	// quit, discarding the unsaved filters
	keys("q")
	wait("quit ssmlab?")
	keys("d")
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command(tmux, "-S", sock, "has-session", "-t", session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("ssmlab did not exit; screen:\n%s", capture())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
