//go:build unix

package sessions_test

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
)

const fullHelperEnv = "SSMLAB_FULL_SAVE_PATH"

// TestFailedSaveKeepsTheBackup: a save whose write fails (a full disk; here the helper's file
// size limit, RLIMIT_FSIZE, which fails the write as ENOSPC would) leaves the file and its
// backup as they were, and no temporary file. QA: on a full tmpfs, import --session failed
// with the backup already replaced by the current version, so the version before was lost.
func TestFailedSaveKeepsTheBackup(t *testing.T) {
	if path := os.Getenv(fullHelperEnv); path != "" {
		signal.Ignore(syscall.SIGXFSZ)
		limit := syscall.Rlimit{Cur: 64 << 10, Max: 64 << 10}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		err := generationSession(t, 3, kernels(t, 1, 1<<15)).Save(path)
		fmt.Println("save:", err)
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "work.ssmlab")
	for gen := 1; gen <= 2; gen++ {
		if err := generationSession(t, gen, kernels(t, 1, 100)).Save(path); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailedSaveKeepsTheBackup$", "-test.count=1")
	cmd.Env = append(os.Environ(), fullHelperEnv+"="+path)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "save: ") || strings.Contains(string(out), "save: <nil>") {
		t.Fatalf("the helper's save did not fail:\n%s", out)
	}
	nameOf := func(path string) string {
		s, err := sessions.Load(path)
		if err != nil || len(s.Targets) != 1 {
			t.Fatalf("%s: %v", path, err)
		}
		return s.Targets[0].Name
	}
	if got := nameOf(path); got != "gen 2" {
		t.Errorf("the file holds %q after a failed save, want gen 2", got)
	}
	if got := nameOf(path + sessions.BackupSuffix); got != "gen 1" {
		t.Errorf("the backup holds %q after a failed save, want gen 1 (the version before)", got)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}
