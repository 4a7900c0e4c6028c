package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/sessions"
)

// Saving, opening and quitting. The session is saved whole, to the file it was opened from
// or saved to (ctrl+s, :w, :save-session) or as another (:save-session PATH), from a snapshot
// (sessions.Session.Clone) in a command; one write of the session or its autosave is in
// flight at a time (diskState), so that they never race.

// afterSave is what waits on a save: quitting, or opening another session in this one's place.
type afterSave struct {
	quit     bool
	open     *sessions.Session
	openPath string
}

// saveReq is a save of the session: where, and whether over a file that changed on disk or
// another that exists.
type saveReq struct {
	path string
	over bool
	then afterSave
}

// sessionSavedMsg reports a save of the session: the generation it saved.
type sessionSavedMsg struct {
	req   saveReq
	gen   uint64
	items int
	err   error
}

func saveSessionCmd(st Store, snap *sessions.Session, r saveReq) tea.Cmd {
	return func() tea.Msg {
		err := safely("save", func() error { return st.SaveSession(snap, r.path, r.over) })
		return sessionSavedMsg{req: r, gen: snap.Generation(), items: len(snap.Order()), err: err}
	}
}

// snapshot is the session as it is now, UI state included, for a write in the background.
func (m *Model) snapshot() *sessions.Session {
	m.sess.SetUI(m.uiState())
	return m.sess.Clone()
}

// saveSession saves the session to path, or to its own file when path is "" (asking where
// when it has none).
func (m *Model) saveSession(path string, over bool, then afterSave) tea.Cmd {
	if path == "" {
		path = m.sess.Path
	}
	if path == "" {
		m.askSessionPath(freePath(defaultPath(m.dir, "session", sessions.Extension)), then)
		return nil
	}
	r := saveReq{path: path, over: over, then: then}
	if m.disk.busy {
		m.disk.queued = &r
		return nil
	}
	m.disk.busy = true
	m.setStatus(levelInfo, "saving the session to "+path+"…")
	return saveSessionCmd(m.deps.Store, m.snapshot(), r)
}

// askSessionPath asks where to save the untitled session, suggesting path, a file that
// does not exist yet (freePath: a few lstat calls, which the event loop can afford), so that
// enter never asks to overwrite another.
func (m *Model) askSessionPath(path string, then afterSave) {
	m.openDialog(newPrompt("save the session", "path (a session file, .ssmlab):", path,
		func(m *Model, text string) tea.Cmd {
			if text == "" {
				// say so: the quit or open that waited on this save does not happen either
				m.setStatus(levelWarn, "nothing saved: the path was empty")
				return nil
			}
			return m.saveSession(expandHome(text), false, then)
		}))
}

func (m *Model) onSessionSaved(msg sessionSavedMsg) tea.Cmd {
	m.disk.busy = false
	r := msg.req
	var changed *sessions.ChangedError
	var exists *ExistsError
	again := func(m *Model) tea.Cmd { return m.saveSession(r.path, true, r.then) }
	// asked once no other dialog is open, as :export's question: the palette being typed in
	// when the save comes back keeps its keys
	switch {
	case errors.As(msg.err, &changed) && changed.Removed:
		m.ask = saveAnewQuestion(changed.Error()+".", r.path, again)
	case errors.As(msg.err, &changed):
		m.ask = overwriteQuestion(changed.Error()+".", ":save-session PATH saves elsewhere", "not saved", again)
	case errors.As(msg.err, &exists):
		m.ask = overwriteQuestion(r.path+" exists and is not this session's file.", ":save-session PATH saves elsewhere", "not saved", again)
	case msg.err != nil:
		m.setError(msg.err)
		if r.then.quit {
			m.setStatus(levelError, "not quitting: "+oneLine(msg.err))
		}
	default:
		m.sess.MarkSaved(r.path, msg.gen)
		done := fmt.Sprintf("saved the session (%d item(s)) to %s", msg.items, r.path)
		m.setStatus(levelOK, done)
		switch {
		case r.then.quit:
			m.exitNotes = append(m.exitNotes, done)
			return m.quit(quitClean)
		case r.then.open != nil:
			return m.install(r.then.open, r.then.openPath)
		}
	}
	return m.idle()
}

// overwriteQuestion asks whether a write may overwrite the file it refused to (why): y
// writes it again, over it (again); n or esc says cancelled. elsewhere says how to write to
// another file.
func overwriteQuestion(why, elsewhere, cancelled string, again func(m *Model) tea.Cmd) *confirm {
	return yesQuestion("overwrite?", why+"\n\ny overwrites it · n or esc cancels ("+elsewhere+")", cancelled, again)
}

// saveAnewQuestion asks whether to save the session as its file, which was removed since it
// was opened or saved (why): there is nothing to overwrite, but the removal may have been
// meant. y saves it (again); n or esc says not saved.
func saveAnewQuestion(why, path string, again func(m *Model) tea.Cmd) *confirm {
	return yesQuestion("save anew?", why+"\n\ny saves the session as "+path+" anew · n or esc cancels (:save-session PATH saves elsewhere)", "not saved", again)
}

// yesQuestion asks a question that y answers with yes; n or esc says cancelled, and runs the
// question's cancel, which a caller may extend (to go back where the question came from).
func yesQuestion(title, body, cancelled string, yes func(m *Model) tea.Cmd) *confirm {
	c := &confirm{title: title, body: body, cancel: func(m *Model) { m.setStatus(levelInfo, cancelled) }}
	c.choices = []choice{
		{keys: []string{"y", "Y"}, run: yes},
		{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd { c.cancel(m); return nil }},
	}
	return c
}

// idle starts what waited for the write in flight to end: a save asked for meanwhile, or
// the quit.
func (m *Model) idle() tea.Cmd {
	d := &m.disk
	if d.busy {
		return nil
	}
	if r := d.queued; r != nil {
		d.queued = nil
		return m.saveSession(r.path, r.over, r.then)
	}
	if q := d.quitWhenIdle; q != quitNone {
		d.quitWhenIdle = quitNone
		return m.quit(q)
	}
	if d.due {
		return m.onAutosaveTick()
	}
	return nil
}

// unsavedNames names the items with unsaved changes, and those deleted since the save.
func (m *Model) unsavedNames() []string {
	var changed []string
	for _, e := range m.entries() {
		if e.dirty {
			changed = append(changed, e.name)
		}
	}
	return namesUnsaved(changed, m.sess.Deleted())
}

// namesUnsaved lists unsaved work, of this session or of an autosave: the items changed, then
// those deleted, marked so.
func namesUnsaved(changed, deleted []string) []string {
	names := slices.Clone(changed)
	for _, name := range deleted {
		names = append(names, name+" (deleted)")
	}
	return names
}

// countUnsaved says what names (namesUnsaved) holds: "2 unsaved: a, b (deleted)".
func countUnsaved(names []string) string {
	return fmt.Sprintf("%d unsaved: %s", len(names), strings.Join(names, ", "))
}

// askQuit quits, or asks first when there is unsaved work: save it to the session (and
// quit), discard it (and quit, once asked again: askDiscardSession), or stay; or, with
// nothing unsaved, when a job is running, since quitting cancels it and loses its work (as x
// asks before cancelling one).
func (m *Model) askQuit() tea.Cmd {
	stay := func(m *Model) { m.setStatus(levelInfo, "not quitting") }
	if !m.sess.Dirty() {
		n := m.running()
		if n == 0 {
			return m.quit(quitClean)
		}
		body := fmt.Sprintf("%d running job(s) will be cancelled: their work so far is lost\n\ny, q or ctrl+c quits · n or esc stays", n)
		m.openDialog(&confirm{title: "quit ssmlab?", body: body, cancel: stay, choices: []choice{
			{keys: []string{"y", "Y", "q"}, run: func(m *Model) tea.Cmd {
				if m.sess.Dirty() { // a job finished meanwhile: its result is unsaved work
					return m.askQuit()
				}
				return m.quit(quitClean)
			}},
			// a second ctrl+c always quits, keeping what a finished job added for recovery
			{keys: []string{"ctrl+c"}, run: func(m *Model) tea.Cmd {
				if m.sess.Dirty() {
					return m.quit(quitKeep)
				}
				return m.quit(quitClean)
			}},
			{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd { stay(m); return nil }},
		}})
		return nil
	}
	where := "to " + m.sess.Path
	if m.sess.Path == "" {
		where = "(it asks where)"
	}
	body := fmt.Sprintf("%s\n\ns saves the session %s and quits · d discards the changes and quits (it asks first) · ctrl+c quits, keeping them to recover at the next start · n or esc stays", m.unsavedWork(), where)
	if n := m.running(); n > 0 {
		body += fmt.Sprintf("\n%d running job(s) will be cancelled", n)
	}
	// a second ctrl+c is the way out that always works, here and at the question d asks;
	// the work stays for recovery
	keep := choice{keys: []string{"ctrl+c"}, run: func(m *Model) tea.Cmd { return m.quit(quitKeep) }}
	q := &confirm{title: "quit ssmlab?", body: body, cancel: stay}
	q.choices = []choice{
		{keys: []string{"s", "S"}, run: func(m *Model) tea.Cmd { return m.saveSession("", false, afterSave{quit: true}) }},
		{keys: []string{"d", "D"}, run: func(m *Model) tea.Cmd {
			d := m.askDiscardSession(q, "quits", func(m *Model) tea.Cmd { return m.quit(quitDiscard) })
			d.choices = append(d.choices, keep)
			d.body += " · ctrl+c quits, keeping them to recover at the next start"
			return nil
		}},
		keep,
		{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd { stay(m); return nil }},
	}
	m.openDialog(q)
	return nil
}

// unsavedWork says what this session's unsaved work is: "2 unsaved: a, b (deleted)".
func (m *Model) unsavedWork() string {
	if names := m.unsavedNames(); len(names) > 0 {
		return countUnsaved(names)
	}
	return "unsaved changes"
}

// askDiscard asks before unsaved work is discarded for good, which one stray d must not do:
// body says what would be lost, and the keys. y discards it (yes); n or esc says kept and goes
// back to the question the d answered (from), as it was. The offer to recover unsaved work,
// the quit question and the question before opening a session in this one's place all
// discard through it.
func (m *Model) askDiscard(from dialog, body, kept string, yes func(m *Model) tea.Cmd) *confirm {
	q := yesQuestion("discard unsaved work?", body, kept, yes)
	back := q.cancel
	q.cancel = func(m *Model) { m.openDialog(from); back(m) }
	m.openDialog(q)
	return q
}

// askDiscardSession asks (askDiscard) before this session's unsaved changes are discarded,
// naming them, and then what follows (then: "quits").
func (m *Model) askDiscardSession(from dialog, then string, yes func(m *Model) tea.Cmd) *confirm {
	name := m.sess.Path
	if name == "" {
		name = "an untitled session"
	}
	body := fmt.Sprintf("discard the unsaved changes of %s?\n%s\ndiscarded, they cannot be recovered: the autosave is deleted too.", name, m.unsavedWork())
	if n := m.running(); n > 0 {
		body += fmt.Sprintf("\n%d running job(s) will be cancelled: their work so far is lost", n)
	}
	body += "\n\ny discards them and " + then + " · n or esc goes back"
	return m.askDiscard(from, body, "kept the unsaved changes of "+name, yes)
}

// quitHow is what a quit does with the autosave.
type quitHow int

const (
	quitNone    quitHow = iota
	quitClean           // nothing unsaved: an autosave is removed
	quitDiscard         // the user discarded the changes: so is the autosave
	quitKeep            // the changes stay in the autosave, for recovery at the next start
	quitLose            // the autosave could not be written and the user quits anyway
)

// keepFailedMsg is a quit that was to keep the unsaved work for recovery, whose autosave
// failed (a full disk, a state directory gone read-only): the workbench stays open, since
// quitting would lose the work. cancelled counts the jobs the quit cancelled before, which
// staying does not bring back.
type keepFailedMsg struct {
	err       error
	cancelled int
}

// quit cancels the jobs and ends the program once no write is in flight, removing or
// completing the autosave as how says.
func (m *Model) quit(how quitHow) tea.Cmd {
	// A quit put off while busy cancelled its jobs then; they may not have ended yet.
	cancelled := max(m.running(), m.disk.quitCancelled)
	m.disk.quitCancelled = 0
	m.cancelJobs()
	m.closeDialog()
	m.disk.discarded = m.disk.discarded || how == quitDiscard
	if m.disk.busy {
		m.disk.quitWhenIdle = how
		m.disk.quitCancelled = cancelled
		return nil
	}
	m.quitting = true
	s := m.snapshot()
	switch {
	case how == quitKeep && m.disk.interval >= 0:
		dir, signalled := m.disk.dir, m.disk.signalled
		return func() tea.Msg {
			if _, err := s.Autosave(dir); err != nil && !signalled {
				// A signal ends the program whatever happens (Main says the work is
				// lost); a key asks first.
				return keepFailedMsg{err: err, cancelled: cancelled}
			}
			return tea.QuitMsg{}
		}
	case how == quitLose:
		m.exitNotes = append(m.exitNotes, "the unsaved work was not kept for recovery: "+m.disk.lastErr)
		return tea.Quit // an earlier autosave, if any, stays
	case how != quitKeep:
		return func() tea.Msg {
			s.RemoveAutosave()
			return tea.QuitMsg{}
		}
	}
	return tea.Quit
}

// endBySignal ends the program for a signal that ends a run (Main): as a second ctrl+c at
// the quit question, keeping the unsaved work, up to date, for recovery.
func (m *Model) endBySignal() tea.Cmd {
	m.disk.signalled = true
	if m.sess.Dirty() {
		return m.quit(quitKeep)
	}
	return m.quit(quitClean)
}

// onKeepFailed stays in the workbench after the autosave of a quit that was to keep the
// unsaved work failed: it says why and asks again, with a way to save it and a ctrl+c that
// quits anyway (the way out that always works), now saying that the work is lost.
func (m *Model) onKeepFailed(msg keepFailedMsg) {
	m.quitting = false
	m.disk.lastErr = oneLine(msg.err)
	m.setStatus(levelError, m.disk.lastErr)
	where := "to " + m.sess.Path
	if m.sess.Path == "" {
		where = "(it asks where)"
	}
	body := fmt.Sprintf("the unsaved work could not be kept for recovery: %s\n%s", m.disk.lastErr, m.unsavedWork())
	if msg.cancelled > 0 {
		body += fmt.Sprintf("\n%d running job(s) were cancelled: staying does not resume them", msg.cancelled)
	}
	body += fmt.Sprintf("\n\ns saves the session %s and quits · ctrl+c quits anyway, losing them · n or esc stays", where)
	stay := func(m *Model) {
		m.setStatus(levelInfo, "not quitting: ctrl+s saves the session (:save-session PATH elsewhere)")
	}
	m.openDialog(&confirm{title: "quit ssmlab and lose the unsaved work?", body: body, cancel: stay,
		choices: []choice{
			{keys: []string{"s", "S"}, run: func(m *Model) tea.Cmd { return m.saveSession("", false, afterSave{quit: true}) }},
			{keys: []string{"ctrl+c"}, run: func(m *Model) tea.Cmd { return m.quit(quitLose) }},
			{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd { stay(m); return nil }},
		}})
}

// keepUnsaved autosaves the unsaved work now, unless the user discarded it, and reports
// whether there is work kept for recovery: for after the program ended other than through
// quit (a second signal, an error), or through quit(quitKeep), whose write it completes or
// finds up to date. It blocks: Main calls it once the event loop is over.
func (m *Model) keepUnsaved() (bool, error) {
	if m.disk.interval < 0 || m.disk.discarded || !m.sess.Dirty() {
		return false, nil
	}
	if _, err := m.snapshot().Autosave(m.disk.dir); err != nil {
		return false, err
	}
	return true, nil
}

// open reads a file: a session to open in this one's place, or items to add to it.
func (m *Model) open(path string) tea.Cmd {
	m.setStatus(levelInfo, "opening "+path+"…")
	return openFile(m.deps.Store, expandHome(path))
}

func (m *Model) onOpen(msg openMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		m.setError(msg.err)
	case msg.opened.Session != nil:
		return m.openSession(msg.path, msg.opened.Session)
	case len(msg.opened.Layers) > 0:
		m.openDialog(&layerPicker{path: msg.path, layers: msg.opened.Layers})
		m.setStatus(levelInfo, fmt.Sprintf("%s holds %d layers: pick one", msg.path, len(msg.opened.Layers)))
	default:
		m.onImport(msg.path, msg.opened.Items)
	}
	return nil
}

// openSession opens s in this session's place, asking first what to do with unsaved changes.
func (m *Model) openSession(path string, s *sessions.Session) tea.Cmd {
	if !m.sess.Dirty() {
		return m.install(s, path)
	}
	body := "this session has unsaved changes.\n\ns saves them first · d discards them (it asks first) · esc stays in this session"
	if n := m.running(); n > 0 {
		body += fmt.Sprintf("\n%d running job(s) will be cancelled", n)
	}
	q := &confirm{title: "open " + path + "?", body: body,
		cancel: func(m *Model) { m.setStatus(levelInfo, "not opened: "+path) }}
	q.choices = []choice{
		{keys: []string{"s", "S"}, run: func(m *Model) tea.Cmd { return m.saveSession("", false, afterSave{open: s, openPath: path}) }},
		{keys: []string{"d", "D"}, run: func(m *Model) tea.Cmd {
			m.askDiscardSession(q, "opens "+path, func(m *Model) tea.Cmd {
				old := m.sess
				return tea.Batch(m.install(s, path), func() tea.Msg { old.RemoveAutosave(); return nil })
			})
			return nil
		}},
	}
	m.openDialog(q)
	return nil
}

// install makes s the workbench's session, shown as it was saved.
func (m *Model) install(s *sessions.Session, path string) tea.Cmd {
	m.cancelJobs()
	m.sess, m.cache = s, map[string]*item{}
	m.epoch += epochStep
	m.commit.id = ""
	m.disk.gen = 0
	m.readJobs()
	m.restoreUI(s.UI)
	m.setStatus(levelOK, fmt.Sprintf("opened %s (%s)", path, s.Summary()))
	return m.askOutside()
}

// askOutside asks whether to read the linked targets of the session whose files lie outside
// its directory: a session file from elsewhere could otherwise make ssmlab read any file.
func (m *Model) askOutside() tea.Cmd {
	var ids, lines []string
	for _, t := range m.sess.Targets {
		var oe *sessions.OutsideError
		if errors.As(t.Err, &oe) {
			ids = append(ids, t.ID)
			lines = append(lines, fmt.Sprintf("  %s: %s → %s", t.Name, oe.Path, oe.File))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	dir := filepath.Dir(m.sess.Path)
	body := fmt.Sprintf("the session links %d target(s) to files outside its directory %s:\n%s\n\n"+
		"a session from elsewhere could make ssmlab read any file you can.\n\ny reads them · n or esc leaves them unread",
		len(ids), dir, strings.Join(lines, "\n"))
	s := m.sess
	m.openDialog(&confirm{title: "read files outside the session's directory?", body: body,
		cancel: func(m *Model) { m.setStatus(levelWarn, fmt.Sprintf("%d linked target(s) left unread", len(ids))) },
		choices: []choice{
			{keys: []string{"y", "Y"}, run: func(m *Model) tea.Cmd { return readOutside(s, s.Clone(), ids) }},
			{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd {
				m.setStatus(levelWarn, fmt.Sprintf("%d linked target(s) left unread", len(ids)))
				return nil
			}},
		}})
	return nil
}

// outsideReadMsg carries the linked targets read once allowed.
type outsideReadMsg struct {
	s       *sessions.Session // the session they belong to
	targets []sessions.Target
}

// readOutside reads the linked targets ids of s, on its clone c.
func readOutside(s, c *sessions.Session, ids []string) tea.Cmd {
	return func() tea.Msg {
		msg := outsideReadMsg{s: s}
		_ = safely("read", func() error {
			for _, id := range ids {
				_ = c.ReadOutside(id) // a failure stays in the target's Err
				if t, ok := c.Target(id); ok {
					msg.targets = append(msg.targets, t)
				}
			}
			return nil
		})
		return msg
	}
}

// onOutsideRead puts the kernels read into the session's linked targets: reading them
// changes nothing the session saves (a linked target keeps only its source).
func (m *Model) onOutsideRead(msg outsideReadMsg) {
	n := 0
	for _, t := range msg.targets {
		if k, i := m.sess.Lookup(t.ID); k == sessions.KindTarget && m.sess.Targets[i].Linked {
			m.sess.Targets[i].Kernels, m.sess.Targets[i].Err = t.Kernels, t.Err
			if t.Err == nil {
				n++
			} else {
				m.setError(t.Err)
			}
		}
	}
	if n > 0 {
		m.setStatus(levelOK, fmt.Sprintf("read %d linked target(s) from outside the session's directory", n))
	}
}

// askSave asks where to save the selected filter as a filter file: its own file, or else a
// name after it that does not exist yet (freePath, as the session's prompt), so that enter
// never asks to overwrite another.
func (m *Model) askSave() error {
	e := m.selected()
	if e == nil {
		return errNoSelection
	}
	path := e.origin.File
	if path == "" {
		path = freePath(defaultPath(m.dir, e.name, ".json"))
	}
	id := e.id
	m.openDialog(newPrompt("save "+e.name, "path (a filter file, JSON):", path, func(m *Model, text string) tea.Cmd {
		e := m.entry(id)
		if e == nil || text == "" {
			return nil
		}
		cmd, err := m.saveFilter(e, expandHome(text))
		m.setError(err)
		return cmd
	}))
	return nil
}

// saveFilter writes a filter or bank to a filter file: over its own file (origin.File), or
// over another that exists once asked (onSaved).
func (m *Model) saveFilter(e *entry, path string) (tea.Cmd, error) {
	if e.kind == kindKernel {
		return nil, errors.New("kernels cannot be saved as filter files: ctrl+s saves them with the session")
	}
	if err := filterFilePath(path); err != nil {
		return nil, err
	}
	m.setStatus(levelInfo, "saving "+path+"…")
	return saveItem(m.deps.Store, m.sess, e.id, path, e.stored(), samePath(path, e.origin.File)), nil
}

// filterFilePath refuses a path for a filter file (JSON) whose extension names another
// format: out.npz holding JSON is read as neither. .json, no extension and extensions of no
// format ssmlab knows are written as they were.
func filterFilePath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	var other string
	switch {
	case ext == "" || ext == ".json":
		return nil
	case ext == sessions.Extension:
		other = ":save-session PATH saves the session"
	case isExportExt(ext):
		other = ":export PATH writes " + ext + " (the extension chooses the format)"
	default:
		if _, err := figures.FormatOf(path); err != nil {
			return nil
		}
		other = ":export-plot PATH writes the plots as " + ext
	}
	return fmt.Errorf("%s: a filter file is JSON (.json), not %s; %s", path, ext, other)
}

// isExportExt reports whether ext (".npz") names a format :export writes.
func isExportExt(ext string) bool {
	_, err := sessions.ParseExportFormat(strings.TrimPrefix(ext, "."))
	return err == nil
}

// expandHome replaces a leading ~ by the home directory.
func expandHome(path string) string {
	rest, ok := strings.CutPrefix(path, "~")
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, rest)
}
