package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ssmlab/ssmlab/internal/tmuxtest"
)

// TestTmuxDistillModelProgress runs the real binary's whole-model distillation in a terminal
// (a detached tmux session): it draws an overall bar with the ETA while it works, keeps one
// line per layer, and leaves no bar behind. tmux's pipe-pane records what it wrote. It skips
// when tmux is not installed.
func TestTmuxDistillModelProgress(t *testing.T) {
	srv := tmuxtest.Start(t, "..")
	dir, bin, tm := srv.Dir, srv.Bin, srv.Run
	session := fmt.Sprintf("ssmlab-model-%d", os.Getpid())
	start := srv.Command("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "160", "-y", "40", "-c", dir, "sh")
	start.Env = append(os.Environ(), "TERM=xterm-256color", "HOME="+dir, "PS1=$ ")
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
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
