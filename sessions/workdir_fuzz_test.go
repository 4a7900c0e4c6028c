package sessions_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train/plan"
)

// FuzzWorkDirLoad puts fuzzed bytes in a work directory's file of a unit (as a run stopped
// mid-write, a disk error or another version might leave it): Load never panics and never
// fails on the content, a file it cannot use is listed as ignored (and fitted again), and a
// unit it returns is the unit asked for, with valid filters, which saves and loads back the
// same.
func FuzzWorkDirLoad(f *testing.F) {
	u := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 32, Order: 2}
	dir := f.TempDir()
	w, err := sessions.OpenWorkDir(dir, "k")
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Save(fittedUnit(f, u)); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(w.Path(u))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"format": "ssmlab-distill-unit/1", "key": "k", "unit": {"prefix": "l.", "lo": 0, "hi": 2, "length": 32, "order": 2}, "filters": [], "channels": []}`))
	f.Add([]byte(`{"format": "ssmlab-distill-unit/1", "key": "k"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// One directory for the process, not t.TempDir per input: making and removing a
		// directory per input held a run to a few hundred inputs a second. Inputs run one
		// after another in a process, and each overwrites the unit's one file.
		w, err := sessions.OpenWorkDir(dir, "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.Path(u), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := w.Load(u)
		if err != nil {
			t.Fatalf("Load failed on a file's content: %v", err)
		}
		if r == nil {
			if len(w.Ignored) != 1 {
				t.Fatalf("an unusable file, but %d ignored", len(w.Ignored))
			}
			return
		}
		if r.Unit != u || len(r.Filters) != u.Channels() || len(r.Channels) != u.Channels() {
			t.Fatalf("asked for %v, loaded %v with %d filters and %d records", u, r.Unit, len(r.Filters), len(r.Channels))
		}
		for c, fl := range r.Filters {
			if err := fl.Validate(); err != nil {
				t.Fatalf("channel %d: an invalid filter loaded: %v", c, err)
			}
		}
		if err := w.Save(r); err != nil {
			t.Fatalf("a loaded unit does not save: %v", err)
		}
		back, err := w.Load(u)
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("a loaded unit saves and loads back as %+v, %v; want %+v", back, err, r)
		}
	})
}
