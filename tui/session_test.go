package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
)

// The workbench keeps its work in a sessions.Session: these tests save, reopen, autosave and
// recover it (issue 21, items 1 to 3, 11 and 15).

// writeSession writes a session of one filter, "start", to dir/name and returns its path.
func writeSession(t *testing.T, dir, name string) string {
	t.Helper()
	s := sessions.New()
	f, _ := pairZPK(0.8)
	if _, err := s.AddFilter(filters.Document{Name: "start", Filter: f}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// openModel is a workbench of w×h cells opened on file, as `ssmlab FILE` opens it, with
// autosave in autosaveDir ("": off).
func openModel(t *testing.T, file, autosaveDir string, w, h int) *Model {
	t.Helper()
	interval := time.Duration(-1)
	if autosaveDir != "" {
		interval = time.Nanosecond
	}
	m := New(Options{File: file, Deps: testDeps(nil), ProgressInterval: -1, Length: 64, Dir: t.TempDir(),
		AutosaveDir: autosaveDir, AutosaveInterval: interval})
	send(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	runCmd(t, m, m.Init(), 0)
	return m
}

func loadSession(t *testing.T, path string) *sessions.Session {
	t.Helper()
	s, err := sessions.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func names(s *sessions.Session) []string {
	var out []string
	for _, id := range s.Order() {
		if e, ok := s.Filter(id); ok {
			out = append(out, e.Name)
		} else if t, ok := s.Target(id); ok {
			out = append(out, t.Name)
		}
	}
	return out
}

// TestSaveSuggestsAFreeName: ctrl+s on an untitled session suggests a file that does not exist
// yet, session-3.ssmlab beside somebody's session.ssmlab and session-2.ssmlab, so that enter
// saves without asking to overwrite (it suggested session.ssmlab, then asked "overwrite?");
// saved, ctrl+s saves to that file without asking where.
func TestSaveSuggestsAFreeName(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	theirs := []string{filepath.Join(m.dir, "session.ssmlab"), filepath.Join(m.dir, "session-2.ssmlab")}
	for _, p := range theirs {
		if err := os.WriteFile(p, []byte("somebody's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addPreset(t, m, "pair")
	keys(t, m, "ctrl+s")
	want := filepath.Join(m.dir, "session-3.ssmlab")
	p, ok := dialogOf[*prompt](m)
	if !ok {
		t.Fatalf("ctrl+s on an untitled session opened %T", m.dialog)
	}
	if got := p.input.Value(); got != want {
		t.Fatalf("ctrl+s on an untitled session suggests %s, want %s", got, want)
	}
	keys(t, m, "enter")
	if m.dialog != nil || m.sess.Path != want || !slices.Equal(names(loadSession(t, want)), []string{"pair"}) {
		t.Fatalf("enter: dialog %T, session's file %q, status %q", m.dialog, m.sess.Path, m.status.text)
	}
	for _, p := range theirs {
		if b, err := os.ReadFile(p); err != nil || string(b) != "somebody's\n" {
			t.Errorf("%s changed: %q, %v", p, b, err)
		}
	}
	addPreset(t, m, "ring")
	keys(t, m, "ctrl+s")
	if m.dialog != nil || len(loadSession(t, want).Order()) != 2 {
		t.Errorf("ctrl+s on a saved session: dialog %T, status %q", m.dialog, m.status.text)
	}
}

// TestSaveFilterSuggestsAFreeName: w on a filter that has no file of its own suggests a name
// after it that does not exist yet, as ctrl+s does for the session; it suggested NAME.json
// beside an existing one and asked to overwrite it on enter. A filter saved once is then
// suggested its own file.
func TestSaveFilterSuggestsAFreeName(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "ring")
	e := m.selected()
	if e == nil {
		t.Fatal("no filter selected after adding a preset")
	}
	theirs := []string{defaultPath(m.dir, e.name, ".json"), strings.TrimSuffix(defaultPath(m.dir, e.name, ".json"), ".json") + "-2.json"}
	for _, p := range theirs {
		if err := os.WriteFile(p, []byte("somebody's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := strings.TrimSuffix(theirs[0], ".json") + "-3.json"
	keys(t, m, "w")
	p, ok := dialogOf[*prompt](m)
	if !ok {
		t.Fatalf("w opened %T", m.dialog)
	}
	if got := p.input.Value(); got != want {
		t.Fatalf("w on a filter without a file suggests %s, want %s", got, want)
	}
	keys(t, m, "enter")
	if _, err := readDoc(want); err != nil || m.dialog != nil {
		t.Fatalf("enter: %v, dialog %T, status %q", err, m.dialog, m.status.text)
	}
	for _, p := range theirs {
		if b, err := os.ReadFile(p); err != nil || string(b) != "somebody's\n" {
			t.Errorf("%s changed: %q, %v", p, b, err)
		}
	}
	keys(t, m, "w")
	if p, ok := dialogOf[*prompt](m); !ok || p.input.Value() != want {
		t.Errorf("w on a saved filter: dialog %T, want its file %s suggested", m.dialog, want)
	}
}

// TestSaveToOpenedSession: opened from s1.ssmlab, ctrl+s and :w save to it, q with unsaved
// work saves to it too; :save-session PATH saves as PATH, which is the session's file from
// then on (issue 21 item 2: "q, s wrote resonator2.json and left s1.ssmlab unchanged").
func TestSaveToOpenedSession(t *testing.T) {
	dir := t.TempDir()
	s1 := writeSession(t, dir, "s1.ssmlab")
	m := openModel(t, s1, "", 120, 40)
	if m.sess.Path != s1 || m.selected().name != "start" {
		t.Fatalf("opened %q, selected %+v", m.sess.Path, m.selected())
	}
	addPreset(t, m, "pair")
	if !strings.Contains(screen(m), "1 unsaved") {
		t.Errorf("no unsaved mark:\n%s", screen(m))
	}
	keys(t, m, "ctrl+s")
	if got := names(loadSession(t, s1)); !slices.Equal(got, []string{"start", "pair"}) {
		t.Fatalf("ctrl+s saved %v (status %q)", got, m.status.text)
	}
	if m.sess.Dirty() || strings.Contains(screen(m), "unsaved") {
		t.Errorf("saved, yet unsaved:\n%s", screen(m))
	}
	addPreset(t, m, "ring")
	keys(t, m, ":")
	typeText(t, m, "w")
	keys(t, m, "enter")
	if got := names(loadSession(t, s1)); len(got) != 3 {
		t.Fatalf(":w saved %v (status %q)", got, m.status.text)
	}
	s2 := filepath.Join(dir, "s2.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "save-session "+s2)
	keys(t, m, "enter")
	if m.sess.Path != s2 || len(loadSession(t, s2).Order()) != 3 {
		t.Fatalf("save-session PATH: session path %q, status %q", m.sess.Path, m.status.text)
	}
	// q with unsaved work: s saves to the session's file and quits
	addPreset(t, m, "dense2")
	keys(t, m, "q")
	c, ok := dialogOf[*confirm](m)
	if !ok || !strings.Contains(c.body, "dense2") || !strings.Contains(c.body, "to "+s2) {
		t.Fatalf("q asked %T %q", m.dialog, c.body)
	}
	keys(t, m, "s")
	if !m.quitting || len(loadSession(t, s2).Order()) != 4 || len(loadSession(t, s1).Order()) != 3 {
		t.Fatalf("q, s: quitting %v, status %q", m.quitting, m.status.text)
	}
	if _, err := os.Stat(filepath.Join(m.dir, "dense2.json")); !os.IsNotExist(err) {
		t.Errorf("q, s wrote a filter file: %v", err)
	}
}

// TestSaveNoticesChangeOnDisk: a save over the session's file that another program changed
// since it was opened asks first (issue 21 item 11); so does a save as a file that exists.
func TestSaveNoticesChangeOnDisk(t *testing.T) {
	dir := t.TempDir()
	s1 := writeSession(t, dir, "s1.ssmlab")
	m := openModel(t, s1, "", 120, 40)
	addPreset(t, m, "pair")
	// another writer adds an item
	if err := sessions.Update(s1, func(s *sessions.Session) error {
		f, _ := pairZPK(0.5)
		_, err := s.AddFilter(filters.Document{Name: "theirs", Filter: f})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	keys(t, m, "ctrl+s")
	c, ok := dialogOf[*confirm](m)
	if !ok || !strings.Contains(c.body, "changed on disk") {
		t.Fatalf("no question: %T, status %q", m.dialog, m.status.text)
	}
	keys(t, m, "esc")
	if got := names(loadSession(t, s1)); !slices.Equal(got, []string{"start", "theirs"}) || !m.sess.Dirty() {
		t.Fatalf("esc: the file holds %v", got)
	}
	keys(t, m, "ctrl+s", "y")
	if got := names(loadSession(t, s1)); !slices.Equal(got, []string{"start", "pair"}) || m.sess.Dirty() {
		t.Fatalf("y: the file holds %v, status %q", got, m.status.text)
	}
	// save as a file that exists
	other := writeSession(t, dir, "other.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "save-session "+other)
	keys(t, m, "enter")
	if c, ok := dialogOf[*confirm](m); !ok || !strings.Contains(c.body, "exists") {
		t.Fatalf("save as an existing file: %T, status %q", m.dialog, m.status.text)
	}
	keys(t, m, "y")
	if got := names(loadSession(t, other)); len(got) != 2 || m.sess.Path != other {
		t.Fatalf("overwrote %v", got)
	}
}

// TestSaveOverRemovedFileAsksToSaveAnew: the session's file removed since it was opened, a
// save asks whether to make it anew, saying so: it asked "overwrite?" and "o overwrites it",
// with nothing there to overwrite (QA finding 15). esc saves nothing; y saves the file.
func TestSaveOverRemovedFileAsksToSaveAnew(t *testing.T) {
	s1 := writeSession(t, t.TempDir(), "s1.ssmlab")
	m := openModel(t, s1, "", 120, 40)
	addPreset(t, m, "pair")
	if err := os.Remove(s1); err != nil {
		t.Fatal(err)
	}
	keys(t, m, "ctrl+s")
	c, ok := dialogOf[*confirm](m)
	if !ok || c.title != "save anew?" || !strings.Contains(c.body, s1+" was removed") || !strings.Contains(c.body, "y saves the session as "+s1+" anew") ||
		strings.Contains(c.title+c.body, "overwrite") {
		t.Fatalf("the question: %T %+v", m.dialog, c)
	}
	keys(t, m, "esc")
	if _, err := os.Stat(s1); !os.IsNotExist(err) || !m.sess.Dirty() || m.status.text != "not saved" {
		t.Fatalf("esc: %v, dirty %v, status %q", err, m.sess.Dirty(), m.status.text)
	}
	keys(t, m, "ctrl+s", "y")
	if got := names(loadSession(t, s1)); !slices.Equal(got, []string{"start", "pair"}) || m.sess.Dirty() {
		t.Fatalf("y: the file holds %v, status %q", got, m.status.text)
	}
}

// TestRecoveredSaveAsksOverLaterSave: QA finding 1's journey. Workbenches A and B open one
// session file; A saves a rename; B renames too (its save asks, esc), autosaves after A's
// save and is killed; C recovers B's work, and ctrl+s asks before saving over A's rename, as
// B's own save did. It saved without a word: recovery trusted the file as it was unless it
// was modified after the autosave, and A's save was older than B's autosave.
func TestRecoveredSaveAsksOverLaterSave(t *testing.T) {
	dir := t.TempDir()
	path := writeSession(t, dir, "s1.ssmlab")
	autoB := filepath.Join(t.TempDir(), "autosave")
	a := openModel(t, path, "", 120, 40)
	b := openModel(t, path, autoB, 120, 40)
	rename := func(m *Model, name string) {
		t.Helper()
		keys(t, m, ":")
		typeText(t, m, "rename "+name)
		keys(t, m, "enter")
	}
	rename(a, "w1name")
	keys(t, a, "ctrl+s")
	if got := names(loadSession(t, path)); !slices.Equal(got, []string{"w1name"}) {
		t.Fatalf("A saved %v (status %q)", got, a.status.text)
	}
	rename(b, "w2name") // autosaved now, after A's save
	keys(t, b, "ctrl+s")
	if c, ok := dialogOf[*confirm](b); !ok || !strings.Contains(c.body, "changed on disk") {
		t.Fatalf("B's save: %T, status %q", b.dialog, b.status.text)
	}
	keys(t, b, "esc")
	autosaveHolds(t, autoB, "w2name")
	c := openModel(t, "", killedCopy(t, autoB), 160, 40) // B is killed: its autosave stays
	if _, ok := dialogOf[*recoverDialog](c); !ok || !strings.Contains(screen(c), "(ctrl+s asks first)") {
		t.Fatalf("the offer to recover does not say the file changed:\n%s", screen(c))
	}
	keys(t, c, "enter")
	keys(t, c, "ctrl+s")
	q, ok := dialogOf[*confirm](c)
	if !ok || !strings.Contains(q.body, "changed on disk") {
		t.Fatalf("C's save of the recovered work: %T, status %q", c.dialog, c.status.text)
	}
	keys(t, c, "esc")
	if got := names(loadSession(t, path)); !slices.Equal(got, []string{"w1name"}) || !c.sess.Dirty() {
		t.Fatalf("A's save is lost: the file holds %v", got)
	}
}

// TestSignalKeepsTheLastEdit: a signal that ends the run (Main passes it as a signalMsg)
// quits as a second ctrl+c does, autosaving an edit made since the last autosave; a clean
// session leaves no autosave, and work the user discarded to quit is not kept. QA finding 2:
// SIGTERM quit through Bubble Tea's own handler, without the model seeing it, and the rename
// of the last second was lost.
func TestSignalKeepsTheLastEdit(t *testing.T) {
	auto := t.TempDir()
	m := openModel(t, "", auto, 120, 40)
	addPreset(t, m, "pair")
	autosaveHolds(t, auto, "pair")
	// The rename, without its autosave tick: the signal comes within the interval.
	for _, k := range append(append([]tea.KeyMsg{keyMsg(":")}, runes("rename edited")...), keyMsg("enter")) {
		m.Update(k)
	}
	if m.selected().name != "edited" {
		t.Fatalf("renamed to %q", m.selected().name)
	}
	autosaveHolds(t, auto, "pair")
	send(t, m, signalMsg{sig: syscall.SIGTERM})
	if !m.quitting {
		t.Fatal("a signal did not end the program")
	}
	autosaveHolds(t, auto, "edited")
	if kept, err := m.keepUnsaved(); !kept || err != nil {
		t.Errorf("keepUnsaved after the signal: %v, %v", kept, err)
	}

	// Nothing unsaved: nothing kept.
	clean := t.TempDir()
	m = openModel(t, writeSession(t, t.TempDir(), "s.ssmlab"), clean, 120, 40)
	send(t, m, signalMsg{sig: syscall.SIGHUP})
	if kept, err := m.keepUnsaved(); kept || err != nil || !m.quitting || len(autosaveFiles(t, clean)) != 0 {
		t.Errorf("a clean session: kept %v (%v), quitting %v, autosaves %v", kept, err, m.quitting, autosaveFiles(t, clean))
	}

	// Discarded to quit, the work is not kept, even if a signal ends the program then.
	discarded := t.TempDir()
	m = openModel(t, "", discarded, 120, 40)
	addPreset(t, m, "pair")
	keys(t, m, "q", "d", "y")
	if kept, err := m.keepUnsaved(); kept || err != nil || len(autosaveFiles(t, discarded)) != 0 {
		t.Errorf("discarded: kept %v (%v), autosaves %v", kept, err, autosaveFiles(t, discarded))
	}
}

// runes is each rune of s as a key.
func runes(s string) []tea.KeyMsg {
	var out []tea.KeyMsg
	for _, r := range s {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

// distilledSession is a workbench with a filter, kernels and a distilled result of the
// filter, shown with a view worth restoring: the result selected, in zpk form, the phase
// plot off, L = 128, a bank channel and a renamed item.
func distilledSession(t *testing.T, autosaveDir string) *Model {
	t.Helper()
	m := openModel(t, "", autosaveDir, 160, 48)
	addPreset(t, m, "ring")
	addKernels(t, m, "kernels", [][]float64{{1, 0.5, 0.25, 0.125}, {0, 1, 0, 0.5}})
	addPreset(t, m, "bank")
	keys(t, m, "]") // its second channel
	keys(t, m, "r", "ctrl+u")
	typeText(t, m, "my bank")
	keys(t, m, "enter", "up", "up") // the ring
	keys(t, m, "D", "enter")        // the fake runner's fit: ring~rtf7
	m.setFocus(paneJobs)
	keys(t, m, "enter") // shows the result over its target
	keys(t, m, "tab", "tab", "tab", "6")
	m.setFocus(panePlots)
	keys(t, m, "3", ">")
	if m.selected().name != "ring~rtf7" || m.plots.data().ovName != "ring" || m.repr.tab != filters.FormZPK {
		t.Fatalf("setup: selected %q over %q, tab %q", m.selected().name, m.plots.data().ovName, m.repr.tab)
	}
	return m
}

// withoutStatus is the screen without its status line, whose message says what was done last.
func withoutStatus(m *Model) string {
	lines := strings.Split(screen(m), "\n")
	return strings.Join(append(lines[:len(lines)-2:len(lines)-2], lines[len(lines)-1]), "\n")
}

// TestSessionKeepsEverything: a session file keeps every item in order, each result's link
// to its target and its job (spec, status, report, log) and the view, and reopens as it was
// saved: o (overlay on target) works on the result, the jobs pane shows the job (issue 21
// item 3).
func TestSessionKeepsEverything(t *testing.T) {
	m := distilledSession(t, "")
	path := filepath.Join(t.TempDir(), "work.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "save-session "+path)
	keys(t, m, "enter")
	want := withoutStatus(m)

	s := loadSession(t, path)
	if got := names(s); !slices.Equal(got, []string{"ring", "kernels", "my bank", "ring~rtf7"}) {
		t.Errorf("order %v", got)
	}
	if len(s.Jobs) != 1 {
		t.Fatalf("%d jobs", len(s.Jobs))
	}
	j := s.Jobs[0]
	res, _ := s.Filter(j.Result)
	if j.Status != sessions.JobDone || j.Target != s.Order()[0] || res.Name != "ring~rtf7" || res.Origin.Target != j.Target ||
		res.Origin.Job != j.ID || len(j.Log) != 2 || !strings.Contains(string(j.Spec), `"order":7`) || !strings.Contains(string(j.Report), `"max_rel_error":0.125`) {
		t.Errorf("job %+v, result %+v", j, res)
	}
	if s.UI.Selected != j.Result || s.UI.FormTab != "zpk" || slices.Contains(s.UI.Plots, "phase") {
		t.Errorf("UI %+v", s.UI)
	}

	m2 := openModel(t, path, "", 160, 48)
	if got := withoutStatus(m2); got != want {
		t.Errorf("reopened, the screen differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
	if m2.sess.Dirty() {
		t.Error("a session just opened is unsaved")
	}
	// o turns the overlay of the result's target off and on
	m2.setFocus(panePlots)
	keys(t, m2, "o")
	if m2.plots.data().ovName != "" {
		t.Error("o did not turn the overlay off")
	}
	keys(t, m2, "o")
	if d := m2.plots.data(); d.ovName != "ring" || d.ovResp == nil {
		t.Errorf("o: the overlay is %q", d.ovName)
	}
}

// autosaveFiles lists the autosave files in dir.
func autosaveFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+sessions.Extension))
	return m
}

// killedCopy stands for the workbench whose only autosave is in auto being killed: it returns a
// new autosave directory holding a copy of that file, which the next start offers. (The
// workbench in this process holds its own file's lock, as a running one does; a killed one
// would not.)
func killedCopy(t *testing.T, auto string) string {
	t.Helper()
	files := autosaveFiles(t, auto)
	if len(files) != 1 {
		t.Fatalf("autosaves %v", files)
	}
	dir := filepath.Join(t.TempDir(), "autosave")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(files[0])), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAutosaveAndRecovery: every change is autosaved (0600, in a 0700 directory) before the
// next one is made; at the next start the autosave left by a killed workbench is offered and
// recovery shows exactly what was on screen; saving or a clean quit removes the autosave
// (issue 21 item 1).
func TestAutosaveAndRecovery(t *testing.T) {
	auto := filepath.Join(t.TempDir(), "state", "autosave")
	if err := os.MkdirAll(auto, 0o755); err != nil {
		t.Fatal(err)
	}
	m := distilledSession(t, auto)
	files := autosaveFiles(t, auto)
	if len(files) != 1 {
		t.Fatalf("autosaves %v", files)
	}
	for _, c := range []struct {
		name string
		want os.FileMode
	}{{auto, 0o700}, {files[0], 0o600}} {
		if fi, err := os.Stat(c.name); err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %v, want %v (%v)", c.name, fi.Mode().Perm(), c.want, err)
		}
	}
	want := withoutStatus(m)
	// The process is killed: its autosave stays.
	dead := killedCopy(t, auto)
	m2 := openModel(t, "", dead, 160, 48)
	d, ok := dialogOf[*recoverDialog](m2)
	if !ok || !strings.Contains(screen(m2), "an untitled session") || !strings.Contains(screen(m2), "3 filters, 1 target, 1 job") {
		t.Fatalf("no offer to recover:\n%s", screen(m2))
	}
	_ = d
	keys(t, m2, "enter")
	if got := withoutStatus(m2); got != want {
		t.Errorf("recovered, the screen differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
	if !m2.sess.Dirty() || !strings.Contains(m2.status.text, "recovered an untitled session") {
		t.Errorf("recovered: dirty %v, status %q", m2.sess.Dirty(), m2.status.text)
	}
	// saving removes the autosave; so does a clean quit of the first workbench
	path := filepath.Join(t.TempDir(), "r.ssmlab")
	keys(t, m2, ":")
	typeText(t, m2, "save-session "+path)
	keys(t, m2, "enter")
	if left := autosaveFiles(t, dead); len(left) != 0 || m2.sess.Dirty() {
		t.Errorf("saved, yet autosaves %v remain", left)
	}
	keys(t, m, "q", "d", "y")
	if left := autosaveFiles(t, auto); len(left) != 0 || !m.quitting {
		t.Errorf("quit discarding: autosaves %v remain", left)
	}
}

// TestAutosaveFollowsEveryChange: after each change the autosave holds it.
func TestAutosaveFollowsEveryChange(t *testing.T) {
	auto := t.TempDir()
	m := openModel(t, "", auto, 120, 40)
	if files := autosaveFiles(t, auto); len(files) != 0 {
		t.Fatalf("a clean session autosaved: %v", files)
	}
	holds := func(want ...string) { t.Helper(); autosaveHolds(t, auto, want...) }
	keys(t, m, ":")
	typeText(t, m, "preset pair")
	keys(t, m, "enter")
	holds("pair")
	keys(t, m, ":")
	typeText(t, m, "rename x")
	keys(t, m, "enter")
	holds("x")
	keys(t, m, "y")
	holds("x", "x-copy")
}

// TestOutsideTargetsAsk: a session whose linked target lies outside its directory asks
// before reading it (issue 21 item 15).
func TestOutsideTargetsAsk(t *testing.T) {
	root := t.TempDir()
	elsewhere := filepath.Join(root, "elsewhere")
	here := filepath.Join(root, "here")
	os.MkdirAll(elsewhere, 0o755)
	os.MkdirAll(here, 0o755)
	k, _ := kernelArray([][]float64{{1, 0.5, 0.25}})
	if _, err := sessions.ExportFile(filepath.Join(elsewhere, "secret.npy"), []sessions.Item{{Target: &sessions.Target{Name: "k", Kernels: k}}},
		sessions.ExportOptions{Format: sessions.ExportNPY}); err != nil {
		t.Fatal(err)
	}
	s := sessions.New()
	if _, err := s.AddTarget(sessions.Target{Name: "secret", Linked: true, Source: &sessions.Source{Path: "../elsewhere/secret.npy"}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(here, "s.ssmlab")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{"n", "y"} {
		m := openModel(t, path, "", 120, 40)
		c, ok := dialogOf[*confirm](m)
		if !ok || !strings.Contains(c.body, "../elsewhere/secret.npy") {
			t.Fatalf("no question: %T, status %q", m.dialog, m.status.text)
		}
		keys(t, m, answer)
		e := m.selected()
		switch answer {
		case "n":
			if e.problem() == nil || !strings.Contains(screen(m), "unread") {
				t.Errorf("n read the target:\n%s", screen(m))
			}
		case "y":
			if e.problem() != nil || len(e.kernel()) != 3 || m.sess.Dirty() {
				t.Errorf("y: kernels %v, problem %v, dirty %v", e.kernel(), e.problem(), m.sess.Dirty())
			}
		}
	}
}

// TestResultsOfAnotherSessionAreDropped: a response computed for item f1 of the session open
// before is not shown for item f1 of the session opened since.
func TestResultsOfAnotherSessionAreDropped(t *testing.T) {
	dir := t.TempDir()
	s1 := writeSession(t, dir, "s1.ssmlab")
	s2 := sessions.New()
	ring, _ := ringDiagonal(8, 0.95)
	if _, err := s2.AddFilter(filters.Document{Name: "other", Filter: ring}); err != nil {
		t.Fatal(err)
	}
	p2 := filepath.Join(dir, "s2.ssmlab")
	if err := s2.Save(p2); err != nil {
		t.Fatal(err)
	}
	m := openModel(t, s1, "", 120, 40)
	// the first session's responses at 2L, computed but not delivered
	m.setFocus(panePlots)
	_, cmd := m.Update(keyMsg(">"))
	old := lastResp(cmd)
	if old.id != "f1" {
		t.Fatalf("no responses for f1: %+v", old)
	}
	send(t, m, openFile(fileStore{}, p2)())
	if e := m.selected(); e.id != "f1" || e.name != "other" {
		t.Fatalf("opened %+v", e)
	}
	send(t, m, old)
	if e := m.selected(); e.resp == nil || e.resp.r.Impulse[1] != ring.Impulse(128)[1] {
		t.Errorf("the other session's responses are shown for f1")
	}
}

// TestRecoverDialogDiscardsAndKeeps: d then y discards an autosave for good, esc keeps the
// others for later, and :recover offers them again.
func TestRecoverDialogDiscardsAndKeeps(t *testing.T) {
	auto := t.TempDir()
	for _, name := range []string{"a", "b"} {
		s := sessions.New()
		f, _ := pairZPK(0.5)
		if _, err := s.AddFilter(filters.Document{Name: name, Filter: f}); err != nil {
			t.Fatal(err)
		}
		data, err := sessions.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		// an autosave file as a killed workbench leaves it
		text := strings.Replace(string(data), `"version": 2,`, `"version": 2, "autosave": {"origin": "", "saved": "2026-01-02T03:04:05Z"},`, 1)
		if err := os.WriteFile(filepath.Join(auto, "untitled-"+name+"-1.ssmlab"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := openModel(t, "", auto, 120, 40)
	if d, ok := dialogOf[*recoverDialog](m); !ok || len(d.list) != 2 {
		t.Fatalf("offered %T", m.dialog)
	}
	keys(t, m, "d", "y")
	if files := autosaveFiles(t, auto); len(files) != 1 {
		t.Fatalf("d, y left %v", files)
	}
	if d, ok := dialogOf[*recoverDialog](m); !ok || len(d.list) != 1 {
		t.Fatalf("after the discard: %T, want the offer of the other", m.dialog)
	}
	keys(t, m, "esc")
	if m.dialog != nil || len(autosaveFiles(t, auto)) != 1 {
		t.Fatal("esc did not keep the other")
	}
	keys(t, m, ":")
	typeText(t, m, "recover")
	keys(t, m, "enter")
	if d, ok := dialogOf[*recoverDialog](m); !ok || len(d.list) != 1 {
		t.Fatalf(":recover offered %T", m.dialog)
	}
	keys(t, m, "enter")
	if len(m.entries()) != 1 || !m.sess.Dirty() {
		t.Errorf("recovered %d items", len(m.entries()))
	}
}

// TestConversionReportIsKept: the report of the conversion that made a filter, shown in the
// representation, is there again when the session is reopened.
func TestConversionReportIsKept(t *testing.T) {
	m := openModel(t, "", "", 120, 40)
	addPreset(t, m, "pair")
	keys(t, m, "tab", "5", "c")
	if !strings.Contains(screen(m), "zpk → tf: rel error") {
		t.Fatalf("no report:\n%s", screen(m))
	}
	path := filepath.Join(t.TempDir(), "r.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "save-session "+path)
	keys(t, m, "enter")
	want := withoutStatus(m)
	m2 := openModel(t, path, "", 120, 40)
	if got := withoutStatus(m2); got != want {
		t.Errorf("reopened:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestAutosaveDueDuringWrite: a change whose autosave falls due while an earlier autosave is
// being written is autosaved as soon as that write ends, not a whole interval later (a slow
// write could otherwise push it past the 2 s the guide promises).
func TestAutosaveDueDuringWrite(t *testing.T) {
	auto := t.TempDir()
	m := openModel(t, "", auto, 120, 40)
	keys(t, m, ":")
	typeText(t, m, "preset pair")
	keys(t, m, "enter")
	m.disk.tick = true // the test delivers the next tick itself
	keys(t, m, ":")
	typeText(t, m, "rename x")
	keys(t, m, "enter")
	m.disk.tick = false
	write := m.routeDisk(autosaveTickMsg{}) // the rename's autosave, in flight
	if write == nil || !m.disk.busy {
		t.Fatal("the tick started no autosave")
	}
	keys(t, m, "y") // a copy; its tick comes while the write is in flight
	next := m.routeDisk(write())
	if next == nil {
		t.Fatal("the write ended and the copy's autosave waits for another interval")
	}
	runCmd(t, m, next, 0)
	autosaveHolds(t, auto, "x", "x-copy")
}

// autosaveHolds checks that auto holds one autosave, of a session whose items are want.
func autosaveHolds(t *testing.T, auto string, want ...string) {
	t.Helper()
	files := autosaveFiles(t, auto)
	if len(files) != 1 {
		t.Fatalf("autosaves %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s); !slices.Equal(got, want) {
		t.Errorf("the autosave holds %v, want %v", got, want)
	}
}

// TestRecoverDialogFitsTheScreen: a long list of autosaves scrolls with the cursor inside
// the dialog; it pushed the dialog's lower edge and the key hints off an 80×24 screen.
func TestRecoverDialogFitsTheScreen(t *testing.T) {
	m := openModel(t, "", "", 80, 24)
	var list []sessions.AutosaveInfo
	for i := range 30 {
		list = append(list, sessions.AutosaveInfo{Path: fmt.Sprintf("a%02d", i), Origin: fmt.Sprintf("s%02d.ssmlab", i),
			Saved: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Summary: "1 filter, 0 targets, 0 jobs"})
	}
	send(t, m, autosavesMsg{list: list})
	check := func(visible, want string) {
		t.Helper()
		s := screen(m)
		for _, w := range []string{"enter recovers", "╚", "▸ " + visible, want} {
			if !strings.Contains(s, w) {
				t.Fatalf("no %q on screen:\n%s", w, s)
			}
		}
	}
	check("s00.ssmlab", "more below")
	for range 29 {
		keys(t, m, "down")
	}
	check("s29.ssmlab", "more above")
	// shorter than the dialog can be: it is cut, the status bar's keys stay
	send(t, m, tea.WindowSizeMsg{Width: 80, Height: 9})
	if s := screen(m); !strings.Contains(s, "enter recovers") {
		t.Fatalf("no key hints at 80×9:\n%s", s)
	}
}

// TestRecoverDialogShowsWholeSummary: the offer to recover gives each autosave's summary and
// the items unsaved whole, wrapped under its line, at 80×24 and at 120×40. The line was cut
// at the box's width: "/tmp/qa/session.ssmlab · autosaved … · 4 filters, 2 t…", and the
// items unsaved were said only once d asked.
func TestRecoverDialogShowsWholeSummary(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := openModel(t, "", "", size[0], size[1])
		list := []sessions.AutosaveInfo{{Path: "a", Origin: "/home/someone/projects/hyena-distillation/session.ssmlab",
			Saved: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Summary: "4 filters, 2 targets, 3 jobs",
			Changed: []string{"hy"}, Deleted: []string{"old"}}, {Path: "b", Origin: "", Saved: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Summary: "1 filter, 0 targets, 0 jobs"}}
		send(t, m, autosavesMsg{list: list})
		// the words in the box, read across its wrapped lines
		s := strings.Join(strings.Fields(strings.ReplaceAll(screen(m), "║", " ")), " ")
		for _, want := range []string{"4 filters, 2 targets, 3 jobs", "2 unsaved: hy, old (deleted)", "an untitled session", "1 filter, 0 targets, 0 jobs", "enter recovers"} {
			if !strings.Contains(s, want) {
				t.Errorf("%dx%d: no %q on screen:\n%s", size[0], size[1], want, screen(m))
			}
		}
	}
}

// TestOpenSameFileTwice: opening a file the session holds already, under its name and with
// identical content, selects that item and says so instead of adding res-2 (Session.Add's
// rule, as ssmlab import --session); different content of a name in use is still res-2.
func TestOpenSameFileTwice(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, 120, 40, nil)
	path := filepath.Join(dir, "res.json")
	f, _ := pairZPK(0.7)
	if err := writeDoc(path, filters.Document{Name: "res", Filter: f}); err != nil {
		t.Fatal(err)
	}
	open := func() {
		t.Helper()
		keys(t, m, "o", "ctrl+u")
		typeText(t, m, path)
		keys(t, m, "enter")
	}
	open()
	res := m.sel
	addPreset(t, m, "pair") // selected now
	open()
	if got := names(m.sess); !slices.Equal(got, []string{"res", "pair"}) || m.sel != res {
		t.Fatalf("opened twice: items %q, selected %q (want %q), status %q", got, m.sel, res, m.status.text)
	}
	if !strings.Contains(screen(m), "already open as res") || m.status.level == levelError {
		t.Errorf("status %q", m.status.text)
	}
	g, _ := pairZPK(0.5)
	if err := writeDoc(path, filters.Document{Name: "res", Filter: g}); err != nil {
		t.Fatal(err)
	}
	open()
	if got := names(m.sess); !slices.Equal(got, []string{"res", "pair", "res-2"}) || m.selected().name != "res-2" {
		t.Fatalf("other content: items %q, status %q", got, m.status.text)
	}
	open() // found again under the name it was given
	if got := names(m.sess); len(got) != 3 || m.selected().name != "res-2" || !strings.Contains(m.status.text, "already open as res-2") {
		t.Fatalf("res-2 again: items %q, status %q", got, m.status.text)
	}

	rows := [][]float64{{1, 0.5, 0.25, 0.125}}
	addKernels(t, m, "k", rows)
	k := m.sel
	addKernels(t, m, "k", rows)
	if got := names(m.sess); len(got) != 4 || m.sel != k || !strings.Contains(m.status.text, "already open as k") {
		t.Fatalf("kernels twice: items %q, status %q", got, m.status.text)
	}
	addKernels(t, m, "k", [][]float64{{1, 0.5, 0.25, 0.1}})
	if got := names(m.sess); len(got) != 5 || m.selected().name != "k-2" {
		t.Fatalf("other kernels: items %q, status %q", got, m.status.text)
	}
}

// TestRecoveredDeletionIsUnsaved: an item deleted before the workbench was killed is unsaved
// work once its autosave is recovered: the status bar counts it and quitting names it, as it
// did before the crash. Recovered, the deletion was not counted ("0 unsaved" items, and the
// quit question named nothing it would lose).
func TestRecoveredDeletionIsUnsaved(t *testing.T) {
	dir := t.TempDir()
	s := sessions.New()
	for _, name := range []string{"keep", "gone"} {
		f, _ := pairZPK(0.8)
		if _, err := s.AddFilter(filters.Document{Name: name, Filter: f}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.ssmlab")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	auto := filepath.Join(t.TempDir(), "autosave")
	m := openModel(t, path, auto, 120, 40)
	keys(t, m, "down", "x", "y")
	if got := m.unsavedNames(); len(got) != 1 || got[0] != "gone (deleted)" {
		t.Fatalf("before the crash: unsaved %v", got)
	}
	m2 := openModel(t, "", killedCopy(t, auto), 120, 40) // the process is killed: its autosave stays
	if _, ok := dialogOf[*recoverDialog](m2); !ok {
		t.Fatalf("no offer to recover:\n%s", screen(m2))
	}
	keys(t, m2, "enter")
	if got := m2.unsavedNames(); len(got) != 1 || got[0] != "gone (deleted)" {
		t.Errorf("recovered: unsaved %v, want [gone (deleted)]", got)
	}
	if !strings.Contains(screen(m2), "1 unsaved") {
		t.Errorf("recovered: the status bar does not count the deletion:\n%s", screen(m2))
	}
	keys(t, m2, "q")
	c, ok := dialogOf[*confirm](m2)
	if !ok || !strings.Contains(c.body, "gone (deleted)") {
		t.Fatalf("quitting: dialog %T %+v, want the deletion named", m2.dialog, c)
	}
	// Saved, the deletion is saved work: nothing is unsaved any more.
	keys(t, m2, "s")
	if m2.sess.Dirty() || len(m2.unsavedNames()) != 0 {
		t.Errorf("saved: dirty %v, unsaved %v", m2.sess.Dirty(), m2.unsavedNames())
	}
	if got := names(loadSession(t, path)); len(got) != 1 || got[0] != "keep" {
		t.Errorf("saved session holds %v", got)
	}
}

// TestRecoverDiscardAsksFirst: d at the offer to recover asks before it discards, naming the
// work that would be lost (its items and when it was autosaved); n, esc and keys read together
// (a stray d with the y after it) keep the work, and the offer is back. A single d discarded
// the autosave at once, for good.
func TestRecoverDiscardAsksFirst(t *testing.T) {
	s := sessions.New()
	for _, name := range []string{"keep", "gone"} {
		f, _ := pairZPK(0.8)
		if _, err := s.AddFilter(filters.Document{Name: name, Filter: f}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "s.ssmlab")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	auto := filepath.Join(t.TempDir(), "autosave")
	m := openModel(t, path, auto, 120, 40)
	keys(t, m, ":")
	typeText(t, m, "rename edited")
	keys(t, m, "enter", "down", "x", "y")
	dead := killedCopy(t, auto) // the process is killed: its autosave stays
	m2 := openModel(t, "", dead, 120, 40)
	d, ok := dialogOf[*recoverDialog](m2)
	if !ok || len(d.list) != 1 {
		t.Fatalf("no offer to recover:\n%s", screen(m2))
	}
	saved := d.list[0].Saved.Local().Format("2006-01-02 15:04:05")
	offered := func(how string) {
		t.Helper()
		if d, ok := dialogOf[*recoverDialog](m2); !ok || len(d.list) != 1 || len(autosaveFiles(t, dead)) != 1 {
			t.Fatalf("%s: dialog %T, autosaves %v; want the work kept and offered", how, m2.dialog, autosaveFiles(t, dead))
		}
	}

	send(t, m2, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("dy")})
	offered("d and y read together")
	keys(t, m2, "d")
	c, ok := dialogOf[*confirm](m2)
	if !ok {
		t.Fatalf("d: dialog %T, want a question", m2.dialog)
	}
	for _, want := range []string{"discard the unsaved work of " + path, "autosaved " + saved + " · 2 unsaved: edited, gone (deleted)", "cannot be recovered", "y discards it"} {
		if !strings.Contains(c.body, want) {
			t.Errorf("the question %q does not say %q", c.body, want)
		}
	}
	if !strings.Contains(screen(m2), "discard unsaved work?") || len(autosaveFiles(t, dead)) != 1 {
		t.Fatalf("d: the question is not on screen, or the work is gone:\n%s", screen(m2))
	}
	keys(t, m2, "d", "enter", "q") // no answer: the question stays
	if _, ok := dialogOf[*confirm](m2); !ok {
		t.Fatalf("keys the question does not name closed it: %T", m2.dialog)
	}
	keys(t, m2, "n")
	offered("n")
	if !strings.Contains(m2.status.text, "kept the unsaved work of "+path) {
		t.Errorf("n: status %q", m2.status.text)
	}
	keys(t, m2, "d", "esc")
	offered("esc")

	keys(t, m2, "d", "y")
	if m2.dialog != nil || len(autosaveFiles(t, dead)) != 0 || !strings.Contains(m2.status.text, "discarded the unsaved work of "+path) {
		t.Errorf("d, y: dialog %T, autosaves %v, status %q", m2.dialog, autosaveFiles(t, dead), m2.status.text)
	}
}

// TestQuitAndOpenDiscardAskFirst: d at the quit question, and at the question before another
// session opens in this one's place, asks before it discards, naming the unsaved work (as d at
// the offer to recover does, TestRecoverDiscardAsksFirst); n or esc goes back to the question
// the d answered, y discards. A single d, after the user's own q or :open, discarded the work
// and its autosave at once.
func TestQuitAndOpenDiscardAskFirst(t *testing.T) {
	dir := t.TempDir()
	path := writeSession(t, dir, "s.ssmlab")
	other := filepath.Join(dir, "other.ssmlab")
	if err := os.Rename(writeSession(t, t.TempDir(), "o.ssmlab"), other); err != nil {
		t.Fatal(err)
	}
	edited := func(auto string) *Model {
		t.Helper()
		m := openModel(t, path, auto, 120, 40)
		runPalette(t, m, "rename edited")
		addPreset(t, m, "pair")
		if len(autosaveFiles(t, auto)) != 1 {
			t.Fatalf("no autosave of the unsaved work")
		}
		return m
	}
	asked := func(m *Model, auto, how string, want ...string) {
		t.Helper()
		c, ok := dialogOf[*confirm](m)
		if !ok || c.title != "discard unsaved work?" {
			t.Fatalf("%s: dialog %T, want the question before discarding:\n%s", how, m.dialog, screen(m))
		}
		want = append(want, "discard the unsaved changes of "+path, "2 unsaved: edited, pair", "cannot be recovered")
		for _, w := range want {
			if !strings.Contains(c.body, w) {
				t.Errorf("%s: the question %q does not say %q", how, c.body, w)
			}
		}
		if m.quitting || len(autosaveFiles(t, auto)) != 1 || !m.sess.Dirty() || m.sess.Path != path {
			t.Fatalf("%s: the work is gone before the answer (quitting %v, autosaves %v)", how, m.quitting, autosaveFiles(t, auto))
		}
	}
	back := func(m *Model, how, title string) {
		t.Helper()
		if c, ok := dialogOf[*confirm](m); !ok || c.title != title || m.quitting || !m.sess.Dirty() {
			t.Fatalf("%s: dialog %T, quitting %v; want %q again", how, m.dialog, m.quitting, title)
		}
	}

	// quit
	auto := t.TempDir()
	m := edited(auto)
	keys(t, m, "q", "d")
	asked(m, auto, "q, d", "y discards them and quits")
	if !strings.Contains(screen(m), "discard unsaved work?") {
		t.Errorf("the question is not on screen:\n%s", screen(m))
	}
	keys(t, m, "d", "s", "enter") // no answer: the question stays
	asked(m, auto, "keys the question does not name")
	keys(t, m, "n")
	back(m, "n", "quit ssmlab?")
	if !strings.Contains(m.status.text, "kept the unsaved changes of "+path) {
		t.Errorf("n: status %q", m.status.text)
	}
	keys(t, m, "d", "esc")
	back(m, "esc", "quit ssmlab?")
	keys(t, m, "d", "y")
	if !m.quitting || len(autosaveFiles(t, auto)) != 0 {
		t.Errorf("d, y: quitting %v, autosaves %v", m.quitting, autosaveFiles(t, auto))
	}
	if kept, err := m.keepUnsaved(); kept || err != nil {
		t.Errorf("discarded, yet kept for recovery: %v, %v", kept, err)
	}

	// a second ctrl+c still quits, keeping the work for recovery
	auto = t.TempDir()
	m = edited(auto)
	keys(t, m, "ctrl+c", "d", "ctrl+c")
	if !m.quitting {
		t.Fatalf("ctrl+c, d, ctrl+c did not quit: dialog %T", m.dialog)
	}
	if kept, err := m.keepUnsaved(); !kept || err != nil || len(autosaveFiles(t, auto)) != 1 {
		t.Errorf("ctrl+c, d, ctrl+c: kept %v (%v), autosaves %v", kept, err, autosaveFiles(t, auto))
	}

	// open another session in this one's place
	auto = t.TempDir()
	m = edited(auto)
	runPalette(t, m, "open "+other)
	title := "open " + other + "?"
	back(m, ":open", title)
	keys(t, m, "d")
	asked(m, auto, ":open, d", "y discards them and opens "+other)
	keys(t, m, "esc")
	back(m, "esc", title)
	keys(t, m, "d", "n")
	back(m, "n", title)
	keys(t, m, "d", "y")
	if m.dialog != nil || m.sess.Path != other || m.sess.Dirty() || len(autosaveFiles(t, auto)) != 0 {
		t.Errorf("d, y: dialog %T, session %s (dirty %v), autosaves %v", m.dialog, m.sess.Path, m.sess.Dirty(), autosaveFiles(t, auto))
	}
}

// TestOldSessionReportKeepsCondition: a session saved before reports held "conditioned"
// (the same file without it) shows the conversion's condition number when reopened, as it
// did when saved; it read as a conversion without one.
func TestOldSessionReportKeepsCondition(t *testing.T) {
	m := openModel(t, "", "", 120, 40)
	addPreset(t, m, "pair")
	keys(t, m, "tab", "5", "c")
	if s := screen(m); !strings.Contains(s, "zpk → tf: rel error") || !strings.Contains(s, ", condition ") {
		t.Fatalf("no conditioned report:\n%s", s)
	}
	path := filepath.Join(t.TempDir(), "r.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "save-session "+path)
	keys(t, m, "enter")
	want := withoutStatus(m)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.NewReplacer(`"conditioned":true,`, "", `"conditioned": true,`, "").Replace(string(data))
	if old == string(data) {
		t.Fatalf("the saved report has no \"conditioned\" to remove:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	m2 := openModel(t, path, "", 120, 40)
	if got := withoutStatus(m2); got != want {
		t.Errorf("reopened:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestQuitKeepingAsksWhenTheAutosaveFails: ctrl+c at the quit question keeps the unsaved work
// for recovery by autosaving it; when that write fails (a full disk: here the autosave
// directory is a file), the workbench stays open and says so, where it quit and lost the
// work, exit 0 and not a word (QA: a state directory on a full tmpfs). A second ctrl+c quits
// anyway, saying on exit that the work was not kept; a signal still ends the program.
func TestQuitKeepingAsksWhenTheAutosaveFails(t *testing.T) {
	blocked := filepath.Join(t.TempDir(), "auto")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := openModel(t, "", blocked, 120, 40)
	addPreset(t, m, "pair")
	keys(t, m, "q", "ctrl+c")
	q, ok := dialogOf[*confirm](m)
	if m.quitting || !ok || !strings.Contains(q.body, "could not be kept") || !m.sess.Dirty() {
		t.Fatalf("quitting %v with the autosave failing: dialog %T, status %q", m.quitting, m.dialog, m.status.text)
	}
	if strings.Contains(q.body, "cancelled") {
		t.Errorf("with no job running, the question says %q", q.body)
	}
	keys(t, m, "esc")
	if m.quitting || m.dialog != nil {
		t.Fatalf("esc: quitting %v, dialog %T", m.quitting, m.dialog)
	}
	// The directory can be written again: the same keys keep the work and quit.
	if err := os.Remove(blocked); err != nil {
		t.Fatal(err)
	}
	keys(t, m, "q", "ctrl+c")
	if !m.quitting {
		t.Fatalf("not quitting once the autosave works: dialog %T, status %q", m.dialog, m.status.text)
	}
	autosaveHolds(t, blocked, "pair")

	// The quit cancelled the running jobs before the autosave failed: staying does not bring
	// them back, and the question says so.
	jammed := filepath.Join(t.TempDir(), "auto")
	if err := os.WriteFile(jammed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m = openModel(t, "", jammed, 120, 40)
	addPreset(t, m, "pair")
	cancelled := 0
	m.jobs = []*job{{num: 1, status: sessions.JobRunning, cancel: func() { cancelled++ }}}
	keys(t, m, "q", "ctrl+c")
	q, ok = dialogOf[*confirm](m)
	if !ok || !strings.Contains(q.body, "could not be kept") || cancelled != 1 {
		t.Fatalf("quitting with a job running and the autosave failing: dialog %T, cancelled %d times", m.dialog, cancelled)
	}
	if !strings.Contains(q.body, "1 running job(s) were cancelled") {
		t.Errorf("the question after the failed autosave does not say the job was cancelled: %q", q.body)
	}

	// ctrl+c at the second question quits, losing the work, and says so.
	lost := filepath.Join(t.TempDir(), "auto")
	if err := os.WriteFile(lost, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m = openModel(t, "", lost, 120, 40)
	addPreset(t, m, "pair")
	keys(t, m, "q", "ctrl+c", "ctrl+c")
	if !m.quitting || len(m.ExitNotes()) != 1 || !strings.Contains(m.ExitNotes()[0], "not kept") {
		t.Fatalf("the second ctrl+c: quitting %v, notes %q", m.quitting, m.ExitNotes())
	}

	// A signal ends the program whatever: Main says the work could not be kept.
	m = openModel(t, "", lost, 120, 40)
	addPreset(t, m, "pair")
	send(t, m, signalMsg{sig: syscall.SIGTERM})
	if kept, err := m.keepUnsaved(); !m.quitting || kept || err == nil {
		t.Fatalf("a signal: quitting %v, kept %v (%v)", m.quitting, kept, err)
	}
}
