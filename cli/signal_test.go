package cli

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSignalsCancelDistill sends SIGINT, SIGTERM and SIGHUP to ssmlab distill at three moments:
// while it reads its target (stdin, held open), once it has printed the suggested order, and
// once training reports progress. Each must end it with "cancelled; nothing was written" and
// the status 128 + the signal's number, writing no file. Before, a signal in the first
// seconds (reading, the order suggestion) killed it without a word, and later ones exited 1.
func TestSignalsCancelDistill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "resonator.json")
	if r := run(t, "", "preset", "resonator", "-o", target); r.code != 0 {
		t.Fatal(r)
	}
	// A target larger than a pipe's buffer, so that the test knows ssmlab is reading it.
	big := run(t, "", "preset", "hippo-legs", "order=128")
	if big.code != 0 || len(big.stdout) < 2<<16 {
		t.Fatalf("preset: exit %d, %d bytes", big.code, len(big.stdout))
	}
	for _, moment := range []string{"reading", "suggested order", "step "} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			t.Run(moment+" "+sig.String(), func(t *testing.T) {
				out := filepath.Join(dir, "out.json")
				src := target
				if moment == "reading" {
					src = "-"
				}
				// The zeros init trains with the optimiser for --steps (the default hankel init's
				// variable projection would be done before the signal).
				cmd := exec.Command(self(), "distill", src, "--order", "4", "--init", "zeros", "--steps", "1000000", "-o", out, "--report", out+".report")
				cmd.Env = append(os.Environ(), asCLIEnv+"=1")
				cmd.Dir = dir
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				defer stdin.Close()
				stderr, err := cmd.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				lines := bufio.NewReader(stderr)
				var said strings.Builder
				if moment == "reading" {
					// Once all but the last byte went into the pipe, ssmlab has read
					// more than the pipe holds: it is reading, and waits for the rest.
					if _, err := io.WriteString(stdin, big.stdout[:len(big.stdout)-1]); err != nil {
						t.Fatal(err)
					}
				} else {
					for {
						line, err := lines.ReadString('\n')
						said.WriteString(line)
						if err != nil {
							t.Fatalf("distill ended before %q: %s", moment, said.String())
						}
						if strings.HasPrefix(line, moment) {
							break
						}
					}
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				rest, _ := io.ReadAll(lines)
				said.Write(rest)
				err = cmd.Wait()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != ExitSignal+int(sig) {
					t.Errorf("exit: %v, want status %d", err, ExitSignal+int(sig))
				}
				if msg := said.String(); !strings.HasSuffix(msg, "ssmlab: cancelled; nothing was written\n") {
					t.Errorf("stderr: %q", msg)
				}
				for _, p := range []string{out, out + ".report"} {
					if _, err := os.Stat(p); !os.IsNotExist(err) {
						t.Errorf("%s was written", filepath.Base(p))
						os.Remove(p)
					}
				}
			})
		}
	}
}

// TestGateWhile: a write that keeps work (gatedStore's saves) runs while no signal has closed
// the gate, a signal that comes meanwhile waits for it to end, and once the gate is closed
// nothing more is written. Before, the work directory's saves went past the gate: a unit
// finished as Ctrl-C came was written after "k of N units are kept" was printed.
func TestGateWhile(t *testing.T) {
	g := new(outputGate)
	if err := g.while(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		wrote <- g.while(func() error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	closed := make(chan bool, 1)
	go func() { closed <- g.close() }()
	select {
	case <-closed:
		t.Fatal("the signal closed the gate during a save")
	default:
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !<-closed {
		t.Fatal("a save opened the gate for results")
	}
	ran := false
	if err := g.while(func() error { ran = true; return nil }); !errors.Is(err, errCancelled) || ran {
		t.Errorf("after the signal: ran %v, err %v", ran, err)
	}
}
