package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTmuxDistillModelProgress runs the real binary's whole-model distillation in a terminal
// (a detached tmux session): it draws an overall bar with the ETA while it works, keeps one
// line per layer, and leaves no bar behind. tmux's pipe-pane records what it wrote. It skips
// when tmux is not installed.
func TestTmuxDistillModelProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ssmlab")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "tmux.sock")
	session := fmt.Sprintf("ssmlab-model-%d", os.Getpid())
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start := exec.Command(tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "160", "-y", "40", "-c", dir, "sh")
	start.Env = append(os.Environ(), "TERM=xterm-256color", "HOME="+dir, "PS1=$ ")
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	raw := filepath.Join(dir, "raw.log")
	tm("pipe-pane", "-t", session, "-o", "cat >> "+raw)
	out := filepath.Join(dir, "out.safetensors")
	args := append(append([]string{bin, "distill", modelCkpt}, modelRecipe...), "-o", out)
	tm("send-keys", "-t", session, "-l", strings.Join(args, " ")+"; echo EXIT=$?")
	tm("send-keys", "-t", session, "Enter")
	deadline := time.Now().Add(2 * time.Minute)
	var screen string
	for poll := 10 * time.Millisecond; ; poll = min(2*poll, 200*time.Millisecond) {
		screen = tm("capture-pane", "-p", "-J", "-t", session)
		if regexp.MustCompile(`EXIT=[0-9]`).MatchString(screen) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("distill did not finish; the screen:\n%s", screen)
		}
		time.Sleep(poll)
	}
	if !strings.Contains(screen, "EXIT=0") || strings.Count(screen, "\nlayer backbone.layers.") != 3 || !strings.Contains(screen, "wrote "+out) {
		t.Fatalf("the screen:\n%s", screen)
	}
	if strings.Contains(screen, "[#") || strings.Contains(screen, "unit 1/6") {
		t.Errorf("a bar or a plain unit line is left on a terminal:\n%s", screen)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "units  backbone.layers.") || !strings.Contains(string(data), "ETA ") || !strings.Contains(string(data), "] 100%") {
		t.Errorf("no overall bar was drawn; the terminal got:\n%q", data)
	}
}
