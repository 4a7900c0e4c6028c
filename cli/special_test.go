package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssmlab/ssmlab/sessions"
)

// TestSpecialFilesRefusedAtOnce: a named pipe given as FILE, or linked from a session, made
// session info, export, import, analyze and distill wait forever for a writer; /dev/zero as a
// session was read to the 256 MiB limit. Each is now refused at once. (Real processes, each
// with a generous deadline, so that a regression fails instead of hanging the test run.)
func TestSpecialFilesRefusedAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "k.npy")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	s := sessions.New()
	if _, err := s.AddTarget(sessions.Target{Name: "k", Source: &sessions.Source{Path: "k.npy"}, Linked: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(filepath.Join(dir, "linked.ssmlab")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"session", "info", "k.npy"}, "named pipe"},
		{[]string{"export", "k.npy", "-o", "out.npz"}, "named pipe"},
		{[]string{"import", "k.npy"}, "named pipe"},
		{[]string{"analyze", "k.npy"}, "named pipe"},
		{[]string{"convert", "k.npy", "--to", "tf"}, "named pipe"},
		{[]string{"distill", "k.npy", "--order", "2"}, "named pipe"},
		{[]string{"session", "info", "/dev/zero"}, "a device"},
		{[]string{"session", "info", "linked.ssmlab"}, "named pipe"},
		{[]string{"export", "linked.ssmlab", "-o", "out.npz"}, "named pipe"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd, stdout, stderr := process(dir, tc.args...)
		done := make(chan error, 1)
		go func() { done <- cmd.Run() }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
			t.Errorf("%v: still running after a minute", tc.args)
			cancel()
			continue
		}
		cancel()
		out := stdout.String()
		if tc.args[0] == "session" && strings.HasSuffix(tc.args[2], ".ssmlab") {
			// session info lists the target with its problem and succeeds.
			if err != nil || !strings.Contains(out, tc.want) {
				t.Errorf("%v: %v, stdout %q, stderr %q", tc.args, err, out, stderr)
			}
			continue
		}
		if err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: %v, stderr %q", tc.args, err, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.npz")); err == nil {
		t.Error("an export wrote out.npz")
	}
}

// TestLinkedOutsideNeedsAllowing: a session's linked source outside its directory is not read
// unless --allow-outside.
func TestLinkedOutsideNeedsAllowing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "s")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeText(t, root, "secret.csv", "1,2,3\n")
	s := sessions.New()
	if _, err := s.AddTarget(sessions.Target{Name: "k", Source: &sessions.Source{Path: "../secret.csv"}, Linked: true}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "w.ssmlab")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "session", "info", path)
	if r.code != 0 || !strings.Contains(r.stdout, "outside the session's directory") {
		t.Errorf("without --allow-outside: %v", r)
	}
	if r := run(t, "", "export", path, "-o", filepath.Join(root, "k.csv")); r.code != ExitFailure || !strings.Contains(r.stderr, "outside the session's directory") {
		t.Errorf("export without --allow-outside: %v", r)
	}
	r = run(t, "", "session", "info", path, "--allow-outside")
	if r.code != 0 || strings.Contains(r.stdout, "outside") || !strings.Contains(r.stdout, "1 kernel of length 3") {
		t.Errorf("with --allow-outside: %v", r)
	}
	if r := run(t, "", "export", path, "-o", filepath.Join(root, "k.csv"), "--allow-outside"); r.code != 0 {
		t.Errorf("export with --allow-outside: %v", r)
	}
}

// TestOutputLinkElsewhereRefused: -o naming a symbolic link into another directory is refused
// and the link's target is untouched; a link within the directory is written through.
func TestOutputLinkElsewhereRefused(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	in := writeText(t, dir, "in.json", `{"form": "tf", "a": [-0.5], "b": [1], "h0": 0}`)
	secret := writeText(t, elsewhere, "secret", "keep")
	if err := os.Symlink(secret, filepath.Join(dir, "out.json")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	r := run(t, "", "convert", in, "--to", "zpk", "-o", filepath.Join(dir, "out.json"))
	if r.code != ExitFailure || !strings.Contains(r.stderr, "another directory") {
		t.Errorf("-o through a link elsewhere: %v", r)
	}
	if data, _ := os.ReadFile(secret); string(data) != "keep" {
		t.Errorf("the link's target holds %q", data)
	}
	if err := os.Symlink("real.json", filepath.Join(dir, "near.json")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "convert", in, "--to", "zpk", "-o", filepath.Join(dir, "near.json")); r.code != 0 {
		t.Errorf("-o through a link in its directory: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "real.json")); err != nil {
		t.Errorf("the link's target was not written: %v", err)
	}
}
