package sessions_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/fuzzcorpus"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
	"github.com/ssmlab/ssmlab/train/plan"
)

func fittedUnit(t testing.TB, u plan.Unit) *plan.UnitResult {
	t.Helper()
	r := &plan.UnitResult{Unit: u, Warnings: []string{"w"}}
	for c := u.Lo; c < u.Hi; c++ {
		f, err := filters.NewDiagonal([]complex128{complex(0.5+0.01*float64(c), 0.1), complex(0.5+0.01*float64(c), -0.1)},
			[]complex128{complex(1, 1.0/3), complex(1, -1.0/3)}, 0.1*float64(c))
		if err != nil {
			t.Fatal(err)
		}
		r.Filters = append(r.Filters, f)
		r.Channels = append(r.Channels, plan.ChannelRecord{Channel: c, Order: 2, Model: train.ModelModal, ChannelReport: train.ChannelReport{RelError: 1e-3 / 7, Stable: true}, Backend: "cpu", Seconds: 0.25})
	}
	return r
}

// A work directory gives back exactly what was saved, and nothing for another key, another
// unit or a damaged file, which it names as ignored.
func TestWorkDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "work")
	w, err := sessions.OpenWorkDir(dir, "key1")
	if err != nil {
		t.Fatal(err)
	}
	u := plan.Unit{Prefix: "layers.0.", Lo: 4, Hi: 7, Length: 64, Order: 2}
	if r, err := w.Load(u); r != nil || err != nil {
		t.Fatalf("an empty directory gave %v, %v", r, err)
	}
	want := fittedUnit(t, u)
	if err := w.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := w.Load(u)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v, %v; want %+v", got, err, want)
	}
	other, _ := sessions.OpenWorkDir(dir, "key2")
	if r, _ := other.Load(u); r != nil {
		t.Error("another key found the unit")
	}
	// A file of another unit where this one's should be: ignored, and said.
	v := u
	v.Hi = 6
	if err := os.Rename(w.Path(u), w.Path(v)); err != nil {
		t.Fatal(err)
	}
	if r, _ := w.Load(v); r != nil || len(w.Ignored) != 1 || !strings.Contains(w.Ignored[0], "holds unit layers.0.[4:7]") {
		t.Errorf("got %v, ignored %q", r, w.Ignored)
	}
	if err := os.WriteFile(w.Path(u), []byte(`{"format": 1, "format": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, _ := w.Load(u); r != nil || len(w.Ignored) != 2 || !strings.Contains(w.Ignored[1], "duplicate key") {
		t.Errorf("got %v, ignored %q", r, w.Ignored)
	}
	// A file edited so that it still reads, a pole moved outside the unit circle under the
	// record that says stable: it was loaded, and its records went into the manifest.
	if err := w.Save(want); err != nil {
		t.Fatal(err)
	}
	if r, err := w.Load(u); r == nil || err != nil {
		t.Fatalf("the saved unit did not load: %v", err)
	}
	data, err := os.ReadFile(w.Path(u))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "[0.54,0.1]", "[1.1,0.1]", 1)
	if edited == string(data) {
		t.Fatalf("no pole [0.54,0.1] to edit in %s", data)
	}
	if err := os.WriteFile(w.Path(u), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, _ := w.Load(u); r != nil || len(w.Ignored) != 3 || !strings.Contains(w.Ignored[2], "does not match its SHA-256 (edited or damaged)") {
		t.Errorf("an edited unit: got %v, ignored %q", r, w.Ignored)
	}
}

// A part file reads back as written; merging refuses parts of other inputs.
func TestPartRoundTrip(t *testing.T) {
	u0 := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 32, Order: 2}
	u1 := plan.Unit{Prefix: "l.", Lo: 2, Hi: 4, Length: 32, Order: 2}
	in := plan.Input{Name: "m.pt", Size: 10, SHA256: "ab"}
	p := &sessions.Part{Input: in, InputPath: "/x/m.pt", Options: plan.Options{Order: 2, Chunk: 2}, Plan: plan.Hash([]plan.Unit{u0, u1}), Shard: plan.Shard{Index: 1, Count: 2}, Units: []*plan.UnitResult{fittedUnit(t, u1)}}
	data, err := sessions.EncodePart(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := sessions.ReadPart(path)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("read %+v, %v", got, err)
	}
	// A part edited so that it still reads is refused: merge wrote its filters as fitted.
	edited := strings.Replace(string(data), `"rel_error":0.00014285714285714287`, `"rel_error":1e-9`, 1)
	if edited == string(data) {
		t.Fatalf("no rel_error to edit in %s", data)
	}
	if _, err := sessions.DecodePart([]byte(edited)); !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), "does not match its SHA-256") {
		t.Errorf("an edited part: %v", err)
	}
	q := *p
	q.Input.SHA256 = "cd"
	q.Units = []*plan.UnitResult{fittedUnit(t, u0)}
	_, err = sessions.MergeParts([]*sessions.Part{p, &q}, []string{"a", "b"}, []plan.Unit{u0, u1})
	if !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), "a and b distil different inputs") {
		t.Errorf("got %v", err)
	}
	q.Input = in
	res, err := sessions.MergeParts([]*sessions.Part{p, &q}, []string{"a", "b"}, []plan.Unit{u0, u1})
	if err != nil || res[0].Unit != u0 || res[1].Unit != u1 {
		t.Errorf("merged %v, %v", res, err)
	}
}

// FuzzDecodePart: any bytes give a part or an error, never a panic, and a part read encodes
// to what reads back as the same part.
func FuzzDecodePart(f *testing.F) {
	// The first, EncodePart's of one unit of one channel, is 971 bytes (fuzzcorpus.MaxSeed is
	// 1 KB): a part that reads, its unit's SHA-256 right.
	valid, err := sessions.EncodePart(&sessions.Part{Shard: plan.Shard{Index: 0, Count: 2}, Units: []*plan.UnitResult{fittedUnit(f, plan.Unit{Lo: 0, Hi: 1})}})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := sessions.DecodePart(valid); err != nil {
		f.Fatalf("the valid seed does not read: %v", err)
	}
	seeds := [][]byte{
		valid,
		[]byte(`{"format": "ssmlab-distill-part/2", "shard": {"index": 3, "count": 2}}`),
		[]byte(`{"format": "ssmlab-distill-part/2", "shard": {"index": 0, "count": 1}, "units": [{"unit": {"lo": 5, "hi": 2}}]}`),
	}
	fuzzcorpus.CheckSmall(f, "FuzzDecodePart", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := sessions.DecodePart(data)
		if err != nil {
			if !errors.Is(err, sessions.ErrInvalid) {
				t.Fatalf("an error that is not ErrInvalid: %v", err)
			}
			return
		}
		again, err := sessions.EncodePart(p)
		if err != nil {
			return // a filter read that cannot be written (a value beyond JSON) is said
		}
		q, err := sessions.DecodePart(again)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("a part did not survive encoding: %v", err)
		}
	})
}

// TestWorkDirAutoRadius: a unit's radius bound (train.Report.AutoMaxRadius, now recorded
// without the radius constraint too) is kept and given back; a unit of none is stored without
// the key, as every unit was before the bound was recorded, so such a file still reads, its
// bound 0 (absent).
func TestWorkDirAutoRadius(t *testing.T) {
	w, err := sessions.OpenWorkDir(t.TempDir(), "key")
	if err != nil {
		t.Fatal(err)
	}
	for i, bound := range []float64{train.AutoRadius(20000), 0} {
		u := plan.Unit{Prefix: "layers.0.", Lo: i, Hi: i + 1, Length: 20000, Order: 2}
		r := fittedUnit(t, u)
		r.AutoMaxRadius = bound
		if err := w.Save(r); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(w.Path(u))
		if err != nil {
			t.Fatal(err)
		}
		if has := bytes.Contains(data, []byte(`"auto_max_radius"`)); has != (bound != 0) {
			t.Errorf("bound %v: the unit's file has auto_max_radius: %v", bound, has)
		}
		got, err := w.Load(u)
		if err != nil || got == nil || got.AutoMaxRadius != bound {
			t.Errorf("bound %v: loaded %+v, %v", bound, got, err)
		}
	}
}

// Parts of recipes that differ in one setting are refused naming that setting: the message
// gave both whole recipes, a line of JSON each, for a changed --refine.
func TestMergeNamesTheOptionThatDiffers(t *testing.T) {
	u0 := plan.Unit{Prefix: "l.", Lo: 0, Hi: 2, Length: 32, Order: 2}
	u1 := plan.Unit{Prefix: "l.", Lo: 2, Hi: 4, Length: 32, Order: 2}
	units := []plan.Unit{u0, u1}
	opts := plan.Options{Order: 2, Chunk: 2, Spec: train.DefaultSpec()}
	p := &sessions.Part{Options: opts, Plan: plan.Hash(units), Shard: plan.Shard{Index: 0, Count: 2}, Units: []*plan.UnitResult{fittedUnit(t, u0)}}
	q := *p
	q.Shard.Index, q.Units = 1, []*plan.UnitResult{fittedUnit(t, u1)}
	q.Options.Spec.Refine = p.Options.Spec.Refine + 7
	_, err := sessions.MergeParts([]*sessions.Part{p, &q}, []string{"a", "b"}, units)
	want := fmt.Sprintf("a and b were made with different options: spec.refine %d and %d", p.Options.Spec.Refine, q.Options.Spec.Refine)
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A merge that lacks a shard's part names the shard, the task of the array to run again,
// and one given a shard twice names the files: the units alone did not say which task.
func TestMergeNamesTheShardsAmiss(t *testing.T) {
	var units []plan.Unit
	for i := range 3 {
		units = append(units, plan.Unit{Prefix: fmt.Sprintf("l%d.", i), Lo: 0, Hi: 2, Length: 32, Order: 2})
	}
	share := plan.Assign(units, 3)
	part := func(s int) *sessions.Part {
		p := &sessions.Part{Options: plan.Options{Order: 2, Chunk: 2}, Plan: plan.Hash(units), Shard: plan.Shard{Index: s, Count: 3}}
		for _, i := range share[s] {
			p.Units = append(p.Units, fittedUnit(t, units[i]))
		}
		return p
	}
	for _, c := range []struct {
		name   string
		shards []int
		want   string
	}{
		{"missing", []int{0, 2}, "; no part of shard 1/3 was given (a task that failed: run it again, it goes on from the work directory)"},
		{"two missing", []int{2}, "; no part of shards 0/3, 1/3 was given ("},
		{"twice", []int{0, 1, 2, 0}, "; p0.json, p3.json hold the same shard, 0/3"},
	} {
		var parts []*sessions.Part
		var names []string
		for k, s := range c.shards {
			parts, names = append(parts, part(s)), append(names, fmt.Sprintf("p%d.json", k))
		}
		_, err := sessions.MergeParts(parts, names, units)
		var cov *plan.CoverageError
		if !errors.As(err, &cov) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a coverage error with %q", c.name, err, c.want)
		}
	}
}
