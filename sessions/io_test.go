package sessions_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
	"github.com/ssmlab/ssmlab/train"
)

// goldenDir holds the files NumPy wrote (testdata/golden/numpy/gen_numpy.py).
const goldenDir = "../testdata/golden/numpy"

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestImportGoldenKernels imports every single-array file NumPy wrote as a target.
func TestImportGoldenKernels(t *testing.T) {
	for file, arrs := range numtest.NumPyExpected(t, goldenDir) {
		want, ok := arrs[""]
		if !ok || len(want.Shape) == 0 || len(want.Shape) > 2 || slices.Contains(want.Shape, 0) {
			continue // multi-array files, scalars, 3-D and empty arrays are not kernels
		}
		it, err := sessions.Import(filepath.Join(goldenDir, file), sessions.ImportOptions{})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if it.Target == nil || !slices.Equal(it.Target.Kernels.Data, want.Data) || !slices.Equal(it.Target.Kernels.Shape, want.Shape) {
			t.Errorf("%s: imported %+v", file, it)
			continue
		}
		if it.Target.Source == nil || it.Target.Source.Path != filepath.Join(goldenDir, file) {
			t.Errorf("%s: source %+v", file, it.Target.Source)
		}
	}
}

func TestImportChoosing(t *testing.T) {
	multi := filepath.Join(goldenDir, "multi.npz")
	_, err := sessions.Import(multi, sessions.ImportOptions{})
	var ce *sessions.ChoiceError
	if !errors.As(err, &ce) || len(ce.Names) != 4 || !strings.Contains(err.Error(), `"bank"`) {
		t.Fatalf("no tensor chosen: %v", err)
	}
	it := must(sessions.Import(multi, sessions.ImportOptions{Tensor: "bank"}))
	if it.Target.Name != "multi:bank" || !slices.Equal(it.Target.Kernels.Shape, []int{3, 5}) {
		t.Errorf("bank: %q %v", it.Target.Name, it.Target.Kernels.Shape)
	}
	cols := must(sessions.Import(multi, sessions.ImportOptions{Tensor: "bank", Columns: true, Name: "cols"}))
	if cols.Target.Name != "cols" || !slices.Equal(cols.Target.Kernels.Shape, []int{5, 3}) || cols.Target.Kernels.Data[1] != it.Target.Kernels.Data[5] {
		t.Errorf("columns: %v", cols.Target.Kernels)
	}
	if _, err := sessions.Import(multi, sessions.ImportOptions{Tensor: "cube"}); !errors.Is(err, sessions.ErrInvalid) {
		t.Errorf("a 3-D tensor as kernels: %v", err)
	}
	// A name the file does not hold is the option's mistake, listing what it holds.
	oe := (*sessions.OptionError)(nil)
	if _, err := sessions.Import(multi, sessions.ImportOptions{Tensor: "nope"}); !errors.Is(err, arrays.ErrNotFound) || !errors.As(err, &oe) || oe.Option != "tensor" || !strings.Contains(err.Error(), `multi.npz: tensor "nope" is no array of the file, which holds "bank", "bank_f4", "cube", "arr_0"`) {
		t.Errorf("a missing tensor: %v", err)
	}
	// Only one tensor of a checkpoint is a float array besides the layer: the layer wins.
	st := must(sessions.Import(filepath.Join(goldenDir, "rtf.safetensors"), sessions.ImportOptions{}))
	if st.Entry == nil || st.Entry.Name != "rtf:layers.0.filter" {
		t.Errorf("checkpoint: %+v", st)
	}
	norm := must(sessions.Import(filepath.Join(goldenDir, "rtf.safetensors"), sessions.ImportOptions{Tensor: "layers.0.norm.weight"}))
	if norm.Target == nil || norm.Target.Kernels.Len() != 3 {
		t.Errorf("a named tensor of a checkpoint: %+v", norm)
	}
}

func TestImportCSVColumn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k.csv")
	os.WriteFile(p, []byte("0.5\n0.25\n0.125\n"), 0o644)
	it := must(sessions.Import(p, sessions.ImportOptions{}))
	if !slices.Equal(it.Target.Kernels.Shape, []int{3}) {
		t.Errorf("a single column is %v, want one kernel of length 3", it.Target.Kernels.Shape)
	}
}

func TestImportJSON(t *testing.T) {
	dir := t.TempDir()
	f := filtertest.Dense()
	fp := filepath.Join(dir, "toy.json")
	os.WriteFile(fp, must(filterfile.Marshal(filters.Document{Filter: f})), 0o644)
	it := must(sessions.Import(fp, sessions.ImportOptions{}))
	if it.Entry == nil || it.Entry.Name != "toy" || !slices.Equal(it.Entry.Filter.Impulse(16), f.Impulse(16)) {
		t.Errorf("filter file: %+v", it)
	}
	tgt := &sessions.Target{Name: "k", Kernels: kernels(t, 4, 2, 50)}
	tp := filepath.Join(dir, "target.json")
	os.WriteFile(tp, must(sessions.MarshalTarget(tgt)), 0o644)
	it = must(sessions.Import(tp, sessions.ImportOptions{}))
	if it.Target == nil || it.Target.Name != "k" || !it.Target.Kernels.Equal(tgt.Kernels) {
		t.Errorf("target file: %+v", it)
	}
	sp := filepath.Join(dir, "s.json")
	if err := richSession(t).Save(sp); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Import(sp, sessions.ImportOptions{}); err == nil || !strings.Contains(err.Error(), "this is a session file") {
		t.Errorf("a session: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"form": "tf", "a": [1], "b": []}`), 0o644)
	if _, err := sessions.Import(bad, sessions.ImportOptions{}); !errors.Is(err, filters.ErrInvalid) || !strings.HasPrefix(err.Error(), bad+": invalid filter:") {
		t.Errorf("a bad filter: %v", err)
	}
	other := filepath.Join(dir, "x.bin")
	os.WriteFile(other, []byte("\x00\x01binary"), 0o644)
	if _, err := sessions.Import(other, sessions.ImportOptions{}); !errors.Is(err, arrays.ErrUnsupported) {
		t.Errorf("an unknown file: %v", err)
	}
}

// TestExportImportRoundTrip exports a bank and a target in every format and imports them
// back: exact in float64, and to float32 rounding in float32.
func TestExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	bank := &sessions.Entry{ID: "f1", Name: "layer", Bank: filtertest.TFBank(21, 4, 8)}
	target := &sessions.Target{ID: "t2", Name: "hyena", Kernels: kernels(t, 22, 3, 40)}
	for _, format := range sessions.ExportFormats {
		for _, it := range []sessions.Item{{Entry: bank}, {Target: target}} {
			if it.Entry != nil && (format == sessions.ExportCSV || format == sessions.ExportNPY) {
				continue // a filter exports its impulse response there; see TestExportImpulse
			}
			p := filepath.Join(dir, string(format)+"."+string(format))
			if format == sessions.ExportJSON {
				p = filepath.Join(dir, "x.json")
			}
			if _, err := sessions.ExportFile(p, []sessions.Item{it}, sessions.ExportOptions{Format: format}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			back, err := sessions.Import(p, sessions.ImportOptions{})
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if it.Entry != nil {
				want, got := must(filterfile.Marshal(filters.Document{Bank: bank.Bank})), must(filterfile.Marshal(filters.Document{Bank: back.Entry.Bank}))
				if !bytes.Equal(want, got) {
					t.Errorf("%s: the bank changed", format)
				}
				continue
			}
			if !back.Target.Kernels.Equal(target.Kernels) {
				t.Errorf("%s: the kernels changed", format)
			}
		}
	}
}

func TestExportImpulse(t *testing.T) {
	bank := &sessions.Entry{Name: "layer", Bank: filtertest.TFBank(23, 3, 4)}
	b := must(sessions.Export([]sessions.Item{{Entry: bank}}, sessions.ExportOptions{Format: sessions.ExportCSV, Length: 50})).Data
	a := must(arrays.ReadCSV(bytes.NewReader(b)))
	if !slices.Equal(a.Shape, []int{3, 50}) {
		t.Fatalf("shape %v", a.Shape)
	}
	for c, f := range bank.Bank.Channels {
		if !slices.Equal(a.Rows()[c], f.Impulse(50)) {
			t.Errorf("channel %d: CSV row is not the impulse response", c)
		}
	}
	unstable := must(filters.NewTransferFunction([]float64{-1e200}, []float64{1e200}, 0))
	_, err := sessions.Export([]sessions.Item{{Entry: &sessions.Entry{Name: "u", Filter: unstable}}}, sessions.ExportOptions{Format: sessions.ExportNPY})
	if !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("unstable: %v", err)
	}
}

func TestExportSessionItems(t *testing.T) {
	s := richSession(t)
	items := must(s.Items())
	if len(items) != len(s.Filters)+len(s.Targets) {
		t.Fatalf("%d items", len(items))
	}
	exp := must(sessions.Export(items, sessions.ExportOptions{Format: sessions.ExportSafetensors, Prefix: "m."}))
	b := exp.Data
	if len(exp.Reports) == 0 {
		t.Error("no conversion reports for the non-tf filters")
	}
	if len(exp.ReadBack) != len(s.Filters) {
		t.Errorf("%d read-back checks for %d filters", len(exp.ReadBack), len(s.Filters))
	}
	st := must(arrays.OpenSafetensors(bytes.NewReader(b), int64(len(b))))
	var names []string
	for _, in := range st.Arrays() {
		names = append(names, in.Name)
	}
	for _, want := range []string{"m.f1.ab", "m.f1.h_0", "m.f7.ab", "m.t10.kernels"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tensor %s in %v", want, names)
		}
	}
	if st.Metadata["producer"] != "ssmlab" {
		t.Errorf("metadata %v", st.Metadata)
	}
	if _, err := sessions.Export(items, sessions.ExportOptions{Format: sessions.ExportJSON}); err == nil {
		t.Error("json of several items should fail")
	}
	id := must(s.Find("hyena"))
	if id != "t10" {
		t.Errorf("Find(hyena) = %s", id)
	}
	if _, err := s.Items("j11"); !errors.Is(err, sessions.ErrInvalid) {
		t.Errorf("exporting a job: %v", err)
	}
	// A key the session does not hold, or a name two items share, is the mistake of
	// ssmlab export's --id, listing the items.
	oe := (*sessions.OptionError)(nil)
	if _, err := s.Find("nothing"); !errors.Is(err, sessions.ErrNotFound) || !errors.As(err, &oe) || oe.Option != "id" || !strings.HasPrefix(err.Error(), `id "nothing" is no item's ID or name: the session holds f1 (`) {
		t.Errorf("Find of nothing: %v", err)
	}
	if err := s.Rename(id, s.Filters[0].Name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find(s.Filters[0].Name); !errors.Is(err, sessions.ErrNotFound) || !errors.As(err, &oe) || oe.Option != "id" || !strings.Contains(err.Error(), "2 items are named") {
		t.Errorf("Find of a name two items share: %v", err)
	}
}

// TestExportDefaultLayoutFallsBack: a diagonal filter exported with no layout named goes to
// the first of s4d, stripedhyena and rtf that holds it, the note saying which and why the
// others do not: an unstable one to stripedhyena (the s4d layout's exp transform holds no
// pole outside the unit circle), one of a pole at 0 to rtf (the modal layouts take the
// poles' logarithms). An rtf setting given (TruncLen) keeps it in rtf, with no note on the
// layout, one that the .npz file records no trunc_len (import reads it as 0 without one); a tf
// filter goes to rtf, with none. A safetensors file's metadata names the layout its filters
// share, and none where they are written in several.
func TestExportDefaultLayoutFallsBack(t *testing.T) {
	diag := func(name string, poles []complex128) sessions.Item {
		d := must(filters.NewDiagonal(poles, []complex128{1, 2}, 0))
		return sessions.Item{Entry: &sessions.Entry{Name: name, Filter: d}}
	}
	unstable, zero, stable := diag("unstable", []complex128{1.5, 0.5}), diag("zero", []complex128{0, 0.5}), diag("stable", []complex128{-0.5, 0.5})
	tf := sessions.Item{Entry: &sessions.Entry{Name: "tf", Filter: must(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0))}}
	for _, tc := range []struct {
		it       sessions.Item
		truncLen int
		lay      layouts.Layout
		note     string // "" for none
	}{
		{stable, 0, layouts.S4D, `"stable": written in the s4d layout, chosen for its diagonal form`},
		{unstable, 0, layouts.StripedHyena, `"unstable": written in the stripedhyena layout, chosen for its diagonal form: it stores the poles and residues as they are, where the rtf layout's polynomial coefficients may not hold them (a layout named is written instead); the s4d layout cannot hold it (channel 0, mode 0: −Re A = `},
		{zero, 0, layouts.RTF, `"zero": written in the rtf layout, converted to tf: no layout that stores its diagonal form as it is holds it: the s4d layout cannot hold it (channel 0: pole 0 is 0, which the s4d layout cannot hold (it takes the poles' logarithms)); the stripedhyena layout cannot hold it (`},
		{stable, 64, layouts.RTF, "a .npz file records no trunc_len: import it with --trunc-len 64"},
		{tf, 0, layouts.RTF, ""},
	} {
		name := tc.it.Entry.Name
		exp, err := sessions.Export([]sessions.Item{tc.it}, sessions.ExportOptions{Format: sessions.ExportNPZ, TruncLen: tc.truncLen})
		if err != nil || len(exp.ReadBack) != 1 || exp.ReadBack[0].Layout != tc.lay || exp.Failed() {
			t.Errorf("%s (trunc_len %d): %+v, %v; want it written in %s", name, tc.truncLen, exp.ReadBack, err, tc.lay)
			continue
		}
		if tc.note == "" && len(exp.Notes) != 0 || tc.note != "" && (len(exp.Notes) != 1 || !strings.HasPrefix(exp.Notes[0], tc.note)) {
			t.Errorf("%s (trunc_len %d): notes %q, want %q", name, tc.truncLen, exp.Notes, tc.note)
		}
	}
	for _, tc := range []struct {
		items []sessions.Item
		want  string
	}{
		{[]sessions.Item{stable, unstable}, "s4d stripedhyena"},
		{[]sessions.Item{stable, stable}, "s4d s4d"},
	} {
		exp := must(sessions.Export(tc.items, sessions.ExportOptions{Format: sessions.ExportSafetensors}))
		st := must(arrays.OpenSafetensors(bytes.NewReader(exp.Data), int64(len(exp.Data))))
		var lays []string
		for _, c := range exp.ReadBack {
			lays = append(lays, string(c.Layout))
		}
		meta, shared := st.Metadata["layout"]
		if strings.Join(lays, " ") != tc.want || shared != (len(slices.Compact(slices.Clone(lays))) == 1) || shared && meta != lays[0] {
			t.Errorf("items written in %v: metadata layout %q (%v)", lays, meta, shared)
		}
	}
}

// TestExportModalOptionPicksLayout: with no layout named, an option of some layouts (the
// model's length, which the rtf layout takes as its trunc_len; an s4d setting) asks for a
// layout of the filter's form that takes it: a diagonal filter goes to s4d, or where s4d
// does not hold it to stripedhyena, never to rtf, saying so in a note; and where no layout of
// its form takes it (a tf filter's is rtf), it is refused as an *OptionError naming the
// option, the item and the layouts of its form. Check refused the length before any item
// was read, as if rtf were named.
func TestExportModalOptionPicksLayout(t *testing.T) {
	diag := func(name string, poles []complex128) sessions.Item {
		d := must(filters.NewDiagonal(poles, []complex128{1, 2}, 0))
		return sessions.Item{Entry: &sessions.Entry{Name: name, Filter: d}}
	}
	stable, unstable := diag("stable", []complex128{-0.5, 0.5}), diag("unstable", []complex128{1.5, 0.5})
	tf := sessions.Item{Entry: &sessions.Entry{Name: "tf", Filter: must(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0))}}
	const L = 64
	for _, tc := range []struct {
		it      sessions.Item
		length  int
		options map[string]string
		lay     layouts.Layout
		note    string
	}{
		{stable, L, nil, layouts.S4D, `"stable": written in the s4d layout, chosen for its diagonal form`},
		{unstable, L, nil, layouts.StripedHyena, `"unstable": written in the stripedhyena layout, chosen for its diagonal form: it stores the poles and residues as they are, where the rtf layout's polynomial coefficients may not hold them (a layout named is written instead); the s4d layout cannot hold it (`},
		{stable, 0, map[string]string{"disc": "bilinear"}, layouts.S4D, `"stable": written in the s4d layout, chosen for its diagonal form`},
	} {
		o := sessions.ExportOptions{Format: sessions.ExportNPZ, Options: tc.options}
		if tc.length > 0 {
			o.SetLength(tc.length)
		}
		exp, err := sessions.Export([]sessions.Item{tc.it}, o)
		if err != nil || len(exp.ReadBack) != 1 || exp.ReadBack[0].Layout != tc.lay || exp.Failed() || exp.ReadBack[0].ModelLength != tc.length {
			t.Errorf("%s, length %d, %v: %+v, %v; want it written in %s", tc.it.Entry.Name, tc.length, tc.options, exp.ReadBack, err, tc.lay)
			continue
		}
		if len(exp.Notes) != 1 || !strings.HasPrefix(exp.Notes[0], tc.note) {
			t.Errorf("%s, length %d, %v: notes %q, want %q", tc.it.Entry.Name, tc.length, tc.options, exp.Notes, tc.note)
		}
	}
	o := sessions.ExportOptions{Format: sessions.ExportNPZ}
	o.SetLength(L)
	if lays, err := o.DefaultLayouts(filters.FormDiagonal); err != nil || !slices.Equal(lays, []layouts.Layout{layouts.S4D, layouts.StripedHyena}) {
		t.Errorf("the layouts of a diagonal filter with a length: %v, %v", lays, err)
	}
	// A tf filter's one layout, rtf, takes no length: refused naming the option, the item
	// (once, before the refusal: it was named in it again) and its form's layout, before
	// anything is written.
	const lengthWant = `length 64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window; with no layout named, a tf filter is written in the rtf layout`
	_, err := sessions.Export([]sessions.Item{tf}, o)
	if oe := (*sessions.OptionError)(nil); !errors.As(err, &oe) || oe.Option != "length" || err.Error() != `"tf": `+lengthWant {
		t.Errorf("a tf filter with a length: %v, want an *OptionError %q after the item's name, once", err, lengthWant)
	}
	if _, err := o.DefaultLayouts(filters.FormTF); err == nil || err.Error() != lengthWant {
		t.Errorf("DefaultLayouts of a tf filter with a length: %v", err)
	}
	// An s4d setting the same way, in package layouts' words.
	_, err = sessions.Export([]sessions.Item{tf}, sessions.ExportOptions{Format: sessions.ExportNPZ, Options: map[string]string{"disc": "bilinear"}})
	if le := (*layouts.OptionLayoutError)(nil); !errors.As(err, &le) || !errors.Is(err, sessions.ErrInvalid) || !strings.HasSuffix(err.Error(), `"tf": --disc is an option of the s4d and s5 layout, not of rtf; with no layout named, a tf filter is written in the rtf layout`) || strings.Count(err.Error(), `"tf"`) != 1 {
		t.Errorf("a tf filter with an s4d setting: %v", err)
	}
}

// zeroCrowdedDiagonal is a diagonal filter no default layout holds: a mode at 0 (of residue
// 1, no rounding), whose logarithm the s4d and stripedhyena layouts cannot take, and sixteen
// real poles crowded in [0.95, 0.99], which as tf coefficients read back unstable in float64
// (rtf); second-order sections hold it (sos).
func zeroCrowdedDiagonal(t *testing.T) sessions.Item {
	t.Helper()
	poles, res := []complex128{0}, []complex128{1}
	for i := range 16 {
		poles = append(poles, complex(0.95+0.04*float64(i)/15, 0))
		res = append(res, complex(1/float64(i+1), 0))
	}
	return sessions.Item{Entry: &sessions.Entry{Name: "zero crowded", Filter: must(filters.NewDiagonal(poles, res, 0))}}
}

// TestExportRefusalListsTried: a diagonal filter that no default layout holds (s4d and
// stripedhyena cannot write it, rtf's tensors read back unstable) is refused by a check whose
// summary lists the layouts tried before rtf and why each refused, as the note of one
// written says it, and offers only the layout not tried (sos, which holds it); it offered
// "the s4d, stripedhyena or sos layout" that had just been tried. With rtf named, all three
// are offered. Where the last layout tried cannot be written (a length keeps the filter to
// s4d and stripedhyena), the error lists the ones before it.
func TestExportRefusalListsTried(t *testing.T) {
	it := zeroCrowdedDiagonal(t)
	exp := must(sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportNPZ}))
	if !exp.Failed() || len(exp.ReadBack) != 1 || exp.ReadBack[0].Layout != layouts.RTF || len(exp.Notes) != 0 {
		t.Fatalf("no layout named: %+v, notes %q; want rtf's check failed, and no note", exp.ReadBack, exp.Notes)
	}
	c := exp.ReadBack[0]
	if got := []layouts.Layout{c.Tried[0].Layout, c.Tried[1].Layout}; len(c.Tried) != 2 || !slices.Equal(got, []layouts.Layout{layouts.S4D, layouts.StripedHyena}) {
		t.Errorf("tried %+v, want s4d and stripedhyena", c.Tried)
	}
	text, warn := c.Summary("--dtype float64")
	for _, want := range []string{
		"reads back in the rtf layout as float64 with channel 0 unstable",
		"; tried before the rtf layout: the s4d layout cannot hold it (channel 0: pole 0 is 0, which the s4d layout cannot hold (it takes the poles' logarithms)); the stripedhyena layout cannot hold it (channel 0: pole 0 is 0, which the stripedhyena layout cannot hold",
		"; the sos layout (second-order sections, not polynomial coefficients of the whole order) may hold it",
	} {
		if !warn || !strings.Contains(text, want) {
			t.Errorf("summary %q (warn %v), want it saying %q", text, warn, want)
		}
	}
	if strings.Contains(text, "s4d, stripedhyena or sos") {
		t.Errorf("summary %q offers the layouts tried", text)
	}
	// What it offers holds it.
	sos := must(sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportNPZ, Layout: layouts.SOS}))
	if sos.Failed() {
		t.Errorf("the sos layout offered does not hold it: %+v", sos.ReadBack)
	}
	// rtf named: nothing was tried before it, and every layout of poles is offered.
	named := must(sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportNPZ, Layout: layouts.RTF}))
	if text, _ := named.ReadBack[0].Summary("--dtype float64"); strings.Contains(text, "tried before") || !strings.Contains(text, "; the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it") {
		t.Errorf("rtf named: summary %q", text)
	}
	// A length: s4d and stripedhyena alone, neither of which can write it.
	o := sessions.ExportOptions{Format: sessions.ExportNPZ}
	o.SetLength(64)
	_, err := sessions.Export([]sessions.Item{it}, o)
	if want := "which the stripedhyena layout cannot hold (it takes the poles' logarithms); tried before the stripedhyena layout: the s4d layout cannot hold it (channel 0: pole 0 is 0"; !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("with a length: %v, want it saying %q", err, want)
	}
}

// TestSessionImportAdd imports files into a session, saves and reloads it.
func TestSessionImportAdd(t *testing.T) {
	s := sessions.New()
	for _, f := range []string{"rtf.npz", "bank_f8_f.npy", "k_f2_be.npy", "bank.csv"} {
		it := must(sessions.Import(filepath.Join(goldenDir, f), sessions.ImportOptions{}))
		must(s.Add(it))
	}
	s2 := must(sessions.Unmarshal(must(sessions.Marshal(s))))
	if s2.Summary() != "1 filter, 3 targets, 0 jobs" {
		t.Errorf("summary %q", s2.Summary())
	}
	for i := range s.Targets {
		if !s2.Targets[i].Kernels.Equal(s.Targets[i].Kernels) || *s2.Targets[i].Source != *s.Targets[i].Source {
			t.Errorf("target %d changed", i)
		}
	}
}

func TestReadBackCheckSummary(t *testing.T) {
	for _, tc := range []struct {
		c          sessions.ReadBackCheck
		warn       bool
		want, lack string
	}{
		{sessions.ReadBackCheck{RelError: 3e-9, Length: 1024, Channel: 2, DType: arrays.Float64, TruncLen: 512},
			false, "reads back as float64 (trunc_len 512) to relative error 3e-09 over 1024 samples", "channel"},
		// The rtf layout is named as the others are, and as export's summary names it (QA:
		// "reads back as float64" beside "as safetensors in the rtf layout").
		{sessions.ReadBackCheck{RelError: 3e-9, Length: 1024, Channel: 2, DType: arrays.Float64, TruncLen: 512, Layout: layouts.RTF},
			false, "reads back in the rtf layout as float64 (trunc_len 512) to relative error 3e-09 over 1024 samples", "channel"},
		{sessions.ReadBackCheck{RelError: 2e-6, Length: 64, Channel: 2, DType: arrays.Float64},
			true, "reads back as float64 to relative error 2e-06 over 64 samples (channel 2), above the 1e-06 float64 tensors are held to; the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it", "--dtype"},
		// float64 is offered only where its check passed (QA F6: it was offered unchecked,
		// and failed too), and where it failed the summary says the dtype is not the cause.
		{sessions.ReadBackCheck{RelError: 4e-3, Length: 64, Channel: 1, DType: arrays.Float32},
			true, "(channel 1), above the 1e-04 float32 tensors are held to; the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it", "float64 "},
		{sessions.ReadBackCheck{RelError: 4e-3, Length: 64, Channel: 1, DType: arrays.Float32, Float64: &sessions.ReadBackCheck{RelError: 3e-12, Length: 64, DType: arrays.Float64}},
			true, "(channel 1), above the 1e-04 float32 tensors are held to; the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it; --dtype float64 holds it (checked: relative error 3e-12)", "trunc_len"},
		{sessions.ReadBackCheck{RelError: 4e-3, Length: 64, Channel: 1, DType: arrays.Float32, Float64: &sessions.ReadBackCheck{RelError: 2e13, Length: 64, Unstable: []int{0}, DType: arrays.Float64}},
			true, "(channel 1), above the 1e-04 float32 tensors are held to; it fails in float64 too (the rtf layout's polynomial coefficients lose it, not the dtype); the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it", "--dtype"},
		// The truncation's correction is named where the tensors without it pass (QA F8).
		{sessions.ReadBackCheck{RelError: 1.1e-6, Length: 64, Channel: 0, DType: arrays.Float64, TruncLen: 64, Untruncated: &sessions.ReadBackCheck{RelError: 2e-16, Length: 64, DType: arrays.Float64}},
			true, "above the 1e-06 float64 tensors are held to; the correction for trunc_len 64 loses it: without trunc_len (a module built without it) it holds (checked: relative error 2e-16); the s4d", "float64 too"},
		{sessions.ReadBackCheck{RelError: 1.1e-6, Length: 64, Channel: 0, DType: arrays.Float64, TruncLen: 64, Untruncated: &sessions.ReadBackCheck{RelError: 2e-6, Length: 64, DType: arrays.Float64}},
			true, "above the 1e-06 float64 tensors are held to; the s4d", "without trunc_len"},
		{sessions.ReadBackCheck{RelError: 4e-3, Length: 64, Channel: 1, DType: arrays.Float32, Layout: layouts.S4D, Float64: &sessions.ReadBackCheck{RelError: 2e-3, Length: 64, DType: arrays.Float64, Layout: layouts.S4D}},
			true, "above the 1e-04 float32 tensors are held to; it fails in float64 too (the dtype is not what loses it)", "may hold"},
		{sessions.ReadBackCheck{RelError: 4e-6, Length: 64, Channel: 1, DType: arrays.Float32},
			false, "reads back as float32 to relative error 4e-06 over 64 samples", "channel"},
		// A window the work budget cut short is said to be (layouts.Check.Cut).
		{sessions.ReadBackCheck{RelError: 4e-6, Length: 300, Cut: true, DType: arrays.Float32},
			false, "reads back as float32 to relative error 4e-06 over the 300 samples the check's work budget allows", "channel"},
		{sessions.ReadBackCheck{RelError: 4e-3, Length: 300, Cut: true, Channel: 1, DType: arrays.Float32, Layout: layouts.S4D},
			true, "to relative error 0.004 over the 300 samples the check's work budget allows (channel 1)", "--dtype float64 holds"},
		{sessions.ReadBackCheck{RelError: 4e-3, Length: 64, Channel: 1, DType: arrays.Float32, Layout: layouts.StripedHyena, Float64: &sessions.ReadBackCheck{RelError: 1e-15, Length: 64, DType: arrays.Float64, Layout: layouts.StripedHyena}},
			true, "reads back in the stripedhyena layout as float32 to relative error 0.004 over 64 samples (channel 1), above the 1e-04 float32 tensors are held to; --dtype float64 holds it (checked: relative error 1e-15)", "s4d"},
		// Counts of 1 are singular: "1 stable channels in all read back unstable" read wrong;
		// and the unstable are counted among the stable channels, in a sentence ("1 stable
		// channel in all reads back unstable" read as a riddle).
		{sessions.ReadBackCheck{RelError: 1e-9, Length: 64, Stable: 4, Unstable: []int{3}, DType: arrays.Float64},
			true, "with channel 3 unstable (1 of 4 stable channels reads back unstable; relative error 1e-09 over 64 samples); the s4d", "--dtype"},
		{sessions.ReadBackCheck{RelError: 1e-9, Length: 64, Stable: 6, Unstable: []int{3, 5}, DType: arrays.Float64},
			true, "with channel 3 unstable (2 of 6 stable channels read back unstable; relative error 1e-09 over 64 samples); the s4d", "--dtype"},
		{sessions.ReadBackCheck{RelError: 1e-9, Length: 64, Stable: 1, Unstable: []int{0}, DType: arrays.Float64},
			true, "with channel 0 unstable (1 of 1 stable channel reads back unstable;", "--dtype"},
		// Where the stable channels were not counted, the unstable alone are.
		{sessions.ReadBackCheck{RelError: 1e-9, Length: 64, Unstable: []int{3, 5}, DType: arrays.Float64},
			true, "with channel 3 unstable (2 stable channels read back unstable; relative error", "in all"},
		{sessions.ReadBackCheck{RelError: 3e-9, Length: 1, DType: arrays.Float64, TruncLen: 1},
			false, "reads back as float64 (trunc_len 1) to relative error 3e-09 over 1 sample", "samples"},
		{sessions.ReadBackCheck{RelError: 3e-9, Length: 1, ModelLength: 1, DType: arrays.Float64, Layout: layouts.S4D},
			false, "reads back in the s4d layout as float64 to relative error 3e-09 over 1 sample (--length)", "samples"},
		{sessions.ReadBackCheck{RelError: 1.7976931348623157e308, Length: 64, DType: arrays.Float64},
			true, "relative error overflow", "e+308"},
		// A distilled layer's channels are held to a tenth of their fit errors where that is
		// more than their dtype's limit: the summary says so when it is.
		{sessions.ReadBackCheck{RelError: 4e-6, Length: 64, Channel: 1, DType: arrays.Float32, Errors: []float64{1e-6, 4e-6}, FitErrors: []float64{1e-2, 1e-5}},
			false, "reads back as float32 to relative error 4e-06 over 64 samples", "fit error"},
		{sessions.ReadBackCheck{RelError: 4e-4, Length: 64, Channel: 1, DType: arrays.Float32, Layout: layouts.S4D, Errors: []float64{1e-6, 4e-4}, FitErrors: []float64{1e-5, 5e-3}},
			false, "reads back in the s4d layout as float32 to relative error 0.0004 over 64 samples, above the 1e-04 float32 tensors are held to but within a tenth of each channel's fit error (the read-back comes nearest its limit on channel 1: 0.0004 against a fit error of 0.005)", "--dtype"},
		// The channel named is the one nearest its limit, not the one of the largest error
		// (channel 0 here, 4e-4 against a limit of 1e-3; channel 1's 2e-4 is 2/3 of its 3e-4).
		{sessions.ReadBackCheck{RelError: 4e-4, Length: 64, Channel: 0, DType: arrays.Float32, Errors: []float64{4e-4, 2e-4}, FitErrors: []float64{1e-2, 3e-3}},
			false, "within a tenth of each channel's fit error (the read-back comes nearest its limit on channel 1: 0.0002 against a fit error of 0.003)", "worst"},
		{sessions.ReadBackCheck{RelError: 4e-4, Length: 64, Channel: 1, DType: arrays.Float32, Layout: layouts.S4D, Errors: []float64{2e-4, 4e-4}, FitErrors: []float64{1e-3, 5e-3}},
			true, "to relative error 0.0002 over 64 samples on channel 0, above both the 1e-04 float32 tensors are held to and a tenth of that channel's fit error (0.001)", "channel 1"},
		{sessions.ReadBackCheck{Err: errors.New("first\nsecond"), DType: arrays.Float32, TruncLen: 8},
			true, "cannot be read back as float32 (trunc_len 8): first; second; the s4d", "relative error"},
	} {
		got, warn := tc.c.Summary("--dtype float64")
		if warn != tc.warn || !strings.Contains(got, tc.want) || strings.Contains(got, tc.lack) {
			t.Errorf("%+v: got %q (warn %v), want %q (warn %v) without %q", tc.c, got, warn, tc.want, tc.warn, tc.lack)
		}
	}
}

// TestReadBackCheckSummaryOffersPoleLayouts: a failed rtf check offers the layouts that store
// poles, as package layouts lists them (PoleLayouts), but for those tried before rtf.
func TestReadBackCheckSummaryOffersPoleLayouts(t *testing.T) {
	poles := layouts.PoleLayouts()
	for k := range len(poles) - 1 {
		var tried []sessions.TriedLayout
		for _, lay := range poles[:k] {
			tried = append(tried, sessions.TriedLayout{Layout: lay, Why: "cannot hold it"})
		}
		c := sessions.ReadBackCheck{RelError: 4e-3, Length: 64, DType: arrays.Float32, Layout: layouts.RTF, Tried: tried}
		want := "; the " + train.Choices(poles[k:]) + " layout (poles, not polynomial coefficients) may hold it"
		if text, _ := c.Summary("--dtype float64"); !strings.Contains(text, want) {
			t.Errorf("tried %v: summary %q, want %q", poles[:k], text, want)
		}
	}
}

// TestImportKernelShapes: a (1, H, L) batch of one imports as H kernels (it was "invalid
// session"), a complex array is refused as kernels, and a torch.save file is read as such
// (it was "npz: the archive holds no .npy entries").
func TestImportKernelShapes(t *testing.T) {
	a, _ := arrays.New([]int{1, 2, 3}, []float64{1, 2, 3, 4, 5, 6})
	b, _ := arrays.EncodeNPY(a, arrays.Float64)
	it, err := sessions.ImportData(b, "k.npy", sessions.ImportOptions{})
	if err != nil || it.Target == nil || !slices.Equal(it.Target.Kernels.Shape, []int{2, 3}) {
		t.Errorf("(1, 2, 3) kernels: %+v, %v; want 2 kernels of length 3", it, err)
	}
	if _, err := sessions.Import(filepath.Join(goldenDir, "complex.npy"), sessions.ImportOptions{}); err == nil || !strings.Contains(err.Error(), "complex") {
		t.Errorf("complex array as kernels: %v", err)
	}
	it, err = sessions.Import("../testdata/golden/torch/module.pt", sessions.ImportOptions{Tensor: "kernel"})
	if err != nil || it.Target == nil || !slices.Equal(it.Target.Kernels.Shape, []int{2, 5}) {
		t.Errorf("module.pt kernel: %+v, %v", it, err)
	}
	if _, err := sessions.Import("../testdata/golden/torch/module.pt", sessions.ImportOptions{}); err == nil || strings.Contains(err.Error(), "npz") {
		t.Errorf("module.pt without --tensor: %v, want a choice of its tensors", err)
	}
}

// TestGoldenRTF imports the RTF layer NumPy saved (rtf.npz) and the one in a safetensors
// checkpoint built to the published format, and checks the bank against the values NumPy
// recorded; exporting it again as float32 reproduces the file's tensors bit for bit.
func TestGoldenRTF(t *testing.T) {
	exp := numtest.NumPyExpected(t, goldenDir)
	for _, tc := range []struct{ file, prefix string }{{"rtf.npz", ""}, {"rtf.safetensors", "layers.0.filter."}} {
		it := must(sessions.Import(filepath.Join(goldenDir, tc.file), sessions.ImportOptions{}))
		if it.Entry == nil || it.Entry.Bank == nil {
			t.Fatalf("%s: imported %+v", tc.file, it)
		}
		ab, h0 := exp[tc.file][tc.prefix+"ab"], exp[tc.file][tc.prefix+"h_0"]
		d, n := len(h0.Data), ab.Shape[1]
		for c, f := range it.Entry.Bank.Channels {
			tf := f.(*filters.TransferFunction)
			if !slices.Equal(tf.Den, ab.Data[c*n:(c+1)*n]) || !slices.Equal(tf.Num, ab.Data[(d+c)*n:(d+c+1)*n]) || tf.H0 != h0.Data[c] {
				t.Errorf("%s channel %d differs from NumPy's values", tc.file, c)
			}
		}
		if !strings.Contains(it.Note, "rtf layer") {
			t.Errorf("note %q", it.Note)
		}
		b := must(sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportNPZ, DType: arrays.Float32})).Data
		z := must(arrays.OpenNPZ(bytesReader(b), int64(len(b))))
		if got := must(z.Read("ab")); !slices.Equal(got.Data, ab.Data) {
			t.Errorf("%s: re-exported ab differs", tc.file)
		}
	}
}

// TestImportTruncLenFromMetadata: import takes the trunc_len that export recorded in a
// safetensors file (it came back 0.98 % off without it), and a different one is an error;
// the listing gives it as the option assumed (it said "trunc-len": "0").
func TestImportTruncLenFromMetadata(t *testing.T) {
	const L = 64
	bank := filtertest.TFBank(41, 3, 6)
	it := sessions.Item{Entry: &sessions.Entry{Name: "b", Bank: bank}}
	out := must(sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportSafetensors, TruncLen: L}))
	back, err := sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{})
	if err != nil || back.Entry == nil || !strings.Contains(back.Note, "trunc_len 64 from the file's metadata") {
		t.Fatalf("import: %+v, %v", back, err)
	}
	for c, f := range bank.Channels {
		if e := filters.RelDiff(f.Impulse(256), back.Entry.Bank.Channels[c].Impulse(256)); e > 1e-12 {
			t.Errorf("channel %d comes back off by %.3g", c, e)
		}
	}
	path := filepath.Join(t.TempDir(), "b.safetensors")
	if err := os.WriteFile(path, out.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	if ls := must(sessions.ListFile(path)).Layers; len(ls) != 1 || ls[0].Options["trunc-len"] != "64" {
		t.Errorf("listed as %+v, want trunc-len 64", ls)
	}
	if _, err := sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{TruncLen: L}); err != nil {
		t.Errorf("the same --trunc-len: %v", err)
	}
	_, err = sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{TruncLen: 32})
	if oe := (*sessions.OptionError)(nil); !errors.Is(err, sessions.ErrInvalid) || !errors.As(err, &oe) || !strings.Contains(err.Error(), "trunc-len 32 conflicts with trunc_len 64") {
		t.Errorf("a conflicting --trunc-len: %v, want an *OptionError", err)
	}
	// distill reads the layer with trunc-len as a layout option: the same rule, not the
	// file's value over the option's.
	if _, err := sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{Options: map[string]string{"trunc-len": "64"}}); err != nil {
		t.Errorf("the same trunc-len option: %v", err)
	}
	_, err = sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{Options: map[string]string{"trunc-len": "32"}})
	if oe := (*sessions.OptionError)(nil); !errors.Is(err, sessions.ErrInvalid) || !errors.As(err, &oe) || !strings.Contains(err.Error(), "trunc-len 32 conflicts with trunc_len 64") {
		t.Errorf("a conflicting trunc-len option: %v, want an *OptionError", err)
	}
	_, err = sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{TruncLen: L, Options: map[string]string{"trunc-len": "32"}})
	if oe := (*sessions.OptionError)(nil); !errors.As(err, &oe) || !strings.Contains(err.Error(), "trunc-len 32 conflicts with TruncLen 64") {
		t.Errorf("a trunc-len option other than TruncLen: %v, want an *OptionError", err)
	}
}

// TestImportDtTransformFromMetadata: an s4d layer exported to safetensors records the dt
// transform its inv_dt were written for, which import reads them with, without the warning
// that the file does not say (QA: ssmlab's own export warned on import), for the default exp
// and a given softplus alike; a different one given is an error, and the listing gives it.
// A file without the metadata (the same tensors as npz) still warns.
func TestImportDtTransformFromMetadata(t *testing.T) {
	bank := filtertest.TFBank(43, 3, 4)
	it := sessions.Item{Entry: &sessions.Entry{Name: "b", Bank: bank}}
	for _, dtT := range []string{"exp", "softplus"} {
		opts := sessions.ExportOptions{Format: sessions.ExportSafetensors, Layout: layouts.S4D}
		if dtT != "exp" {
			opts.Options = map[string]string{"dt-transform": dtT}
		}
		out := must(sessions.Export([]sessions.Item{it}, opts))
		back, err := sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{})
		if err != nil || back.Entry == nil {
			t.Fatalf("%s: import: %+v, %v", dtT, back, err)
		}
		if !strings.Contains(back.Note, "dt_transform "+dtT+" from the file's metadata") {
			t.Errorf("%s: the note says %q", dtT, back.Note)
		}
		for _, w := range back.Warnings {
			if strings.Contains(w, "dt_transform") {
				t.Errorf("%s: warns %q", dtT, w)
			}
		}
		for c, f := range bank.Channels {
			if e := filters.RelDiff(f.Impulse(256), back.Entry.Bank.Channels[c].Impulse(256)); e > 1e-12 {
				t.Errorf("%s: channel %d comes back off by %.3g", dtT, c, e)
			}
		}
		path := filepath.Join(t.TempDir(), "b.safetensors")
		if err := os.WriteFile(path, out.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if ls := must(sessions.ListFile(path)).Layers; len(ls) != 1 || ls[0].Options["dt-transform"] != dtT {
			t.Errorf("%s: listed as %+v", dtT, ls)
		}
		other := map[string]string{"exp": "softplus", "softplus": "exp"}[dtT]
		_, err = sessions.ImportData(out.Data, "b.safetensors", sessions.ImportOptions{Options: map[string]string{"dt-transform": other}})
		if oe := (*sessions.OptionError)(nil); !errors.As(err, &oe) || !strings.Contains(err.Error(), "dt-transform "+other+" conflicts with dt_transform "+dtT) {
			t.Errorf("%s: a conflicting --dt-transform: %v, want an *OptionError", dtT, err)
		}
	}
	opts := sessions.ExportOptions{Format: sessions.ExportNPZ, Layout: layouts.S4D, Options: map[string]string{"dt-transform": "softplus"}}
	out := must(sessions.Export([]sessions.Item{it}, opts))
	back := must(sessions.ImportData(out.Data, "b.npz", sessions.ImportOptions{}))
	if !slices.ContainsFunc(back.Warnings, func(w string) bool { return strings.Contains(w, "dt_transform exp, SSMKernel's default") }) {
		t.Errorf("npz without metadata: warnings %q", back.Warnings)
	}
}

// TestImportKernelErrorsNameNoSession: kernels that an imported array or target file cannot
// be, and a target file's own mistakes, are ErrInvalid, but their message does not call the
// file a session (import of a 3-D or empty .npy read "invalid session: kernels of shape ...",
// of a complex one `invalid session: "" is a complex array`, of a target file with a key twice
// "invalid session: duplicate key"); inside a session it still is one.
func TestImportKernelErrorsNameNoSession(t *testing.T) {
	three, _ := arrays.New([]int{2, 2, 2}, make([]float64, 8))
	empty, _ := arrays.New([]int{0, 4}, nil)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"k.npy", must(arrays.EncodeNPY(three, arrays.Float64)), "kernels of shape (2, 2, 2)"},
		{"k.npy", must(arrays.EncodeNPY(empty, arrays.Float64)), "hold no samples"},
		{"k.json", []byte(`{"kernels": [[[1]]]}`), "kernels of shape (1, 1, 1)"},
		{"k.npy", must(os.ReadFile(filepath.Join(goldenDir, "complex.npy"))), "the array is complex"},
		{"k.json", []byte(`{"kernels": [1, 2], "kernels": [3]}`), `duplicate key "kernels"`},
		{"k.json", []byte(`{"kernels": [1, 2]} x`), "bad JSON"},
		{"k.json", []byte(`{"kernels": [1, 2], "nme": "x"}`), `unknown key "nme"`},
		{"k.json", []byte(`{"kernels": [1, "a"]}`), `"kernels": invalid array file`},
		{"k.npy", nil, "empty input"}, // was "unsupported array: not a file ssmlab imports"
	} {
		_, err := sessions.ImportData(tc.data, tc.name, sessions.ImportOptions{})
		if !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "session") {
			t.Errorf("%s: %v, want ErrInvalid saying %q and nothing of a session", tc.want, err, tc.want)
		}
	}
	_, err := sessions.Unmarshal([]byte(`{"format": "ssmlab-session", "version": 2, "targets": [{"id": "t1", "kernels": [[[1]]]}]}`))
	if err == nil || !strings.HasPrefix(err.Error(), `invalid session: target "t1": kernels of shape`) {
		t.Errorf("in a session: %v", err)
	}
}

// TestExportPrefixEndsInDot: a prefix that does not end in "." or "/" is refused: with
// "layers.0.filter" the tensors were "layers.0.filterab", which no module loads, and the
// read-back, finding no layer, failed the export as inaccurate. So is one that is not UTF-8.
func TestExportPrefixEndsInDot(t *testing.T) {
	tf, _ := filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0)
	it := sessions.Item{Entry: &sessions.Entry{Name: "f", Filter: tf}}
	for _, p := range []string{"layers.0.filter", "x"} {
		_, err := sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportSafetensors, Prefix: p})
		if !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), `ends in "."`) {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
	// Bytes that are not UTF-8 were refused by the tensor writer, as an error of the work.
	if _, err := sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportSafetensors, Prefix: "\xab."}); !errors.Is(err, sessions.ErrInvalid) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("prefix %q: %v", "\xab.", err)
	}
	for _, p := range []string{"", "layers.0.filter.", "model/"} {
		if _, err := sessions.Export([]sessions.Item{it}, sessions.ExportOptions{Format: sessions.ExportSafetensors, Prefix: p}); err != nil {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
}

// TestExportOptionErrors: an option Export cannot take is refused naming the option and its
// value, as ssmlab export names its flag (an OptionError, of kind ErrInvalid); they
// read "invalid session: trunc_len applies to the rtf layout, not to s4d", naming neither
// the value nor a session, which there was none of. An out-of-range dtype, a bfloat16 .npz
// and a layout no filter is written in were refused by the writers below, for the item.
func TestExportOptionErrors(t *testing.T) {
	tf, _ := filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0)
	it := sessions.Item{Entry: &sessions.Entry{Name: "f", Filter: tf}}
	for _, c := range []struct {
		o      sessions.ExportOptions
		option string
		want   string
	}{
		{sessions.ExportOptions{Format: sessions.ExportNPZ, Layout: layouts.S4D, TruncLen: 32}, "trunc-len", "trunc-len 32 applies to the rtf layout, not to the s4d layout"},
		{sessions.ExportOptions{Format: sessions.ExportNPZ, TruncLen: -1}, "trunc-len", fmt.Sprintf("trunc-len -1 is outside [0, %d]", sessions.MaxTruncLen)},
		{sessions.ExportOptions{Format: sessions.ExportCSV, Length: -5}, "length", fmt.Sprintf("length -5 is outside [1, %d]", sessions.MaxLength)},
		{sessions.ExportOptions{Format: "hdf5"}, "format", `format "hdf5" is unknown: want npz, safetensors, pt, json, csv or npy`},
		{sessions.ExportOptions{Format: sessions.ExportNPZ, DType: arrays.BFloat16}, "dtype", "dtype bfloat16: npz has no bfloat16 (pt and safetensors have)"},
		{sessions.ExportOptions{Format: sessions.ExportNPY, DType: arrays.Complex64}, "dtype", `dtype "complex64": want float64, float32 or bfloat16`},
		{sessions.ExportOptions{Format: sessions.ExportTorch, Layout: "hyena"}, "layout", `layout "hyena": want rtf, s4d, stripedhyena, sos`},
	} {
		_, err := sessions.Export([]sessions.Item{it}, c.o)
		var oe *sessions.OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || err.Error() != c.want || !errors.Is(err, sessions.ErrInvalid) {
			t.Errorf("%+v: error %v, want %q (option %s)", c.o, err, c.want, c.option)
		}
	}
	_, err := sessions.Export([]sessions.Item{it, it}, sessions.ExportOptions{Format: sessions.ExportCSV})
	if err == nil || err.Error() != "format csv holds one item, not 2: choose one" {
		t.Errorf("two items to csv: %v", err)
	}
	if _, err := sessions.Export(nil, sessions.ExportOptions{Format: sessions.ExportCSV}); err == nil || strings.Contains(err.Error(), "invalid session") {
		t.Errorf("no items: %v", err)
	}
	// What Export takes: the zero length is the default, trunc_len is the rtf layout's.
	for _, o := range []sessions.ExportOptions{{Format: sessions.ExportCSV}, {Format: sessions.ExportNPZ, TruncLen: 32}, {Format: sessions.ExportSafetensors, Layout: layouts.S4D, DType: arrays.BFloat16}} {
		if _, err := sessions.Export([]sessions.Item{it}, o); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestImportJSONRefusesColumns: --columns on a JSON file is an error; it was ignored, and the
// rows the user called columns came back as kernels. It is an *OptionError, a mistake of the
// options (the CLI's exit 2), as a layer's setting given for a JSON file is.
func TestImportJSONRefusesColumns(t *testing.T) {
	_, err := sessions.ImportData([]byte(`{"kernels": [[1, 2], [3, 4]]}`), "k.json", sessions.ImportOptions{Columns: true})
	oe := (*sessions.OptionError)(nil)
	if !errors.Is(err, sessions.ErrInvalid) || !errors.As(err, &oe) || oe.Option != "columns" {
		t.Errorf("%v", err)
	}
}

// TestImportRefusesNamesNotUTF8: an import that would name its item with bytes that are not
// UTF-8 (an .npz entry's name, the file's name, --name) is refused, in one line naming the
// file and the name. The .npz was imported, and its item then refused by the session it was
// added to ("invalid session: the name is not valid UTF-8"; FuzzImportData found it); a
// file's name went the same way, or into a target file as U+FFFD.
func TestImportRefusesNamesNotUTF8(t *testing.T) {
	k := must(arrays.New([]int{2, 4}, []float64{1, 2, 3, 4, 5, 6, 7, 8}))
	npy := must(arrays.EncodeNPY(k, arrays.Float64))
	npz := func(entry string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w := must(zw.CreateHeader(&zip.FileHeader{Name: entry + ".npy", Method: zip.Store}))
		w.Write(npy)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		file, name string
		data       []byte
		want       string // quoted, as the error quotes it
	}{
		{"k.npz", "", npz("\xab"), `"\xab.npy"`},
		{"k.npz", "", npz("x\xffy"), `"x\xffy.npy"`},
		{"\xff.npy", "", npy, `"\xff"`},
		{"k.npy", "\xfe", npy, `"\xfe"`},
	} {
		what := fmt.Sprintf("%q, name %q", tc.file, tc.name)
		_, err := sessions.ImportData(tc.data, tc.file, sessions.ImportOptions{Name: tc.name})
		if !errors.Is(err, sessions.ErrInvalid) && !errors.Is(err, arrays.ErrInvalid) {
			t.Errorf("%s: %v, want it refused", what, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, tc.file+": ") || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "not valid UTF-8") ||
			strings.Contains(msg, "session") || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("%s: %q, want one line naming the file and %s", what, msg, tc.want)
		}
	}
	// The same files, named in UTF-8, are imported and kept.
	s := sessions.New()
	for _, tc := range []struct {
		file, name string
		data       []byte
	}{{"k.npz", "", npz("é")}, {"é.npy", "", npy}, {"k.npy", "ü", npy}} {
		it, err := sessions.ImportData(tc.data, tc.file, sessions.ImportOptions{Name: tc.name})
		if err == nil {
			_, err = s.Add(it)
		}
		if err != nil {
			t.Fatalf("%q, name %q: %v", tc.file, tc.name, err)
		}
	}
	if got := strings.Join([]string{s.Targets[0].Name, s.Targets[1].Name, s.Targets[2].Name}, ", "); got != "k:é, é, ü" {
		t.Errorf("names %s, want k:é, é, ü", got)
	}
}

// TestDtTransformMetadataMinimalVariant: a minimal S4D layer stores log_dt, which no dt
// transform maps, so a "dt_transform" in the file's metadata (which ssmlab's export writes
// only for the ssm variant) is not said to be what it was read with: the note read
// "dt_transform exp from the file's metadata".
func TestDtTransformMetadataMinimalVariant(t *testing.T) {
	f := must(filters.NewDiagonalRealPart([]complex128{0.5, complex(0.3, 0.4)}, []complex128{1, 0.5}, 0.1))
	named, _, err := layouts.Export(filters.Document{Filter: f}, layouts.S4D, layouts.Options{Values: map[string]string{"variant": "minimal"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	b := must(arrays.EncodeSafetensors(named, arrays.SafetensorsOptions{Metadata: map[string]string{sessions.DtTransformKey: "exp"}}))
	it, err := sessions.ImportData(b, "x.safetensors", sessions.ImportOptions{})
	if err != nil || strings.Contains(it.Note, "dt_transform") {
		t.Errorf("note %q, err %v: want no dt_transform", it.Note, err)
	}
}
