package sessions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// must returns v, panicking on err (a test setup or a step that cannot fail).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func kernels(t testing.TB, seed uint64, shape ...int) *arrays.Array {
	rng := rand.New(rand.NewPCG(seed, 3))
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float64, n)
	for i := range data {
		data[i] = rng.NormFloat64() * math.Exp(-float64(i%64)/16)
	}
	return must(arrays.New(shape, data))
}

// richSession holds a filter of every form, a large bank, targets of every kind and jobs.
func richSession(t testing.TB) *sessions.Session {
	t.Helper()
	s := sessions.New()
	base := filtertest.Dense()
	for _, form := range filters.Forms {
		f, _, err := filters.Convert(base, form)
		if err != nil {
			t.Fatal(err)
		}
		must(s.AddFilter(filters.Document{Name: "toy " + string(form), Filter: f}))
	}
	must(s.AddFilter(filters.Document{Name: "layer 0", Bank: filtertest.TFBank(1, 16, 64)}))
	// a target listed between filters; a fit of it, linked to it and its job
	tiny := must(s.AddTarget(sessions.Target{Name: "tiny", Kernels: kernels(t, 2, 5), Origin: sessions.Origin{Note: "preset tiny"}}))
	big := must(filters.NewDense(randomMatrix(t, 12), make([]float64, 12), make([]float64, 12), 0))
	fit := must(s.AddEntry(sessions.Entry{Name: "dense 12", Filter: big, Origin: sessions.Origin{Note: "job #2", File: "d12.json", Target: tiny, Job: "j12"}}))
	must(s.AddTarget(sessions.Target{Name: "hyena", Kernels: kernels(t, 1, 4, 256), Source: &sessions.Source{Path: "hyena.npz", Tensor: "l3"}}))
	must(s.AddJob(sessions.Job{Kind: "distill", Spec: json.RawMessage(`{"target": "t8", "order": 16, "seed": 18446744073709551615}`)}))
	must(s.AddJob(sessions.Job{Kind: "fit", Spec: json.RawMessage(`{"x": [1, 2.50, 3e2]}`), Report: json.RawMessage(`{"loss": 1.5e-9, "ok": true, "note": "<&>"}`),
		Status: sessions.JobDone, Target: tiny, Result: fit, Log: []string{"started", "done: <&> ∠"}}))
	s.UI = sessions.UIState{Selected: "f7", FormTab: "tf", Plots: []string{"impulse", "bode"}, Overlay: tiny,
		Extra: map[string]json.RawMessage{"zoom": json.RawMessage(`{"x": [0, 100]}`)}}
	return s
}

func randomMatrix(t testing.TB, n int) [][]float64 {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, n)
		for j := range rows[i] {
			rows[i][j] = rng.NormFloat64() / (2 * math.Sqrt(float64(n)))
		}
	}
	return rows
}

func TestIDsAreStableAndNeverReused(t *testing.T) {
	s := sessions.New()
	f := filtertest.Dense()
	a := must(s.AddFilter(filters.Document{Name: "a", Filter: f}))
	b := must(s.AddFilter(filters.Document{Name: "b", Filter: f}))
	tg := must(s.AddTarget(sessions.Target{Name: "k", Kernels: kernels(t, 1, 8)}))
	if a != "f1" || b != "f2" || tg != "t3" {
		t.Fatalf("IDs %s %s %s, want f1 f2 t3", a, b, tg)
	}
	if err := s.Remove(b); err != nil {
		t.Fatal(err)
	}
	c := must(s.AddFilter(filters.Document{Name: "c", Filter: f}))
	if c != "f4" {
		t.Errorf("after removing f2 the next ID is %s, want f4", c)
	}
	// The counter survives a save and load, so removed IDs stay retired.
	s2 := must(sessions.Unmarshal(must(sessions.Marshal(s))))
	if d := must(s2.AddFilter(filters.Document{Filter: f})); d != "f5" {
		t.Errorf("after a reload the next ID is %s, want f5", d)
	}
	if err := s.Remove("f2"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("removing a removed ID: %v", err)
	}
}

func TestEditing(t *testing.T) {
	s := sessions.New()
	f := filtertest.Dense()
	id := must(s.AddFilter(filters.Document{Name: "orig", Filter: f}))
	s.UI.Selected = id
	gen := s.Generation()
	if !s.Dirty() {
		t.Error("a new session with a filter is not dirty")
	}
	if err := s.Rename(id, "renamed"); err != nil || s.Filters[0].Name != "renamed" || s.Generation() == gen {
		t.Errorf("Rename: %v %q", err, s.Filters[0].Name)
	}
	dup := must(s.Duplicate(id))
	if len(s.Filters) != 2 || s.Filters[1].ID != dup || s.Filters[1].Name != "renamed (copy)" {
		t.Fatalf("Duplicate: %+v", s.Filters)
	}
	if s.Filters[1].Filter == s.Filters[0].Filter {
		t.Error("Duplicate shares the filter")
	}
	if !slices.Equal(s.Filters[1].Filter.Impulse(32), f.Impulse(32)) {
		t.Error("Duplicate changed the filter")
	}
	tf, _, _ := filters.Convert(f, filters.FormTF)
	if err := s.ReplaceFilter(dup, filters.Document{Filter: tf}); err != nil || s.Filters[1].Filter.Form() != filters.FormTF || s.Filters[1].Name != "renamed (copy)" {
		t.Errorf("ReplaceFilter: %v", err)
	}
	if err := s.Remove(id); err != nil || s.UI.Selected != "" {
		t.Errorf("Remove of the selected item: %v, selected %q", err, s.UI.Selected)
	}
	if k, i := s.Lookup(dup); k != sessions.KindFilter || i != 0 {
		t.Errorf("Lookup(%s) = %v %d", dup, k, i)
	}
	if err := s.Rename("x9", "n"); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("Rename of a missing ID: %v", err)
	}
}

func TestAddValidates(t *testing.T) {
	s := sessions.New()
	bad := &filters.TransferFunction{Den: []float64{math.NaN()}, Num: []float64{1}}
	if _, err := s.AddFilter(filters.Document{Filter: bad}); !errors.Is(err, sessions.ErrInvalid) || !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("a NaN filter: %v", err)
	}
	if _, err := s.AddFilter(filters.Document{}); !errors.Is(err, sessions.ErrInvalid) {
		t.Errorf("an empty document: %v", err)
	}
	for _, k := range []*arrays.Array{
		{Shape: []int{2, 2, 2}, Data: make([]float64, 8)},
		{Shape: []int{0}, Data: []float64{}},
		{Shape: []int{3, 0}, Data: []float64{}},
		{Shape: []int{2}, Data: []float64{1, math.Inf(1)}},
	} {
		if _, err := s.AddTarget(sessions.Target{Kernels: k}); !errors.Is(err, sessions.ErrInvalid) {
			t.Errorf("kernels of shape %v: %v", k.Shape, err)
		}
	}
	if _, err := s.AddJob(sessions.Job{Kind: "x", Spec: json.RawMessage(`{"a":`)}); !errors.Is(err, sessions.ErrInvalid) {
		t.Errorf("a job with bad JSON: %v", err)
	}
	if s.Generation() != 0 || len(s.Filters)+len(s.Targets)+len(s.Jobs) != 0 {
		t.Error("failed adds changed the session")
	}
}

func TestCloneIsIndependent(t *testing.T) {
	s := richSession(t)
	c := s.Clone()
	must(c.AddFilter(filters.Document{Filter: filtertest.Dense()}))
	c.UI.Plots[0] = "changed"
	if err := c.Rename("f1", "other"); err != nil {
		t.Fatal(err)
	}
	if len(s.Filters) == len(c.Filters) || s.UI.Plots[0] != "impulse" || s.Filters[0].Name == "other" {
		t.Error("changing the clone changed the session")
	}
	if c.Generation() <= s.Generation() {
		t.Error("the clone's generation did not advance")
	}
}

// TestMarshalRoundTrip saves and reloads a session with every kind of item and checks that
// everything comes back bit for bit, and that a second save writes the same bytes.
func TestMarshalRoundTrip(t *testing.T) {
	s := richSession(t)
	b1 := must(sessions.Marshal(s))
	s2 := must(sessions.Unmarshal(b1))
	b2 := must(sessions.Marshal(s2))
	if !bytes.Equal(b1, b2) {
		t.Fatalf("Marshal∘Unmarshal is not a fixed point")
	}
	if len(s2.Filters) != len(s.Filters) || len(s2.Targets) != len(s.Targets) || len(s2.Jobs) != len(s.Jobs) {
		t.Fatal("items lost")
	}
	for i, e := range s.Filters {
		g := s2.Filters[i]
		if g.ID != e.ID || g.Name != e.Name {
			t.Errorf("entry %d: %s %q, want %s %q", i, g.ID, g.Name, e.ID, e.Name)
		}
		want, _ := filterfile.Marshal(e.Document())
		got, _ := filterfile.Marshal(g.Document())
		if !bytes.Equal(want, got) {
			t.Errorf("entry %s changed:\n%s\nthen\n%s", e.ID, want, got)
		}
	}
	for i, tg := range s.Targets {
		g := s2.Targets[i]
		if g.ID != tg.ID || g.Name != tg.Name || !g.Kernels.Equal(tg.Kernels) || (g.Source == nil) != (tg.Source == nil) {
			t.Errorf("target %s changed", tg.ID)
		}
	}
	if got := string(s2.Jobs[0].Spec); got != `{"target":"t8","order":16,"seed":18446744073709551615}` {
		t.Errorf("job spec = %s", got)
	}
	if got := string(s2.Jobs[1].Report); got != `{"loss":1.5e-9,"ok":true,"note":"<&>"}` {
		t.Errorf("job report = %s", got)
	}
	if s2.Jobs[0].Report != nil {
		t.Errorf("a job without report reads back %s", s2.Jobs[0].Report)
	}
	if s2.UI.Selected != "f7" || s2.UI.FormTab != "tf" || !slices.Equal(s2.UI.Plots, s.UI.Plots) || string(s2.UI.Extra["zoom"]) != `{"x":[0,100]}` || s2.UI.Overlay != "t8" {
		t.Errorf("UI = %+v", s2.UI)
	}
	// the order, the origins and the jobs' links, status and log
	if got, want := s2.Order(), s.Order(); !slices.Equal(got, want) || want[7] != "t8" {
		t.Errorf("order %v, want %v with t8 among the filters", got, want)
	}
	if e, _ := s2.Filter("f9"); e.Origin != (sessions.Origin{Note: "job #2", File: "d12.json", Target: "t8", Job: "j12"}) {
		t.Errorf("origin %+v", e.Origin)
	}
	if tg, _ := s2.Target("t8"); tg.Origin.Note != "preset tiny" {
		t.Errorf("target origin %+v", tg.Origin)
	}
	if j := s2.Jobs[1]; j.Status != sessions.JobDone || j.Target != "t8" || j.Result != "f9" || !slices.Equal(j.Log, []string{"started", "done: <&> ∠"}) {
		t.Errorf("job %+v", j)
	}
	if s2.Dirty() {
		t.Error("a loaded session is dirty")
	}
}

// TestPacking checks the size rule: arrays of more than InlineMax numbers are base64, the
// rest plain numbers; a large bank takes about 11 bytes per number.
func TestPacking(t *testing.T) {
	s := sessions.New()
	small := must(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0))
	must(s.AddFilter(filters.Document{Name: "small", Filter: small}))
	bank := filtertest.TFBank(3, 256, 64)
	must(s.AddFilter(filters.Document{Name: "big", Bank: bank}))
	b := must(sessions.Marshal(s))
	if !bytes.Contains(b, []byte(`"a": [-0.5],`)) {
		t.Error("a small filter is not written as plain numbers")
	}
	numbers := 256 * (2*64 + 1)
	if perNumber := float64(len(b)) / float64(numbers); perNumber > 12.5 {
		t.Errorf("a bank of 256 order-64 channels takes %.1f bytes per number", perNumber)
	}
	text, _ := filterfile.Marshal(filters.Document{Bank: bank})
	t.Logf("bank: %d numbers, session %d bytes, filter JSON %d bytes", numbers, len(b), len(text))
}

func TestUnmarshalVersions(t *testing.T) {
	good := string(must(sessions.Marshal(richSession(t))))
	v3 := strings.Replace(good, `"version": 2`, `"version": 3`, 1)
	_, err := sessions.Unmarshal([]byte(v3))
	var ve *sessions.VersionError
	if !errors.As(err, &ve) || err.Error() != "session version 3 is newer than this ssmlab supports (2)" {
		t.Errorf("version 3: %v", err)
	}
	for _, v := range []string{`0`, `-3`, `"1"`, `1.5`} {
		_, err := sessions.Unmarshal([]byte(strings.Replace(good, `"version": 2`, `"version": `+v, 1)))
		if !errors.Is(err, sessions.ErrInvalid) {
			t.Errorf("version %s: %v", v, err)
		}
	}
}

// badSessions are broken or hostile session files and what their error must say; they also
// seed FuzzUnmarshal.
func badSessions(t testing.TB) []struct{ name, text, want string } {
	head := `{"format": "ssmlab-session", "version": 1, `
	okFilter := `{"id": "f1", "filter": {"form": "tf", "a": [-0.5], "b": [1], "h0": 0}}`
	return []struct{ name, text, want string }{
		{"empty", ``, "unexpected end"},
		{"array", `[]`, "one JSON object, not an array"},
		{"filter file", `{"form": "tf", "a": [], "b": []}`, "this is a filter file, not a session"},
		{"no format", `{"version": 1}`, `no "format": "ssmlab-session"`},
		{"no version", `{"format": "ssmlab-session"}`, `missing key "version"`},
		{"unknown key", head + `"filterz": []}`, `unknown key "filterz" in the session`},
		{"duplicate key", head + `"filters": [], "filters": []}`, `duplicate key "filters"`},
		{"duplicate id", head + `"filters": [` + okFilter + `, ` + okFilter + `]}`, `two items have the ID "f1"`},
		{"bad id", head + `"filters": [{"id": "a b", "filter": {"form": "tf"}}]}`, `ID "a b"`},
		{"bad filter", head + `"filters": [{"id": "f1", "filter": {"form": "tf", "a": [1], "b": []}}]}`, `entry "f1": invalid filter:`},
		{"nan in packed filter", head + `"filters": [{"id": "f1", "filter": {"form": "tf", "a": {"dtype": "<f8", "shape": [1], "data": "AAAAAAAA+H8="}, "b": [1]}}]}`, "NaN"},
		{"lying packed shape", head + `"targets": [{"id": "t1", "kernels": {"dtype": "<f8", "shape": [100000000], "data": "AAAAAAAA8D8="}}]}`, "exceeds the limit"},
		{"short packed data", head + `"targets": [{"id": "t1", "kernels": {"dtype": "<f8", "shape": [2], "data": "AAAAAAAA8D8="}}]}`, "needs 16 bytes"},
		{"target without kernels", head + `"targets": [{"id": "t1", "name": "x"}]}`, `target "t1" has no "kernels"`},
		{"linked with kernels", head + `"targets": [{"id": "t1", "kernels": [1], "source": {"path": "a.npy", "tensor": ""}, "linked": true}]}`, "is linked and also has"},
		{"linked without source", head + `"targets": [{"id": "t1", "linked": true}]}`, `target "t1": a linked target needs a source path`},
		{"3-D kernels", head + `"targets": [{"id": "t1", "kernels": [[[1]]]}]}`, "want (length) or (channels, length)"},
		{"filters not array", head + `"filters": {}}`, `"filters" is an object, want an array`},
		{"job spec", head + `"jobs": [{"id": "j1", "kind": "x", "spec": {"a": 1, "a": 2}}]}`, `duplicate key "a"`},
		{"ui plots", head + `"ui": {"plots": [1]}}`, `"plots" of "ui" holds the number 1`},
		{"deep", head + `"ui": {"x": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, "nested more than 64 deep"},
		{"autosave time", head + `"autosave": {"origin": "", "saved": "yesterday"}}`, "not an RFC 3339 time"},
		{"trailing", head + `"filters": []} {}`, "unexpected data (an object) after"},
		{"order unknown", head + `"filters": [` + okFilter + `], "order": ["f1", "j2"]}`, `"order" names "j2", which is not a filter or target`},
		{"order twice", head + `"filters": [` + okFilter + `], "order": ["f1", "f1"]}`, `"order" names "f1" twice`},
		{"order not strings", head + `"order": [1]}`, `"order" of the session holds the number 1`},
		{"job status", head + `"jobs": [{"id": "j1", "kind": "x", "status": "asleep"}]}`, `job "j1": job status "asleep": want one of running, done`},
		{"job log", head + `"jobs": [{"id": "j1", "kind": "x", "log": "one line"}]}`, `"log" of job "j1" is the string "one line", want an array of strings`},
		{"origin key", head + `"filters": [{"id": "f1", "origin": {"from": "x"}, "filter": {"form": "tf", "a": [-0.5], "b": [1], "h0": 0}}]}`, `unknown key "from" in the origin of entry "f1"`},
		{"checkpoint", "PK\x03\x04\x14\x00\x00\x00\x08\x00", "this is an array file (an .npz or torch.save zip archive), not a session"},
	}
}

func TestUnmarshalBadInput(t *testing.T) {
	for _, tc := range badSessions(t) {
		_, err := sessions.Unmarshal([]byte(tc.text))
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case !errors.Is(err, sessions.ErrInvalid):
			t.Errorf("%s: %v does not wrap ErrInvalid", tc.name, err)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error spans lines: %q", tc.name, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %q does not contain %q", tc.name, err, tc.want)
		}
	}
}

func TestUnmarshalLenient(t *testing.T) {
	// A selection of a missing item is dropped; next_id below the IDs in use is raised; a
	// byte order mark is ignored.
	text := "\ufeff" + `{"format": "ssmlab-session", "version": 1, "next_id": 1,
	  "filters": [{"id": "f7", "origin": {"target": "t9", "job": "j9"}, "filter": {"form": "tf", "a": [-0.5], "b": [1], "h0": 0}}],
	  "jobs": [{"id": "j1", "kind": "x", "target": "t9", "result": "f8"}],
	  "ui": {"selected": "f99", "overlay": "t9"}}`
	s := must(sessions.Unmarshal([]byte(text)))
	if s.UI.Selected != "" || s.UI.Overlay != "" {
		t.Errorf("selected = %q, overlay = %q", s.UI.Selected, s.UI.Overlay)
	}
	if o, j := s.Filters[0].Origin, s.Jobs[0]; o != (sessions.Origin{}) || j.Target != "" || j.Result != "" {
		t.Errorf("links to missing items kept: %+v, %+v", o, j)
	}
	if id := must(s.AddFilter(filters.Document{Filter: filtertest.Dense()})); id != "f8" {
		t.Errorf("next ID %s, want f8", id)
	}
}

// TestAddSameItemOnce: Add of an item the session holds under its name, with identical
// content, adds nothing and returns that item (an import run twice added it twice); another
// item of that name gets name-2, and is then found there; a filter and kernels are told
// apart by their content, not their name.
func TestAddSameItemOnce(t *testing.T) {
	s := sessions.New()
	kernels := func(x float64) sessions.Item {
		return sessions.Item{Target: &sessions.Target{Name: "k", Kernels: &arrays.Array{Shape: []int{1, 3}, Data: []float64{1, x, x * x}}}}
	}
	filter := func(p float64) sessions.Item {
		return sessions.Item{Entry: &sessions.Entry{Name: "k", Filter: must(filters.NewTransferFunction([]float64{-p}, []float64{1}, 0))}}
	}
	for i, tc := range []struct {
		it   sessions.Item
		want sessions.Added
	}{
		{kernels(0.5), sessions.Added{ID: "t1", Name: "k"}},
		{kernels(0.5), sessions.Added{ID: "t1", Name: "k", Existing: true}},
		{kernels(0.25), sessions.Added{ID: "t2", Name: "k-2", Renamed: true}},
		{kernels(0.25), sessions.Added{ID: "t2", Name: "k-2", Existing: true}},
		{filter(0.5), sessions.Added{ID: "f3", Name: "k-3", Renamed: true}},
		{filter(0.5), sessions.Added{ID: "f3", Name: "k-3", Existing: true}},
		{filter(0.5 + 1e-16), sessions.Added{ID: "f4", Name: "k-4", Renamed: true}},
	} {
		if got := must(s.Add(tc.it)); got != tc.want {
			t.Errorf("add #%d: %+v, want %+v", i+1, got, tc.want)
		}
	}
	if s.Summary() != "2 filters, 2 targets, 0 jobs" {
		t.Errorf("the session holds %s", s.Summary())
	}
}

// TestFreeName: the one numbering of names (items and the workbench's suggested files): a
// taken ring-2 is followed by ring-3, not ring-2-2, and a taken test that fails gives up.
func TestFreeName(t *testing.T) {
	taken := map[string]bool{"ring": true, "ring-2": true}
	test := func(n string) (bool, error) { return taken[n], nil }
	for name, want := range map[string]string{"ring-2": "ring-3", "ring": "ring-3", "ring-7": "ring-7", "x-1-2": "x-1-2"} {
		if got, ok := sessions.FreeName(name, 10, test); !ok || got != want {
			t.Errorf("FreeName(%s) = %q, %v, want %s", name, got, ok, want)
		}
	}
	if got, ok := sessions.FreeName("ring", 2, test); ok {
		t.Errorf("FreeName with 2 tries, both taken: %q, want none", got)
	}
	if got, ok := sessions.FreeName("ring", 10, func(string) (bool, error) { return false, errors.New("cannot tell") }); ok {
		t.Errorf("FreeName whose test fails: %q, want none", got)
	}
	s := sessions.New()
	for _, p := range []float64{0.5, 0.25} {
		must(s.Add(sessions.Item{Entry: &sessions.Entry{Name: "ring-2", Filter: must(filters.NewTransferFunction([]float64{-p}, []float64{1}, 0))}}))
	}
	if got := s.UniqueName("ring-2", ""); got != "ring-4" {
		t.Errorf("UniqueName(ring-2) beside ring-2 and ring-3 = %q, want ring-4", got)
	}
}
