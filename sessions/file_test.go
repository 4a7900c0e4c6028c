package sessions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

func TestSaveLoadAndBackup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "work"+sessions.Extension)
	s := richSession(t)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if s.Dirty() || s.Path != path {
		t.Errorf("after Save: dirty %v, path %q", s.Dirty(), s.Path)
	}
	if _, err := os.Stat(path + sessions.BackupSuffix); !os.IsNotExist(err) {
		t.Errorf("a first save made a backup: %v", err)
	}
	first := must(os.ReadFile(path))
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	must(s.AddFilter(filters.Document{Name: "new", Filter: filtertest.Dense()}))
	if !s.Dirty() {
		t.Error("not dirty after a change")
	}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if bak := must(os.ReadFile(path + sessions.BackupSuffix)); !bytes.Equal(bak, first) {
		t.Error("the backup is not the previous version")
	}
	if fi := must(os.Stat(path)); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode became %v", fi.Mode().Perm())
	}
	loaded := must(sessions.Load(path))
	if len(loaded.Filters) != len(s.Filters) || loaded.Path != path || loaded.Dirty() {
		t.Errorf("Load: %d filters, path %q, dirty %v", len(loaded.Filters), loaded.Path, loaded.Dirty())
	}
	if !bytes.Equal(must(sessions.Marshal(loaded)), must(os.ReadFile(path))) {
		t.Error("a loaded session does not marshal to its file")
	}
	// No temporary files are left behind.
	if names := numtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("directory holds %v", names)
	}
}

// TestSaveReadOnly: a session file its user made read-only (chmod 444) is not replaced, and
// its backup, the version before it, is not replaced either (QA F1: both were, the new file
// and the backup keeping mode 444). Root may write any file (atomicfile's invariants).
func TestSaveReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write a read-only file (access(2)); atomicfile's TestReadOnlyTarget checks the refusal for root too")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ro"+sessions.Extension)
	s := richSession(t)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	must(s.AddFilter(filters.Document{Name: "second", Filter: filtertest.Dense()}))
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	file, bak := must(os.ReadFile(path)), must(os.ReadFile(path+sessions.BackupSuffix))
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	must(s.AddFilter(filters.Document{Name: "third", Filter: filtertest.Dense()}))
	err := s.Save(path)
	if err == nil || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Save over a read-only file: %v, want an error naming it as read-only", err)
	}
	if !bytes.Equal(must(os.ReadFile(path)), file) || !bytes.Equal(must(os.ReadFile(path+sessions.BackupSuffix)), bak) {
		t.Error("the read-only session or its backup changed")
	}
}

func TestSaveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.ssmlab")
	link := filepath.Join(dir, "link.ssmlab")
	s := richSession(t)
	if err := s.Save(real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	must(s.AddFilter(filters.Document{Filter: filtertest.Dense()}))
	if err := s.Save(link); err != nil {
		t.Fatal(err)
	}
	if fi := must(os.Lstat(link)); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if _, err := os.Stat(real + sessions.BackupSuffix); err != nil {
		t.Errorf("no backup next to the link's target: %v", err)
	}
	if got := must(sessions.Load(real)); len(got.Filters) != len(s.Filters) {
		t.Error("the link's target was not updated")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := sessions.Load(filepath.Join(dir, "none.ssmlab")); err == nil || !strings.Contains(err.Error(), "none.ssmlab: no such file") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "v3.ssmlab")
	os.WriteFile(p, []byte(`{"format": "ssmlab-session", "version": 3}`), 0o644)
	_, err := sessions.Load(p)
	var ve *sessions.VersionError
	if !errors.As(err, &ve) || err.Error() != p+": session version 3 is newer than this ssmlab supports (2)" {
		t.Errorf("newer version: %v", err)
	}
}

func TestLinkedTargets(t *testing.T) {
	dir := t.TempDir()
	k := kernels(t, 5, 3, 100)
	npz := must(arrays.EncodeNPZ([]arrays.Named{{Name: "k", Array: k}}, arrays.NPZOptions{}))
	if err := os.WriteFile(filepath.Join(dir, "targets.npz"), npz, 0o644); err != nil {
		t.Fatal(err)
	}
	s := sessions.New()
	id := must(s.AddTarget(sessions.Target{Name: "linked", Kernels: k, Linked: true, Source: &sessions.Source{Path: "targets.npz", Tensor: "k"}}))
	path := filepath.Join(dir, "s.ssmlab")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if data := must(os.ReadFile(path)); bytes.Contains(data, []byte(`"kernels"`)) {
		t.Error("a linked target's kernels were embedded")
	}
	got := must(sessions.Load(path))
	tg, _ := got.Target(id)
	if tg.Err != nil || !tg.Kernels.Equal(k) {
		t.Errorf("linked kernels: %v", tg.Err)
	}
	os.Remove(filepath.Join(dir, "targets.npz"))
	got = must(sessions.Load(path))
	tg, _ = got.Target(id)
	if tg.Kernels != nil || tg.Err == nil || !strings.Contains(tg.Err.Error(), "targets.npz: no such file") {
		t.Errorf("missing source: kernels %v, err %v", tg.Kernels, tg.Err)
	}
	// Saving keeps the link even though the kernels are missing.
	if err := got.Save(path); err != nil {
		t.Fatal(err)
	}
}

func TestAutosaveAndRecover(t *testing.T) {
	dir := t.TempDir()
	auto := filepath.Join(dir, "autosave")
	path := filepath.Join(dir, "work.ssmlab")

	s := richSession(t)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if p := must(s.Autosave(auto)); p != "" {
		t.Errorf("a clean session autosaved to %s", p)
	}
	id := must(s.AddFilter(filters.Document{Name: "unsaved", Filter: filtertest.Dense()}))
	p := must(s.Autosave(auto))
	if p == "" || filepath.Dir(p) != auto {
		t.Fatalf("autosave path %q", p)
	}
	if again := must(s.Autosave(auto)); again != "" {
		t.Error("an unchanged session autosaved twice")
	}
	if list := must(sessions.ListAutosaves(auto)); len(list) != 0 {
		t.Fatalf("ListAutosaves offers the autosave of a session still open: %+v", list)
	}
	sessions.Abandon(s) // as a kill would
	list := must(sessions.ListAutosaves(auto))
	if len(list) != 1 || list[0].Path != p || list[0].Origin != path || list[0].Err != nil || list[0].OriginChanged != nil {
		t.Fatalf("ListAutosaves = %+v", list)
	}
	if !strings.HasPrefix(list[0].Summary, "9 filters, 2 targets, 2 jobs") {
		t.Errorf("summary %q", list[0].Summary)
	}
	if !slices.Equal(list[0].Changed, []string{"unsaved"}) || len(list[0].Deleted) != 0 {
		t.Errorf("unsaved: changed %q, deleted %q; want [unsaved] and none", list[0].Changed, list[0].Deleted)
	}

	// The process dies; the next start recovers the unsaved filter.
	r := must(sessions.RecoverAutosave(p))
	if r.Path != path || !r.Dirty() {
		t.Errorf("recovered: path %q, dirty %v", r.Path, r.Dirty())
	}
	if e, ok := r.Filter(id); !ok || e.Name != "unsaved" {
		t.Error("the unsaved filter was not recovered")
	}
	// Later autosaves go to the same file; saving removes it.
	must(r.AddFilter(filters.Document{Filter: filtertest.Dense()}))
	if p2 := must(r.Autosave(auto)); p2 != p {
		t.Errorf("the recovered session autosaved to %s, not %s", p2, p)
	}
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("Save left the autosave file: %v", err)
	}
	if list := must(sessions.ListAutosaves(auto)); len(list) != 0 {
		t.Errorf("autosaves left: %+v", list)
	}
}

// TestRecoveredDeletions: the filters and targets removed since the save are unsaved work
// (Deleted) that the autosave keeps and RecoverAutosave brings back; a save, of the session
// or of a clone taken after the removal, clears them. Recovered, they were forgotten.
func TestRecoveredDeletions(t *testing.T) {
	dir := t.TempDir()
	auto := filepath.Join(dir, "autosave")
	path := filepath.Join(dir, "work.ssmlab")
	s := sessions.New()
	keep := must(s.AddFilter(filters.Document{Name: "keep", Filter: filtertest.Dense()}))
	gone := must(s.AddFilter(filters.Document{Name: "gone", Filter: filtertest.Dense()}))
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if got := s.Deleted(); !slices.Equal(got, []string{"gone"}) {
		t.Fatalf("Deleted = %v, want [gone]", got)
	}
	p := must(s.Autosave(auto))
	sessions.Abandon(s)
	if list := must(sessions.ListAutosaves(auto)); len(list) != 1 || len(list[0].Changed) != 0 || !slices.Equal(list[0].Deleted, []string{"gone"}) {
		t.Errorf("ListAutosaves = %+v, want gone deleted and nothing changed", list)
	}
	r := must(sessions.RecoverAutosave(p))
	if got := r.Deleted(); !r.Dirty() || !slices.Equal(got, []string{"gone"}) {
		t.Errorf("recovered: dirty %v, Deleted %v, want [gone]", r.Dirty(), got)
	}
	if r.ItemDirty(keep) {
		t.Error("recovered: the kept filter is dirty")
	}
	// A save of a clone taken before a later removal leaves that removal unsaved.
	c := r.Clone()
	if err := r.Remove(keep); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	r.MarkSaved(path, c.Generation())
	if got := r.Deleted(); !slices.Equal(got, []string{"keep"}) {
		t.Errorf("after the clone's save: Deleted %v, want [keep]", got)
	}
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	if got := r.Deleted(); len(got) != 0 {
		t.Errorf("saved: Deleted %v", got)
	}
}

// autosavedAfterSave saves a session of one filter to origin, adds a second and autosaves it
// to dir, then abandons it as a crash would; it returns the autosave's path.
func autosavedAfterSave(t *testing.T, dir, origin string) string {
	t.Helper()
	o := sessions.New()
	must(o.AddFilter(filters.Document{Filter: filtertest.Dense()}))
	if err := o.Save(origin); err != nil {
		t.Fatal(err)
	}
	must(o.AddFilter(filters.Document{Filter: filtertest.Dense()}))
	ap := must(o.Autosave(dir))
	sessions.Abandon(o)
	return ap
}

func TestAutosaveUntitledAndStale(t *testing.T) {
	dir := t.TempDir()
	s := sessions.New()
	must(s.AddFilter(filters.Document{Filter: filtertest.Dense()}))
	p := must(s.Autosave(dir))
	if !strings.HasPrefix(filepath.Base(p), "untitled-") {
		t.Errorf("untitled autosave named %s", p)
	}
	sessions.Abandon(s)
	// An autosave whose origin was saved afterwards is flagged.
	origin := filepath.Join(t.TempDir(), "o.ssmlab")
	ap := autosavedAfterSave(t, dir, origin)
	must(0, richSession(t).Save(origin))
	os.WriteFile(filepath.Join(dir, "junk.ssmlab"), []byte("not json"), 0o644)
	list := must(sessions.ListAutosaves(dir))
	if len(list) != 3 {
		t.Fatalf("%d autosaves, want 3", len(list))
	}
	var stale, broken bool
	for _, a := range list {
		stale = stale || (a.Path == ap && a.OriginChanged != nil)
		broken = broken || (filepath.Base(a.Path) == "junk.ssmlab" && a.Err != nil)
	}
	if !stale || !broken {
		t.Errorf("stale %v, broken %v: %+v", stale, broken, list)
	}
	if err := sessions.DiscardAutosave(ap); err != nil {
		t.Fatal(err)
	}
	if err := sessions.DiscardAutosave(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("DiscardAutosave removed a non-session file")
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/tmp/state")
	if d := must(sessions.AutosaveDir()); d != "/tmp/state/ssmlab/autosave" {
		t.Errorf("with XDG_STATE_HOME: %s", d)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if d := must(sessions.StateDir()); d != "/home/u/.local/state/ssmlab" {
		t.Errorf("without an absolute XDG_STATE_HOME: %s", d)
	}
}

func TestIsSession(t *testing.T) {
	dir := t.TempDir()
	s := richSession(t)
	p := filepath.Join(dir, "a.json")
	must(0, s.Save(p))
	f := filepath.Join(dir, "f.json")
	os.WriteFile(f, must(filterfile.Marshal(filters.Document{Filter: filtertest.Dense()})), 0o644)
	if !sessions.IsSession(p) || sessions.IsSession(f) || !sessions.IsSession("x.ssmlab") {
		t.Error("IsSession misjudges")
	}
}

func TestSourceRelative(t *testing.T) {
	dir := t.TempDir()
	src := sessions.Source{Path: filepath.Join(dir, "data", "k.npy"), Tensor: "x"}
	if got := src.Relative(filepath.Join(dir, "sessions")); got.Path != filepath.Join("..", "data", "k.npy") || got.Tensor != "x" {
		t.Errorf("Relative = %+v", got)
	}
}

// TestRecoveredSaveNoticesLaterWork: a recovered session saved over its file asks first (a
// *ChangedError, and ListAutosaves flags it) when the file no longer holds the version the
// autosaved work followed, whenever it changed, and saves when it does. QA finding 1: workbench
// A saved, B (opened on the same file) autosaved after that and was killed, and B's recovered
// work saved over A's without a word, since the file was older than the autosave; a file only
// touched after the autosave asked, and a removed one was made anew without asking.
func TestRecoveredSaveNoticesLaterWork(t *testing.T) {
	dir := t.TempDir()
	auto := filepath.Join(dir, "autosave")
	hourAgo, inAnHour := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for _, c := range []struct {
		name string
		// before runs between the two workbenches' opening and B's autosave, after between
		// that autosave and the recovery; both may change origin, the session file.
		before, after    func(origin string)
		changed, removed bool
	}{
		{name: "another saved before the autosave", changed: true, before: func(origin string) {
			a := must(sessions.Load(origin))
			must(a.AddFilter(filters.Document{Name: "A's", Filter: filtertest.Dense()}))
			must(0, a.Save(origin))
			must(0, os.Chtimes(origin, hourAgo, hourAgo)) // however old it looks
		}},
		{name: "touched after the autosave", after: func(origin string) {
			must(0, os.Chtimes(origin, inAnHour, inAnHour))
		}},
		{name: "removed after the autosave", changed: true, removed: true, after: func(origin string) {
			must(0, os.Remove(origin))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			origin := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+sessions.Extension)
			must(0, richSession(t).Save(origin))
			b := must(sessions.Load(origin))
			if c.before != nil {
				c.before(origin)
			}
			must(b.AddFilter(filters.Document{Name: "B's", Filter: filtertest.Dense()}))
			ap := must(b.Autosave(auto))
			sessions.Abandon(b) // B is killed
			if c.after != nil {
				c.after(origin)
			}
			onDisk, _ := os.ReadFile(origin)
			// The recovered work, autosaved again and recovered again, still follows the version
			// B opened.
			for round := range 2 {
				list := must(sessions.ListAutosaves(auto))
				if len(list) != 1 || list[0].Path != ap || (list[0].OriginChanged != nil) != c.changed {
					t.Fatalf("round %d: ListAutosaves = %+v, want OriginChanged %v", round, list, c.changed)
				}
				r := must(sessions.RecoverAutosave(ap))
				err := r.Save(origin)
				var ce *sessions.ChangedError
				if c.changed != errors.As(err, &ce) || (c.changed && ce.Removed != c.removed) {
					t.Fatalf("round %d: Save gives %v, want a *ChangedError %v (removed %v)", round, err, c.changed, c.removed)
				}
				if !c.changed {
					return
				}
				if got, _ := os.ReadFile(origin); !bytes.Equal(got, onDisk) {
					t.Fatalf("round %d: a refused save changed %s", round, origin)
				}
				must(r.AddFilter(filters.Document{Name: "more", Filter: filtertest.Dense()}))
				must(r.Autosave(auto))
				sessions.Abandon(r)
			}
			r := must(sessions.RecoverAutosave(ap))
			must(0, r.SaveOver(origin))
			if got := must(sessions.Load(origin)); len(got.Filters) != len(r.Filters) {
				t.Errorf("SaveOver wrote %d filters, want %d", len(got.Filters), len(r.Filters))
			}
		})
	}
}

// TestRecoverAutosaveWithoutBase: an autosave that does not say which version of its file it
// follows (written before ssmlab recorded it) saves over no file without asking first.
func TestRecoverAutosaveWithoutBase(t *testing.T) {
	dir := t.TempDir()
	auto := filepath.Join(dir, "autosave")
	origin := filepath.Join(dir, "o.ssmlab")
	ap := autosavedAfterSave(t, auto, origin)
	var doc map[string]any
	must(0, json.Unmarshal(must(os.ReadFile(ap)), &doc))
	a := doc["autosave"].(map[string]any)
	if _, ok := a["origin_sha256"]; !ok {
		t.Fatalf("the autosave names no origin_sha256: %v", a)
	}
	delete(a, "origin_sha256")
	must(0, os.WriteFile(ap, must(json.Marshal(doc)), 0o600))
	r := must(sessions.RecoverAutosave(ap))
	var ce *sessions.ChangedError
	if err := r.Save(origin); !errors.As(err, &ce) {
		t.Errorf("Save over a file of an unknown version: %v, want a *ChangedError", err)
	}
	r.RemoveAutosave()
}
