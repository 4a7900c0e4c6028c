package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// TestConcurrentImportsLoseNothing runs six ssmlab import processes adding to one session at
// once: each reads the session, adds its item and saves, and before the session file's lock
// the last saves overwrote the others (the session held 2 of 7 targets).
func TestConcurrentImportsLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	dir := t.TempDir()
	a, err := arrays.New([]int{2, 64}, make([]float64, 128))
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Data {
		a.Data[i] = float64(i%64+1) / 64
	}
	npy, err := arrays.EncodeNPY(a, arrays.Float64)
	if err != nil {
		t.Fatal(err)
	}
	writeText(t, dir, "k.npy", string(npy))
	if r := run(t, "", "import", filepath.Join(dir, "k.npy"), "--name", "first", "--session", filepath.Join(dir, "cs.ssmlab")); r.code != 0 {
		t.Fatal(r)
	}
	const writers = 6
	var waits []func() error
	var errs []fmt.Stringer
	for i := range writers {
		cmd, _, stderr := process(dir, "import", "k.npy", "--name", fmt.Sprint("k", i), "--session", "cs.ssmlab")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waits = append(waits, cmd.Wait)
		errs = append(errs, stderr)
	}
	for i, wait := range waits {
		if err := wait(); err != nil {
			t.Errorf("import %d: %v: %s", i, err, errs[i])
		} else if !strings.Contains(errs[i].String(), "added ") {
			t.Errorf("import %d said %q", i, errs[i])
		}
	}
	s, err := sessions.Load(filepath.Join(dir, "cs.ssmlab"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Targets) != writers+1 {
		t.Errorf("the session holds %d targets, want %d: %s", len(s.Targets), writers+1, s.Summary())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); n != "k.npy" && n != "cs.ssmlab" && n != "cs.ssmlab.bak" {
			t.Errorf("%s left in the directory", n)
		}
	}
}
