// Package tmuxtest runs the ssmlab binary on a private tmux server, for the tests that need a
// real terminal (the workbench; progress bars drawn on a tty). It is for tests only.
package tmuxtest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Server is a private tmux server (-S), so that a test neither sees nor disturbs the user's
// sessions, in a temporary directory Dir that holds the binary Bin.
type Server struct {
	t        testing.TB
	tmux     string
	Dir, Bin string
	Sock     string
}

// Start builds the binary from the main package at main (".." from cli or tui) into a
// temporary directory and returns the server there, killed when the test ends. It skips under
// -short and when tmux is not installed (apt-get install tmux).
func Start(t testing.TB, main string) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	s := &Server{t: t, tmux: tmux, Dir: dir, Bin: filepath.Join(dir, "ssmlab"), Sock: filepath.Join(dir, "tmux.sock")}
	if out, err := exec.Command("go", "build", "-o", s.Bin, main).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = s.Command("kill-server").Run() })
	return s
}

// Command returns the command tmux args on the server.
func (s *Server) Command(args ...string) *exec.Cmd {
	return exec.Command(s.tmux, append([]string{"-S", s.Sock}, args...)...)
}

// Run runs tmux args on the server and returns what it printed; it fails the test when tmux
// fails.
func (s *Server) Run(args ...string) string {
	s.t.Helper()
	out, err := s.Command(args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
