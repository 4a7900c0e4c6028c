package sessions_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
)

// TestSaveWhenBackupIsALink: a save killed after keeping its backup leaves work.ssmlab.bak a
// hard link to work.ssmlab; rename(2) between two links to one file does nothing, and the
// next save left its temporary link (a full old copy) behind.
func TestSaveWhenBackupIsALink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "work.ssmlab")
	s := richSession(t)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, path+sessions.BackupSuffix); err != nil {
		t.Skip("no hard links here:", err)
	}
	must(s.AddFilter(filters.Document{Name: "more", Filter: filtertest.Dense()}))
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if names := numtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("the directory holds %q, want the session and its backup", names)
	}
}

// TestSaveNoticesChangeOnDisk: a session saved over a file that another program saved since
// the session was loaded fails with a *ChangedError and writes nothing; SaveOver writes.
func TestSaveNoticesChangeOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "work.ssmlab")
	if err := richSession(t).Save(path); err != nil {
		t.Fatal(err)
	}
	mine := must(sessions.Load(path))
	theirs := must(sessions.Load(path))
	must(theirs.AddFilter(filters.Document{Name: "theirs", Filter: filtertest.Dense()}))
	if err := theirs.Save(path); err != nil {
		t.Fatal(err)
	}
	saved := must(os.ReadFile(path))

	// Touching the file, or rewriting the same bytes, is no change.
	if err := mine.CheckDisk(path); err == nil {
		t.Fatal("CheckDisk: no change noticed")
	}
	if err := theirs.CheckDisk(path); err != nil {
		t.Errorf("CheckDisk of the session that saved the file: %v", err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if err := theirs.CheckDisk(path); err != nil {
		t.Errorf("CheckDisk after touching the file: %v", err)
	}

	must(mine.AddFilter(filters.Document{Name: "mine", Filter: filtertest.Dense()}))
	err := mine.Save(path)
	var ce *sessions.ChangedError
	if !errors.As(err, &ce) || ce.Path != path || ce.Removed {
		t.Fatalf("Save over a changed file: %v, want a *ChangedError", err)
	}
	if got := must(os.ReadFile(path)); string(got) != string(saved) {
		t.Error("a refused save changed the file")
	}
	// Saving elsewhere is no save over the changed file.
	if err := mine.Clone().Save(filepath.Join(dir, "copy.ssmlab")); err != nil {
		t.Errorf("Save as another file: %v", err)
	}
	if err := mine.SaveOver(path); err != nil {
		t.Fatal(err)
	}
	if got := must(sessions.Load(path)); len(got.Filters) != len(mine.Filters) {
		t.Errorf("SaveOver wrote %d filters, want %d", len(got.Filters), len(mine.Filters))
	}
	// A clone saved in the background records the new version for the session too.
	c := mine.Clone()
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := mine.Save(path); err != nil {
		t.Errorf("Save after a clone's save: %v", err)
	}
	os.Remove(path)
	if err := mine.Save(path); !errors.As(err, &ce) || !ce.Removed {
		t.Errorf("Save over a removed file: %v, want a *ChangedError", err)
	}
}

// TestUpdateSerialises: concurrent read-modify-write cycles of one session file lose nothing
// (the command-line test does the same with processes).
func TestUpdateSerialises(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cs.ssmlab")
	const writers = 6
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			err := sessions.Update(path, func(s *sessions.Session) error {
				_, err := s.AddFilter(filters.Document{Name: fmt.Sprint("k", i), Filter: filtertest.Dense()})
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := must(sessions.Load(path)); len(got.Filters) != writers {
		t.Errorf("the session holds %d filters, want %d", len(got.Filters), writers)
	}
	// A failing change writes nothing.
	before := must(os.ReadFile(path))
	err := sessions.Update(path, func(s *sessions.Session) error {
		must(s.AddFilter(filters.Document{Filter: filtertest.Dense()}))
		return errors.New("no")
	})
	if err == nil || string(must(os.ReadFile(path))) != string(before) {
		t.Errorf("a failed Update: %v, file changed: %v", err, string(must(os.ReadFile(path))) != string(before))
	}
}

// TestSaveRefusesLinkElsewhere: a session path that is a symbolic link into another
// directory is not followed (see atomicfile).
func TestSaveRefusesLinkElsewhere(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	link := filepath.Join(dir, "work.ssmlab")
	if err := os.Symlink(filepath.Join(elsewhere, "work.ssmlab"), link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := richSession(t).Save(link); !errors.Is(err, atomicfile.ErrLinkElsewhere) {
		t.Errorf("Save through a link into another directory: %v", err)
	}
	if names := numtest.DirNames(t, elsewhere); len(names) != 0 {
		t.Errorf("the other directory holds %q", names)
	}
}
