package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ssmlab/ssmlab/sessions"
)

// Autosave: a change waits at most diskState.interval (1 s) before a snapshot of the session,
// with the UI's state, is written to its autosave file (sessions.Session.Autosave: private,
// in the user's state directory, held by this process while it runs). At start, the
// autosaves of programs that ended without saving are offered for recovery; recovering one
// shows its session as it was on screen.

// diskState is the workbench's traffic with its session and autosave files.
type diskState struct {
	dir      string        // the autosave directory ("": sessions.AutosaveDir())
	interval time.Duration // how long a change waits to be autosaved; < 0: no autosave
	busy     bool          // a save or an autosave is in flight
	queued   *saveReq      // a save asked for while busy
	// quitWhenIdle is a quit asked for while busy.
	quitWhenIdle quitHow
	// quitCancelled counts the jobs that quit cancelled then (keepFailedMsg).
	quitCancelled int
	tick          bool   // an autosave is due when the tick comes
	due           bool   // the tick came while a write was in flight: autosave when it ends
	gen           uint64 // the session's generation when the last tick was set
	uiChanged     bool   // the UI's state changed since
	lastErr       string // the last autosave error shown (not repeated)
	// discarded is set once the user discarded the unsaved work to quit: it is not kept
	// for recovery, whatever ends the program then.
	discarded bool
	// signalled is set once a signal ends the program: its quit ends it even when the
	// autosave fails (Main then says the work could not be kept).
	signalled bool
}

type autosaveTickMsg struct{}

// autosavedMsg reports an autosave: the file written ("" when there was nothing new).
type autosavedMsg struct {
	path string
	err  error
}

// autosavesMsg lists the autosaves found; asked is set for :recover.
type autosavesMsg struct {
	list  []sessions.AutosaveInfo
	asked bool
	err   error
}

// recoveredMsg is an autosave read back.
type recoveredMsg struct {
	info sessions.AutosaveInfo
	s    *sessions.Session
	err  error
}

// routeDisk handles the messages of saving, autosaving and recovering.
func (m *Model) routeDisk(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case sessionSavedMsg:
		return m.onSessionSaved(msg)
	case autosaveTickMsg:
		return m.onAutosaveTick()
	case autosavedMsg:
		m.onAutosaved(msg)
		return m.idle()
	case autosavesMsg:
		m.onAutosaves(msg)
	case recoveredMsg:
		return m.onRecovered(msg)
	case keepFailedMsg:
		m.onKeepFailed(msg)
	case outsideReadMsg:
		if msg.s == m.sess {
			m.onOutsideRead(msg)
		}
	}
	return nil
}

// scheduleAutosave sets the autosave tick after a change (of the session, or of its view
// while it has unsaved changes).
func (m *Model) scheduleAutosave() tea.Cmd {
	d := &m.disk
	if d.interval < 0 || d.tick || !m.sess.Dirty() || (m.sess.Generation() == d.gen && !d.uiChanged) {
		return nil
	}
	d.tick, d.gen, d.uiChanged = true, m.sess.Generation(), false
	return tea.Tick(d.interval, func(time.Time) tea.Msg { return autosaveTickMsg{} })
}

func (m *Model) onAutosaveTick() tea.Cmd {
	d := &m.disk
	d.tick = false
	if d.busy {
		// a write is in flight: autosave as soon as it ends, not a whole interval later,
		// so a change is on disk within twice the interval however slow the write
		d.due = true
		return nil
	}
	d.due = false
	if !m.sess.Dirty() {
		return nil
	}
	d.busy = true
	s, dir := m.snapshot(), d.dir
	return func() tea.Msg {
		var msg autosavedMsg
		msg.err = safely("autosave", func() error {
			var err error
			msg.path, err = s.Autosave(dir)
			return err
		})
		return msg
	}
}

func (m *Model) onAutosaved(msg autosavedMsg) {
	m.disk.busy = false
	if msg.err == nil {
		m.disk.lastErr = ""
		return
	}
	// say it once: unsaved work is not safe until it is saved
	if text := oneLine(msg.err); text != m.disk.lastErr {
		m.disk.lastErr = text
		m.setStatus(levelError, text+" (ctrl+s saves the session)")
	}
}

// listAutosaves looks for the unsaved work of programs that ended without saving it; asked
// (by :recover) says so when there is none.
func (m *Model) listAutosaves(asked bool) tea.Cmd {
	if m.disk.interval < 0 {
		return nil
	}
	dir := m.disk.dir
	return func() tea.Msg {
		var msg autosavesMsg
		msg.asked = asked
		msg.err = safely("recover", func() error {
			var err error
			msg.list, err = sessions.ListAutosaves(dir)
			return err
		})
		return msg
	}
}

func (m *Model) onAutosaves(msg autosavesMsg) {
	switch {
	case msg.err != nil:
		m.setError(msg.err)
	case len(msg.list) > 0:
		m.openDialog(&recoverDialog{list: msg.list})
	case msg.asked:
		m.setStatus(levelInfo, "no unsaved work of an earlier run to recover")
	}
}

// recoverDialog offers the autosaves found: recover one, discard one, or keep them for later.
type recoverDialog struct {
	list []sessions.AutosaveInfo
	sel  int
}

func (d *recoverDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "up", "k":
		d.sel = max(0, d.sel-1)
	case "down", "j":
		d.sel = min(len(d.list)-1, d.sel+1)
	case "enter", "r", "R":
		return d.recover(m)
	case "d", "D":
		d.askDiscard(m)
	case "esc", "q":
		m.closeDialog()
		m.setStatus(levelInfo, "the unsaved work is kept: :recover offers it again")
	}
	return nil
}

// recover reads the chosen autosave; it replaces the session, which must have nothing
// unsaved.
func (d *recoverDialog) recover(m *Model) tea.Cmd {
	a := d.list[d.sel]
	if a.Err != nil {
		m.setStatus(levelError, "this file cannot be recovered: "+oneLine(a.Err))
		return nil
	}
	if m.sess.Dirty() {
		m.setStatus(levelError, "this session has unsaved changes: save (ctrl+s) or discard them before recovering another")
		return nil
	}
	m.closeDialog()
	m.setStatus(levelInfo, "recovering "+a.Path+"…")
	return func() tea.Msg {
		msg := recoveredMsg{info: a}
		msg.err = safely("recover", func() error {
			var err error
			msg.s, err = sessions.RecoverAutosave(a.Path)
			return err
		})
		return msg
	}
}

// askDiscard asks before discarding the chosen autosave, saying what would be lost:
// discarding deletes the file, which one stray d must not do. n or esc goes back to the list.
func (d *recoverDialog) askDiscard(m *Model) {
	a := d.list[d.sel]
	var body string
	if a.Err != nil {
		body = fmt.Sprintf("discard %s? it cannot be read as a session (%s); discarding deletes the file.", a.Path, oneLine(a.Err))
	} else {
		body = fmt.Sprintf("discard the unsaved work of %s?\nautosaved %s", originName(a), autosavedAt(a))
		if names := namesUnsaved(a.Changed, a.Deleted); len(names) > 0 {
			body += " · " + countUnsaved(names)
		}
		body += "\nthe session: " + a.Summary + "; discarded, it cannot be recovered."
	}
	m.askDiscard(d, body+"\n\ny discards it for good · n or esc keeps it",
		"kept the unsaved work of "+originName(a), func(m *Model) tea.Cmd { return d.discard(m, a) })
}

// discard removes autosave a for good, in a command; the dialog, open again while others
// remain, lists it no more.
func (d *recoverDialog) discard(m *Model, a sessions.AutosaveInfo) tea.Cmd {
	d.list = slices.DeleteFunc(d.list, func(b sessions.AutosaveInfo) bool { return b.Path == a.Path })
	d.sel = max(0, min(d.sel, len(d.list)-1))
	if len(d.list) > 0 {
		m.openDialog(d)
	}
	return func() tea.Msg {
		if err := sessions.DiscardAutosave(a.Path); err != nil {
			return statusMsg{level: levelError, text: oneLine(err)}
		}
		return statusMsg{level: levelInfo, text: "discarded the unsaved work of " + originName(a)}
	}
}

func (d *recoverDialog) hint() string {
	return "↑↓ choose · enter recovers · d discards it for good · esc keeps it for later"
}

func (d *recoverDialog) view(m *Model, W, H int) string {
	st := m.st
	w := min(W-2, 90)
	intro := []string{wrap("ssmlab ended without saving this work; it was autosaved:", w-4), ""}
	items := make([][]string, len(d.list))
	for i, a := range d.list {
		mark := st.cursorMark(i == d.sel, true)
		if a.Err != nil {
			items[i] = []string{mark + a.Path + " · " + st.err.Render("cannot be recovered: "+oneLine(a.Err))}
		} else {
			// wrapped under the mark, at most 3 lines: cut at the box's width, the summary and
			// the items unsaved went (at 80 and 120 columns "4 filters, 2 t…")
			text := fmt.Sprintf("%s · autosaved %s · %s", originName(a), autosavedAt(a), a.Summary)
			if names := namesUnsaved(a.Changed, a.Deleted); len(names) > 0 {
				text += " · " + countUnsaved(names)
			}
			for j, l := range wrapLines(lipgloss.NewStyle(), text, w-4-lipgloss.Width(mark), 3) {
				if j == 0 {
					items[i] = append(items[i], mark+l)
				} else {
					items[i] = append(items[i], strings.Repeat(" ", lipgloss.Width(mark))+l)
				}
			}
		}
		if a.OriginChanged != nil {
			// wrapped: the file's name and the time it changed are the point of the line
			for _, l := range strings.Split(wrap("⚠ "+oneLine(a.OriginChanged)+" (ctrl+s asks first)", w-6), "\n") {
				items[i] = append(items[i], "  "+st.warn.Render(l))
			}
		}
	}
	// Border, title and blank line take 4 rows; the rest is the list's, so that a long list
	// of autosaves scrolls with the cursor instead of pushing the keys off the screen.
	rows := max(3, H-4-lipgloss.Height(strings.Join(intro, "\n")))
	lines := append(intro, windowItems(items, d.sel, rows)...)
	return modalBox(st, "recover unsaved work?", strings.Join(lines, "\n"), w)
}

// windowItems lays out items (each one or more lines) in at most rows lines, keeping item
// sel in view and saying how many are above or below.
func windowItems(items [][]string, sel, rows int) []string {
	total := 0
	for _, it := range items {
		total += len(it)
	}
	if total <= rows {
		var out []string
		for _, it := range items {
			out = append(out, it...)
		}
		return out
	}
	room := rows - 2 // a line for "… N above" and one for "… N below"
	lo, hi, used := sel, sel+1, len(items[sel])
	for {
		grew := false
		if hi < len(items) && used+len(items[hi]) <= room {
			used += len(items[hi])
			hi++
			grew = true
		}
		if lo > 0 && used+len(items[lo-1]) <= room {
			lo--
			used += len(items[lo])
			grew = true
		}
		if !grew {
			break
		}
	}
	var out []string
	if lo > 0 {
		out = append(out, fmt.Sprintf("  … %d more above", lo))
	}
	for _, it := range items[lo:hi] {
		out = append(out, it...)
	}
	if hi < len(items) {
		out = append(out, fmt.Sprintf("  … %d more below", len(items)-hi))
	}
	return out
}

// autosavedAt is when a was written, as the offer to recover shows it.
func autosavedAt(a sessions.AutosaveInfo) string {
	return a.Saved.Local().Format("2006-01-02 15:04:05")
}

// originName names an autosave's session: its file, or "an untitled session".
func originName(a sessions.AutosaveInfo) string {
	if a.Origin == "" {
		return "an untitled session"
	}
	return a.Origin
}

// onRecovered shows the recovered session as it was on screen.
func (m *Model) onRecovered(msg recoveredMsg) tea.Cmd {
	if msg.err != nil {
		m.setError(msg.err)
		return nil
	}
	cmd := m.install(msg.s, originName(msg.info))
	where := "ctrl+s saves it"
	if msg.s.Path != "" {
		where += " to " + msg.s.Path
	}
	m.setStatus(levelOK, fmt.Sprintf("recovered %s (%s) as autosaved at %s: %s", originName(msg.info), msg.s.Summary(), msg.info.Saved.Local().Format("15:04:05"), where))
	return cmd
}
