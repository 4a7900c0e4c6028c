package sessions_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/sessions"
)

// TestOrderAndLinks: items are listed in the order they were added, a copy after its
// original; removing an item clears every link to it.
func TestOrderAndLinks(t *testing.T) {
	s := sessions.New()
	f := filtertest.Dense()
	a := must(s.AddFilter(filters.Document{Name: "a", Filter: f}))
	k := must(s.AddTarget(sessions.Target{Name: "k", Kernels: kernels(t, 1, 8)}))
	b := must(s.AddFilter(filters.Document{Name: "b", Filter: f}))
	if got := s.Order(); !slices.Equal(got, []string{a, k, b}) {
		t.Fatalf("order %v", got)
	}
	c := must(s.Duplicate(a))
	if got := s.Order(); !slices.Equal(got, []string{a, c, k, b}) {
		t.Errorf("after duplicating %s: order %v", a, got)
	}
	j := must(s.AddJob(sessions.Job{Kind: "distill", Status: sessions.JobDone, Target: k}))
	fit := must(s.AddEntry(sessions.Entry{Name: "fit", Filter: f, Origin: sessions.Origin{Target: k, Job: j}}))
	cp := must(s.Duplicate(fit))
	if e, _ := s.Filter(cp); e.Origin != (sessions.Origin{Note: "copy of fit", Target: k}) {
		t.Errorf("the copy's origin %+v", e.Origin)
	}
	jb, _ := s.Job(j)
	jb.Result = fit
	if err := s.ReplaceJob(jb); err != nil {
		t.Fatal(err)
	}
	s.SetUI(sessions.UIState{Selected: fit, Overlay: k})

	if err := s.Remove(k); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.Filter(fit); e.Origin.Target != "" || e.Origin.Job != j {
		t.Errorf("after removing the target: origin %+v", e.Origin)
	}
	if jb, _ := s.Job(j); jb.Target != "" || jb.Result != fit {
		t.Errorf("after removing the target: job %+v", jb)
	}
	if s.UI.Overlay != "" || s.UI.Selected != fit {
		t.Errorf("after removing the target: UI %+v", s.UI)
	}
	if err := s.Remove(j); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.Filter(fit); e.Origin.Job != "" {
		t.Errorf("after removing the job: origin %+v", e.Origin)
	}
	if got := s.Order(); !slices.Equal(got, []string{a, c, b, fit, cp}) {
		t.Errorf("order %v", got)
	}
	// Items added to the fields directly come last.
	s.Filters = append(s.Filters, sessions.Entry{ID: "x1", Filter: f})
	if got := s.Order(); got[len(got)-1] != "x1" {
		t.Errorf("order %v", got)
	}
}

// TestItemDirty: each change marks its item unsaved until the session is saved; a snapshot
// saved in the background leaves later changes unsaved.
func TestItemDirty(t *testing.T) {
	s := sessions.New()
	f := filtertest.Dense()
	a := must(s.AddFilter(filters.Document{Name: "a", Filter: f}))
	b := must(s.AddFilter(filters.Document{Name: "b", Filter: f}))
	if !s.ItemDirty(a) || !s.ItemDirty(b) || s.Changed(b) <= s.Changed(a) {
		t.Fatalf("new items: dirty %v %v, changed %d %d", s.ItemDirty(a), s.ItemDirty(b), s.Changed(a), s.Changed(b))
	}
	snap := s.Clone()
	if err := s.Rename(b, "b2"); err != nil {
		t.Fatal(err)
	}
	s.MarkSaved("x.ssmlab", snap.Generation())
	if s.ItemDirty(a) || !s.ItemDirty(b) || !s.Dirty() {
		t.Errorf("after saving a snapshot: dirty %v %v, session %v", s.ItemDirty(a), s.ItemDirty(b), s.Dirty())
	}
	// Origins and the UI's state are saved with the next save and make nothing dirty.
	s.MarkSaved("x.ssmlab", s.Generation())
	must(0, s.SetOrigin(a, sessions.Origin{File: "a.json"}))
	s.SetUI(sessions.UIState{Selected: a})
	if s.Dirty() || s.ItemDirty(a) {
		t.Error("an origin or the UI's state made the session dirty")
	}
	if err := s.Remove(a); err != nil || !s.Dirty() {
		t.Errorf("Remove: %v, dirty %v", err, s.Dirty())
	}
}

// TestVersion1 reads a version-1 file: filters come before targets, jobs have no status.
// FileVersion says 1 until the session is saved, at version 2 (it said 2: the session did not
// keep its file's version, and session info printed "version 2" of a version-1 file).
func TestVersion1(t *testing.T) {
	text := `{"format": "ssmlab-session", "version": 1, "next_id": 4,
	  "filters": [{"id": "f2", "filter": {"form": "tf", "a": [-0.5], "b": [1], "h0": 0}}],
	  "targets": [{"id": "t1", "name": "k", "kernels": [1, 0.5]}],
	  "jobs": [{"id": "j3", "kind": "distill", "spec": {"order": 4}, "report": null}],
	  "ui": {"selected": "f2", "form_tab": "", "plots": []}}`
	s := must(sessions.Unmarshal([]byte(text)))
	if got := s.Order(); !slices.Equal(got, []string{"f2", "t1"}) {
		t.Errorf("order %v", got)
	}
	if j := s.Jobs[0]; j.Status != "" || j.Target != "" || string(j.Spec) != `{"order":4}` {
		t.Errorf("job %+v", j)
	}
	if v := s.FileVersion(); v != 1 {
		t.Errorf("FileVersion of a version-1 file %d", v)
	}
	out := string(must(sessions.Marshal(s)))
	if !strings.Contains(out, `"version": 2`) || !strings.Contains(out, `"order": ["f2", "t1"]`) {
		t.Errorf("written back:\n%s", out)
	}
	if err := s.Save(filepath.Join(t.TempDir(), "v1.ssmlab")); err != nil {
		t.Fatal(err)
	}
	if v := s.FileVersion(); v != sessions.CurrentVersion {
		t.Errorf("FileVersion after a save %d, want %d", v, sessions.CurrentVersion)
	}
}

// TestUIChangeAutosaves: a dirty session whose UI state changes autosaves again, so that
// recovery shows what was on screen; an unchanged one does not.
func TestUIChangeAutosaves(t *testing.T) {
	dir := t.TempDir()
	s := sessions.New()
	id := must(s.AddFilter(filters.Document{Name: "a", Filter: filtertest.Dense()}))
	p := must(s.Autosave(dir))
	if again := must(s.Autosave(dir)); again != "" {
		t.Fatal("autosaved an unchanged session")
	}
	ui := sessions.UIState{Selected: id, Extra: map[string]json.RawMessage{"length": json.RawMessage(`256`)}}
	s.SetUI(ui)
	if again := must(s.Autosave(dir)); again != p {
		t.Fatalf("a UI change autosaved to %q", again)
	}
	s.SetUI(ui) // the same again
	if again := must(s.Autosave(dir)); again != "" {
		t.Error("an unchanged UI autosaved")
	}
	sessions.Abandon(s)
	r := must(sessions.RecoverAutosave(p))
	defer r.RemoveAutosave()
	if r.UI.Selected != id || string(r.UI.Extra["length"]) != "256" || !r.ItemDirty(id) {
		t.Errorf("recovered UI %+v, dirty %v", r.UI, r.ItemDirty(id))
	}
}

// TestRunningJobReadsBackInterrupted: a job saved while it ran reads back as interrupted, the
// others as they were (issue 21 item 7): nothing runs it after the program that saved it.
func TestRunningJobReadsBackInterrupted(t *testing.T) {
	s := sessions.New()
	for _, st := range sessions.JobStatuses {
		must(s.AddJob(sessions.Job{Kind: "distill", Status: st, Log: []string{"started"}}))
	}
	data, err := sessions.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := sessions.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range back.Jobs {
		want := sessions.JobStatuses[i]
		if want == sessions.JobRunning {
			want = sessions.JobInterrupted
		}
		if j.Status != want || !slices.Equal(j.Log, []string{"started"}) {
			t.Errorf("a job saved %s reads back %s (log %q), want %s", sessions.JobStatuses[i], j.Status, j.Log, want)
		}
	}
}
