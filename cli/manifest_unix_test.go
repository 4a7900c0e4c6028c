//go:build unix

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const manifestHelperEnv = "SSMLAB_MANIFEST_FSIZE"

// TestDistillManifestFailureKeepsOut: a checkpoint's distillation whose manifest cannot be
// written (a full disk; here the helper's file size limit, RLIMIT_FSIZE, between the .npz's
// size and the manifest's, which fails the write as ENOSPC would) exits 1 and leaves OUT as it
// was: the manifest is written before the new checkpoint replaces OUT. QA: on a full tmpfs it
// wrote the new checkpoint, then failed on the manifest, leaving the old manifest beside it.
func TestDistillManifestFailureKeepsOut(t *testing.T) {
	in := filepath.Join("..", "testdata", "layouts", "hyena_64.pt")
	if out := os.Getenv(manifestHelperEnv); out != "" {
		signal.Ignore(syscall.SIGXFSZ)
		limit := syscall.Rlimit{Cur: 2200, Max: 2200}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		r := run(t, "", "distill", in, "-o", out)
		fmt.Printf("exit %d\n%s", r.code, r.stderr)
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	out := filepath.Join(t.TempDir(), "out.npz")
	// A first run fits the units and keeps them in OUT.work, so that the helper writes
	// only OUT and its manifest: its checkpoint is within the limit, its manifest beyond.
	if r := run(t, "", "distill", in, "-o", out); r.code != 0 {
		t.Fatal(r)
	}
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if size(out) >= 2200 || size(out+".manifest.json") <= 2200 {
		t.Fatalf("the limit does not part them: OUT %d bytes, its manifest %d", size(out), size(out+".manifest.json"))
	}
	for name, text := range map[string]string{out: "OLD", out + ".manifest.json": `{"old": true}`} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDistillManifestFailureKeepsOut$", "-test.count=1")
	cmd.Env = append(os.Environ(), manifestHelperEnv+"="+out)
	got, _ := cmd.CombinedOutput()
	if !strings.Contains(string(got), "exit 1\n") || !strings.Contains(string(got), ".manifest.json: file too large") {
		t.Fatalf("the helper's run:\n%s", got)
	}
	if data, _ := os.ReadFile(out); string(data) != "OLD" {
		t.Errorf("OUT was replaced (%d bytes) though its manifest was not written", len(data))
	}
	if data, _ := os.ReadFile(out + ".manifest.json"); string(data) != `{"old": true}` {
		t.Errorf("the manifest reads %q", data)
	}
	ents, _ := os.ReadDir(filepath.Dir(out))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}
