package sessions_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train/plan"
)

// savedUnit saves r in a work directory at dir (key "k") and returns the file's bytes: the
// fuzz targets' seed.
func savedUnit(f *testing.F, dir string, r *plan.UnitResult) []byte {
	w, err := sessions.OpenWorkDir(dir, "k")
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Save(r); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(w.Path(r.Unit))
	if err != nil {
		f.Fatal(err)
	}
	return seed
}

// loadFuzzed writes data as the file of unit u in the work directory at dir and loads it:
// Load must not fail on a file's content. One directory for the process, not t.TempDir per
// input: making and removing a directory per input held a run to a few hundred inputs a
// second. Inputs run one after another in a process, and each overwrites the unit's one file.
func loadFuzzed(t *testing.T, dir string, u plan.Unit, data []byte) (*sessions.WorkDir, *plan.UnitResult) {
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
	return w, r
}

// FuzzWorkDirLoad puts fuzzed bytes in a work directory's file of a unit (as a run stopped
// mid-write, a disk error or another version might leave it): Load never panics and never
// fails on the content, a file it cannot use is listed as ignored (and fitted again), and a
// unit it returns is the unit asked for, with valid filters, which saves and loads back the
// same.
func FuzzWorkDirLoad(f *testing.F) {
	u := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 32, Order: 2}
	dir := f.TempDir()
	f.Add(savedUnit(f, dir, fittedUnit(f, u)))
	f.Add([]byte(`{"format": "ssmlab-distill-unit/2", "key": "k", "unit": {"prefix": "l.", "lo": 0, "hi": 2, "length": 32, "order": 2}, "filters": [], "channels": []}`))
	f.Add([]byte(`{"format": "ssmlab-distill-unit/2", "key": "k"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, r := loadFuzzed(t, dir, u, data)
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

// FuzzWorkDirLoadMIMO is FuzzWorkDirLoad for a MIMO unit (an LRU or S5 layer reduced whole):
// a unit it returns holds a reduced layer that validates, of as many outputs as the unit has
// channels, a record per output and no filters, and saves and loads back the same.
func FuzzWorkDirLoadMIMO(f *testing.F) {
	u := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 32, Order: 2, MIMO: true}
	dir := f.TempDir()
	rec := &plan.MIMORecord{Poles: [][2]float64{{0.5, 0.25}}, B: [][2]float64{{1, 0}, {0, 1}}, C: [][2]float64{{1, 1}, {2, 0}},
		D: []float64{0.5, 0, 0, 0.5}, Inputs: 2, Outputs: 2, Order: 2, HSV: []float64{1, 0.5}, Bound: 1}
	res := &plan.UnitResult{Unit: u, MIMO: rec, Channels: []plan.ChannelRecord{{Channel: 0, Order: 2}, {Channel: 1, Order: 2}}}
	f.Add(savedUnit(f, dir, res))
	f.Add([]byte(`{"format": "ssmlab-distill-unit/2", "key": "k", "unit": {"prefix": "l.", "lo": 0, "hi": 2, "length": 32, "order": 2, "mimo": true}, "filters": [], "channels": [], "mimo": {"poles": [], "b": [], "c": [], "d": [], "inputs": 0, "outputs": 2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, r := loadFuzzed(t, dir, u, data)
		if r == nil {
			return
		}
		if r.Unit != u || r.MIMO == nil || len(r.Filters) != 0 || len(r.Channels) != u.Channels() || r.MIMO.Outputs != u.Channels() {
			t.Fatalf("asked for %v, loaded %v with %d filters, %d records and layer %v", u, r.Unit, len(r.Filters), len(r.Channels), r.MIMO)
		}
		if _, err := r.MIMO.System(); err != nil {
			t.Fatalf("an invalid reduced layer loaded: %v", err)
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
