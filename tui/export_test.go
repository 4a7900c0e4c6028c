package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
	"github.com/ssmlab/ssmlab/sessions"
)

// exportCmd runs ":export ARGS" and returns the status line it leaves.
func exportCmd(t *testing.T, m *Model, args string) statusMsg {
	t.Helper()
	keys(t, m, ":")
	typeText(t, m, "export "+args)
	keys(t, m, "enter")
	return m.status
}

// TestExportFormats: the palette's export writes what `ssmlab export` writes, chosen by the
// extension, and reports the RTF read-back check on the status line.
func TestExportFormats(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	ring := m.selected().current()

	// The RTF layout, read back with the module's truncation correction.
	path := filepath.Join(dir, "ring.safetensors")
	st := exportCmd(t, m, path+" trunc_len=256 prefix=layers.0.")
	if st.level != levelOK || !strings.Contains(st.text, "exported "+path+" as safetensors; it reads back in the rtf layout as float64 (trunc_len 256) to relative error") {
		t.Fatalf("status %v %q", st.level, st.text)
	}
	it, err := sessions.Import(path, sessions.ImportOptions{TruncLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	if e := filters.RelDiff(ring.Impulse(256), it.Entry.Bank.Channels[0].Impulse(256)); !(e < 1e-9) {
		t.Errorf("the exported layer's impulse response differs by %.3g", e)
	}

	// A modal layout over the length the model runs at (ssmlab export --length), which the
	// status names; without it the check's window is the report's.
	path = filepath.Join(dir, "ring.npz")
	if st := exportCmd(t, m, path+" layout=s4d length=64"); st.level != levelOK || !strings.Contains(st.text, "it reads back in the s4d layout as float64 to relative error") || !strings.HasSuffix(st.text, " over 64 samples (length=64)") {
		t.Fatalf("layout=s4d length=64: status %v %q", st.level, st.text)
	}
	if st := exportCmd(t, m, filepath.Join(dir, "ring2.npz")+" layout=s4d"); st.level != levelOK || strings.Contains(st.text, "length=") || strings.Contains(st.text, "over 64 samples") {
		t.Fatalf("layout=s4d: status %v %q", st.level, st.text)
	}

	// A filter file in another form, with the conversion's report.
	path = filepath.Join(dir, "ring.json")
	if st := exportCmd(t, m, path+" tf"); st.level != levelOK || !strings.Contains(st.text, "(diagonal → tf, rel error") {
		t.Fatalf("status %v %q", st.level, st.text)
	}
	if doc, err := readDoc(path); err != nil || doc.Filter == nil || doc.Filter.Form() != filters.FormTF {
		t.Fatalf("ring.json: %+v, %v", doc, err)
	}

	// Impulse responses.
	path = filepath.Join(dir, "ring.csv")
	if st := exportCmd(t, m, path+" length=64"); st.level != levelOK {
		t.Fatalf("status %v %q", st.level, st.text)
	}
	// One row per channel.
	if data, err := os.ReadFile(path); err != nil || len(strings.Split(strings.TrimSpace(string(data)), ",")) != 64 {
		t.Fatalf("ring.csv: %d bytes, %v", len(data), err)
	}

	// Kernels as a tensor.
	addPreset(t, m, "kernel")
	path = filepath.Join(dir, "kernel.npz")
	if st := exportCmd(t, m, path); st.level != levelOK || st.text != "exported "+path+" as npz" {
		t.Fatalf("kernels: status %v %q", st.level, st.text)
	}
	if it, err := sessions.Import(path, sessions.ImportOptions{}); err != nil || it.Target == nil || it.Target.Kernels.Len() != 64 {
		t.Fatalf("kernel.npz: %+v, %v", it, err)
	}
}

// TestExportCrowdedPoles: poles that float32 RTF coefficients cannot hold are refused there
// (and written with force), and kept in the layouts that hold poles apart, s4d by default.
func TestExportCrowdedPoles(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	// Poles float32 RTF coefficients cannot hold, layout=rtf named: the read-back check
	// refuses, as ssmlab export exits 1, and writes nothing; force writes them with the
	// warning.
	crowded := crowdedDiagonal(t)
	addFilter(t, m, "crowded", crowded)
	cpath := filepath.Join(dir, "crowded.npz")
	if st := exportCmd(t, m, cpath+" layout=rtf dtype=float32"); st.level != levelError || !strings.Contains(st.text, "not written: it reads back in the rtf layout as float32") ||
		!strings.Contains(st.text, "it fails in float64 too (the rtf layout's polynomial coefficients lose it, not the dtype); the s4d, stripedhyena or sos layout (poles, not polynomial coefficients) may hold it; add force to write it anyway") {
		t.Errorf("crowded poles in float32: status %v %q", st.level, st.text)
	}
	if _, err := os.Stat(cpath); !os.IsNotExist(err) {
		t.Errorf("a refused export wrote %s: %v", cpath, err)
	}
	if st := exportCmd(t, m, cpath+" layout=rtf dtype=float32 force"); st.level != levelWarn || !strings.Contains(st.text, "it fails in float64 too") || strings.Contains(st.text, "dtype=float64") {
		t.Errorf("crowded poles in float32, forced: status %v %q", st.level, st.text)
	}
	if _, err := os.Stat(cpath); err != nil {
		t.Errorf("force did not write %s: %v", cpath, err)
	}
	// Without a layout named, the diagonal filter goes to s4d, which stores its poles and
	// residues, and the status line says so: it went to rtf and was refused, the message
	// naming s4d.
	dpath := filepath.Join(dir, "crowded-default.npz")
	if st := exportCmd(t, m, dpath+" dtype=float32"); st.level != levelOK ||
		!strings.Contains(st.text, "it reads back in the s4d layout as float32 to relative error") || !strings.Contains(st.text, `"crowded": written in the s4d layout, chosen for its diagonal form`) {
		t.Errorf("crowded poles in float32, no layout named: status %v %q", st.level, st.text)
	}
	if back, err := sessions.Import(dpath, sessions.ImportOptions{}); err != nil || !strings.HasPrefix(back.Note, "s4d layer") {
		t.Errorf("%s: %+v, %v", dpath, back, err)
	}
	// the modal layouts keep the poles out of polynomial coefficients: float32 holds them
	spath := filepath.Join(dir, "crowded.safetensors")
	if st := exportCmd(t, m, spath+" layout=stripedhyena dtype=float32 prefix=blocks.3.filter."); st.level != levelOK ||
		!strings.Contains(st.text, "in the stripedhyena layout as float32 to relative error") {
		t.Errorf("crowded poles as stripedhyena float32: status %v %q", st.level, st.text)
	}
	back, err := sessions.Import(spath, sessions.ImportOptions{})
	if err != nil || back.Entry == nil || back.Entry.Bank == nil {
		t.Fatalf("%s: %+v, %v", spath, back, err)
	}
	if e := filters.RelDiff(crowded.Impulse(512), back.Entry.Bank.Channels[0].Impulse(512)); !(e < 1e-4) {
		t.Errorf("the stripedhyena float32 layer reads back %.3g off", e)
	}
	// second-order sections for scipy.signal.sosfilt: one filter as (sections, 6)
	opath := filepath.Join(dir, "crowded-sos.npz")
	if st := exportCmd(t, m, opath+" layout=sos"); st.level != levelOK || !strings.Contains(st.text, "in the sos layout as float64 to relative error") {
		t.Errorf("crowded poles as sos: status %v %q", st.level, st.text)
	}
	if back, err := sessions.Import(opath, sessions.ImportOptions{}); err != nil || back.Entry == nil || back.Entry.Filter == nil || back.Entry.Filter.Form() != filters.FormZPK {
		t.Errorf("%s: %+v, %v", opath, back, err)
	}
	// a conversion outside the documented accuracy is not written to a filter file either
	jpath := filepath.Join(dir, "crowded-tf.json")
	if st := exportCmd(t, m, jpath+" tf"); st.level != levelError || !strings.Contains(st.text, "not written: diagonal → tf") {
		t.Errorf("crowded poles as tf: status %v %q", st.level, st.text)
	}
	if _, err := os.Stat(jpath); !os.IsNotExist(err) {
		t.Errorf("a refused conversion wrote %s: %v", jpath, err)
	}
}

// TestExportMistakes: mistakes are errors on the status line, and write nothing.
func TestExportMistakes(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	for _, tc := range []struct{ args, want string }{
		{"x.npz tf", "FORM applies to .json exports"},
		{"x.xyz", "the extension chooses the format"},
		{"x.npz dtype=float16", "dtype=float16: want float64, float32 or bfloat16"},
		{"x.npz trunc_len=-3", "trunc_len=-3 is outside [0, "},
		// an export's length, in its range, as ssmlab export --length: 0 wrote the default
		// 1024 samples, 1e12 wanted "a whole number ≥ 0" and 5000000000 was an "invalid
		// session"
		{"x.npy length=0", "length=0 is outside [1, 1048576]"},
		{"x.npy length=1e12", "length=1e12: want a whole number"},
		{"x.npy length=5000000000", "length=5000000000 is outside [1, 1048576]"},
		{"x.npz scale=2", `no export option "scale"`},
		{"x.npz layout=s4", "layout=s4: want rtf, s4d, stripedhyena, sos"},
		{"x.csv layout=s4d", "layout=s4d applies to pt, safetensors or npz, not to csv"},
		{"x.npz dtype=bfloat16", "dtype=bfloat16: npz has no bfloat16 (pt and safetensors have)"},
		{"x.npz layout=s4d disc=euler", "disc"},
	} {
		if st := exportCmd(t, m, filepath.Join(dir, tc.args)); st.level != levelError || !strings.Contains(st.text, tc.want) {
			t.Errorf("export %s: status %v %q, want an error containing %q", tc.args, st.level, st.text, tc.want)
		}
	}
	if st := exportCmd(t, m, ""); st.level != levelError || !strings.Contains(st.text, "export needs PATH") {
		t.Errorf("export with no PATH: status %v %q", st.level, st.text)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.npz")); !os.IsNotExist(err) {
		t.Errorf("a failed export wrote x.npz: %v", err)
	}
}

// TestExportMissingDirectory: a path in a directory that does not exist is said as ssmlab
// export says it; the status line said "nodir/x.pt: no such file or directory".
func TestExportMissingDirectory(t *testing.T) {
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	dir := filepath.Join(t.TempDir(), "none")
	for _, cmd := range []string{"export " + filepath.Join(dir, "x.pt"), "save-session " + filepath.Join(dir, "s.ssmlab")} {
		keys(t, m, ":")
		typeText(t, m, cmd)
		keys(t, m, "enter")
		if m.status.level != levelError || !strings.Contains(m.status.text, "the directory "+dir+" does not exist") {
			t.Errorf(":%s: status %v %q", cmd, m.status.level, m.status.text)
		}
	}
}

// TestSaveAndExportAskBeforeOverwriting: :save PATH and :export PATH over a file that
// exists and is not the filter's own ask first, as :save-session PATH does; esc leaves the
// file as it was and says so, y overwrites it. Saving again to the filter's own file does
// not ask. Both overwrote the file without a word.
func TestSaveAndExportAskBeforeOverwriting(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	const theirs = "someone else's file\n"
	for _, tc := range []struct{ cmd, file, cancelled, done string }{
		{"save", "other.json", "not saved: ", "saved "},
		{"export", "other.npz", "not exported: ", "exported "},
	} {
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(theirs), 0o644); err != nil {
			t.Fatal(err)
		}
		keys(t, m, ":")
		typeText(t, m, tc.cmd+" "+path)
		keys(t, m, "enter")
		c, ok := dialogOf[*confirm](m)
		if !ok || c.title != "overwrite?" || !strings.Contains(c.body, path+" exists") {
			t.Fatalf(":%s over an existing file: dialog %T, status %q", tc.cmd, m.dialog, m.status.text)
		}
		keys(t, m, "esc")
		if data, _ := os.ReadFile(path); string(data) != theirs || !strings.Contains(m.status.text, tc.cancelled+path+" is as it was") {
			t.Fatalf(":%s, esc: the file holds %q, status %q", tc.cmd, data, m.status.text)
		}
		keys(t, m, ":")
		typeText(t, m, tc.cmd+" "+path)
		keys(t, m, "enter", "y")
		if data, _ := os.ReadFile(path); string(data) == theirs || m.dialog != nil || !strings.Contains(m.status.text, tc.done+path) {
			t.Fatalf(":%s, y: the file holds %q, dialog %T, status %q", tc.cmd, data, m.dialog, m.status.text)
		}
	}
	// the file :save wrote is the filter's own: saving to it again does not ask
	keys(t, m, ":")
	typeText(t, m, "save "+filepath.Join(dir, "other.json"))
	keys(t, m, "enter")
	if m.dialog != nil || !strings.Contains(m.status.text, "saved ") {
		t.Errorf("saving to the filter's own file: dialog %T, status %q", m.dialog, m.status.text)
	}
}

// TestSaveRefusesOtherFormats: w writes a filter file, JSON, so a name whose extension
// names another format is refused, pointing at the command that writes it; it wrote JSON
// into out.npz and said "✓ saved out.npz". .json, no extension and unknown ones are saved.
func TestSaveRefusesOtherFormats(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	for _, tc := range []struct{ file, want string }{
		{"out.npz", ":export PATH writes .npz"},
		{"out.NPY", ":export PATH writes .npy"},
		{"out.safetensors", ":export PATH writes .safetensors"},
		{"out.pt", ":export PATH writes .pt"},
		{"out.csv", ":export PATH writes .csv"},
		{"out.svg", ":export-plot PATH"},
		{"out.png", ":export-plot PATH"},
		{"out.ssmlab", ":save-session PATH"},
	} {
		path := filepath.Join(dir, tc.file)
		keys(t, m, "w", "ctrl+u")
		typeText(t, m, path)
		keys(t, m, "enter")
		if m.status.level != levelError || !strings.Contains(m.status.text, "a filter file is JSON") || !strings.Contains(m.status.text, tc.want) {
			t.Errorf("w %s: status %v %q", tc.file, m.status.level, m.status.text)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("w %s wrote it: %v", tc.file, err)
		}
	}
	for _, file := range []string{"a.json", "b", "c.filter"} {
		path := filepath.Join(dir, file)
		keys(t, m, ":")
		typeText(t, m, "save "+path)
		keys(t, m, "enter")
		if _, err := readDoc(path); err != nil || m.status.level != levelOK {
			t.Errorf(":save %s: %v, status %q", file, err, m.status.text)
		}
	}
}

// TestSaveRefusesDirectory: a directory as the path of w, :save-session or :export is
// refused at once, as o refuses one; they asked "exists: overwrite it?" and failed after o.
func TestSaveRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	for _, cmd := range []string{"save " + dir, "save-session " + dir, "export " + dir + " force"} {
		keys(t, m, ":")
		typeText(t, m, cmd)
		keys(t, m, "enter")
		if m.dialog != nil || m.status.level != levelError || !strings.Contains(m.status.text, dir+": not a regular file: a directory") {
			t.Errorf(":%s: dialog %T, status %v %q", cmd, m.dialog, m.status.level, m.status.text)
		}
	}
	keys(t, m, "w", "ctrl+u")
	typeText(t, m, dir)
	keys(t, m, "enter")
	if m.dialog != nil || !strings.Contains(m.status.text, "not a regular file: a directory") {
		t.Errorf("w DIR: dialog %T, status %q", m.dialog, m.status.text)
	}
}

// TestSaveRefusesALinkElsewhere: a path the write would refuse (here a link into another
// directory) is refused at once by w, :save-session and :export, naming why; they asked
// "exists: overwrite it?" and refused it only after y (QA).
func TestSaveRefusesALinkElsewhere(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "x")
	if err := os.WriteFile(target, []byte("KEEP"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "far")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	for _, cmd := range []string{"save " + link, "save-session " + link, "export " + link + " force"} {
		keys(t, m, ":")
		typeText(t, m, cmd)
		keys(t, m, "enter")
		if m.dialog != nil || m.status.level != levelError || !strings.Contains(m.status.text, "a symbolic link out of its directory") {
			t.Errorf(":%s: dialog %T, status %v %q", cmd, m.dialog, m.status.level, m.status.text)
		}
		keys(t, m, "esc")
	}
	if data, _ := os.ReadFile(target); string(data) != "KEEP" {
		t.Errorf("the link's target reads %q", data)
	}
}

// TestExportOptionNamed: an export option the export cannot take is refused naming the option
// and its value as typed, in ssmlab export's words; :export x.npz layout=s4d trunc_len=32
// said "x.npz: invalid session: trunc_len applies to the rtf layout, not to s4d".
func TestExportOptionNamed(t *testing.T) {
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "ring")
	path := filepath.Join(t.TempDir(), "x.npz")
	st := exportCmd(t, m, path+" layout=s4d trunc_len=32")
	if want := "trunc_len=32 applies to the rtf layout, not to the s4d layout"; st.level != levelError || st.text != want {
		t.Errorf("status %v %q, want %q", st.level, st.text, want)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s was written", path)
	}
}

// countingStore is the file store, counting the exports it is asked for.
type countingStore struct {
	fileStore
	exports *int
}

func (s countingStore) Export(path string, it Item, o sessions.ExportOptions, force, over bool) (sessions.Exported, error) {
	*s.exports++
	return s.fileStore.Export(path, it, o, force, over)
}

// TestExportOptionsRefusedFirst: an option the export cannot take, or one its format does not
// use, is refused on the command line, in ssmlab export's words (sessions' one check) with
// the key=value typed, before the export starts: the store is never asked. A dtype for .csv
// and a length for .pt were ignored; a layout for .csv said "a layout applies to .npz,
// .safetensors and .pt exports, not csv".
func TestExportOptionsRefusedFirst(t *testing.T) {
	var exports int
	deps := testDeps(nil)
	deps.Store = countingStore{exports: &exports}
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	addPreset(t, m, "ring")
	dir := t.TempDir()
	for _, tc := range []struct{ args, want string }{
		// values no export takes
		{"x.npz dtype=complex64", "dtype=complex64: want float64, float32 or bfloat16"},
		{"x.npz dtype=bf16", "dtype=bf16: npz has no bfloat16 (pt and safetensors have)"},
		{"x.pt layout=hyena", "layout=hyena: want rtf, s4d, stripedhyena, sos"},
		{"x.pt trunc-len=4194305", "trunc-len=4194305 is outside [0, 4194304]"},
		{"x.csv length=1048577", "length=1048577 is outside [1, 1048576]"},
		{"x.pt layout=sos trunc_len=8", "trunc_len=8 applies to the rtf layout, not to the sos layout"},
		{"x.pt prefix=layers.0", `prefix=layers.0: a prefix ends in "." or "/", as a state_dict's names do (layers.0.)`},
		{"x.pt layout=rtf disc=zoh", "--disc is an option of the s4d and s5 layout, not of rtf"},
		{"x.pt layout=stripedhyena short-filter=true", "--short-filter is an option of import (stripedhyena: read the short FIR filters (short_filter_weight) as kernels instead of the long IIR filter); export does not use it"},
		// options of other formats, whatever their value
		{"x.csv dtype=float64", "dtype=float64 applies to pt, safetensors, npz or npy, not to csv"},
		{"x.pt layout=rtf length=64", "length=64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window"},
		{"x.pt length=64 trunc_len=8", "length=64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window"},
		{"x.json length=64", "length=64 applies to csv, npy, pt, safetensors or npz, not to json"},
		{"x.json trunc_len=0", "trunc_len=0 applies to pt, safetensors or npz, not to json"},
		{"x.npy prefix=m.", "prefix=m. applies to pt, safetensors or npz, not to npy"},
		{"x.json h0=twice", "h0=twice applies to pt, safetensors or npz, not to json"},
	} {
		if st := exportCmd(t, m, filepath.Join(dir, tc.args)); st.level != levelError || st.text != tc.want {
			t.Errorf("export %s: status %v %q, want the error %q", tc.args, st.level, st.text, tc.want)
		}
	}
	if exports != 0 {
		t.Errorf("the store was asked for %d exports", exports)
	}
	if names := numtest.DirNames(t, dir); len(names) != 0 {
		t.Errorf("wrote %v", names)
	}
	// the same options where the format takes them: each export runs
	if st := exportCmd(t, m, filepath.Join(dir, "x.pt")+" dtype=bf16 prefix=layers.0. trunc_len=8 force"); st.level == levelError || exports != 1 {
		t.Errorf("export x.pt: status %v %q after %d exports", st.level, st.text, exports)
	}
}

// TestExportLengthPicksLayout: with no layout named, length= asks for a layout that takes
// it, as ssmlab export's --length does: the diagonal ring goes to s4d, which the status line
// names; a zpk filter, whose one layout is rtf, is refused on the command line, the store
// never asked. length= was refused for the ring as if rtf were named.
func TestExportLengthPicksLayout(t *testing.T) {
	var exports int
	deps := testDeps(nil)
	deps.Store = countingStore{exports: &exports}
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	dir := t.TempDir()
	addPreset(t, m, "ring")
	if st := exportCmd(t, m, filepath.Join(dir, "ring.pt")+" length=64"); st.level != levelOK || exports != 1 ||
		!strings.Contains(st.text, "reads back in the s4d layout as float64") || !strings.Contains(st.text, "over 64 samples (length=64)") || !strings.Contains(st.text, "written in the s4d layout, chosen for its diagonal form") {
		t.Errorf("export ring.pt length=64: status %v %q after %d exports", st.level, st.text, exports)
	}
	addPreset(t, m, "pair")
	for _, tc := range []struct{ args, want string }{
		{"pair.pt length=64", "length=64 applies to the s4d, stripedhyena and sos layouts, not to the rtf layout: its module's length is trunc-len, which sets its check's window; with no layout named, a zpk filter is written in the rtf layout"},
		{"pair.pt disc=zoh", "--disc is an option of the s4d and s5 layout, not of rtf; with no layout named, a zpk filter is written in the rtf layout"},
	} {
		if st := exportCmd(t, m, filepath.Join(dir, tc.args)); st.level != levelError || st.text != tc.want {
			t.Errorf("export %s: status %v %q, want the error %q", tc.args, st.level, st.text, tc.want)
		}
	}
	if exports != 1 {
		t.Errorf("the store was asked for %d exports, want the ring's alone", exports)
	}
	if names := numtest.DirNames(t, dir); !slices.Equal(names, []string{"ring.pt"}) {
		t.Errorf("wrote %v", names)
	}
}

// TestQuestionTakesOnlyItsKeys: QA finding 12. The :export of a file that exists asks
// "overwrite?"; what is typed next without looking (the next command) must neither answer it
// nor reach the panes. Its o answered "overwrite" and the letters after it moved a pole and
// toggled the log scale. The question takes y, n and esc alone, other keys are dropped, and
// keys that arrive together (typed ahead, pasted, scripted: one read of the terminal) answer
// no question, not even one that the burst's own first key asked.
func TestQuestionTakesOnlyItsKeys(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 140, 40, nil)
	addPreset(t, m, "pair")
	m.setFocus(panePlots)
	path := filepath.Join(dir, "b4n.json")
	const theirs = "someone else's file\n"
	if err := os.WriteFile(path, []byte(theirs), 0o644); err != nil {
		t.Fatal(err)
	}
	gen, logScale := m.sess.Generation(), m.plots.logImpulse
	unchanged := func(what string) {
		t.Helper()
		if data, _ := os.ReadFile(path); string(data) != theirs {
			t.Fatalf("%s: the file was overwritten", what)
		}
		if _, ok := dialogOf[*confirm](m); !ok {
			t.Fatalf("%s: the question closed (dialog %T, status %q)", what, m.dialog, m.status.text)
		}
		if m.sess.Generation() != gen || m.plots.logImpulse != logScale {
			t.Fatalf("%s: keys reached the panes (generation %d → %d, log scale %v → %v)", what, gen, m.sess.Generation(), logScale, m.plots.logImpulse)
		}
	}
	keys(t, m, ":")
	typeText(t, m, "export "+path)
	keys(t, m, "enter")
	if c, ok := dialogOf[*confirm](m); !ok || !strings.Contains(c.body, "y overwrites") {
		t.Fatalf("no question, or not with y: %T %+v", m.dialog, c)
	}
	// Keys typed one at a time: none answers but y and n (typed alone, after the question
	// appeared, they are answers: nothing without a clock tells them from keys typed blind).
	keys(t, m, ":")
	typeText(t, m, "export /tmp/qa1/b4 overwrite-ish")
	unchanged("typed one key at a time")
	// The QA's next command, arriving at once: y and n do not answer either.
	send(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("yes, :export b4n-tf.json tf")})
	unchanged("typed ahead")
	keys(t, m, "n")
	if _, ok := dialogOf[*confirm](m); ok || !strings.Contains(m.status.text, "not exported: "+path+" is as it was") {
		t.Fatalf("n: dialog %T, status %q", m.dialog, m.status.text)
	}
	keys(t, m, ":")
	typeText(t, m, "export "+path)
	keys(t, m, "enter", "y")
	if data, _ := os.ReadFile(path); string(data) == theirs || m.dialog != nil {
		t.Fatalf("y: the file holds %q, dialog %T", data, m.dialog)
	}
	// A burst's first key asks (x: delete the selected filter?); the rest cannot answer.
	m.setFocus(paneList)
	send(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("xy")})
	if _, ok := dialogOf[*confirm](m); !ok || len(m.entries()) != 1 {
		t.Fatalf("x y at once: dialog %T, %d filters", m.dialog, len(m.entries()))
	}
	keys(t, m, "y")
	if len(m.entries()) != 0 {
		t.Errorf("y did not delete: %d filters", len(m.entries()))
	}
}
