package tui

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
)

// pane names a pane of the workbench.
type pane int

const (
	paneList pane = iota
	paneRepr
	panePlots
	paneJobs
	nPanes
)

var paneNames = [nPanes]string{"filters", "representation", "plots", "jobs"}

// component is a pane of the workbench (soft-serve's Component): it owns its part of the
// view's state, the keys it handles while focused (and so its help) and its view; the root
// routes keys to it and gives it its size.
type component interface {
	// bindings are its keys, in the order its help lists them.
	bindings() []binding
	// capture takes every key while the component holds the keyboard (an edit in
	// progress); false when it does not.
	capture(msg tea.KeyMsg) (tea.Cmd, bool)
	// hint replaces the status bar's key help while it is not empty.
	hint() string
	view(focused bool) string
	setSize(w, h int)
	title() string
}

// Limits of the impulse response length L and the number of frequencies of the plots.
const (
	minLength     = 8
	maxLength     = 1 << 16
	defaultLength = 1024
	freqPoints    = 512
)

// Options configure a workbench.
type Options struct {
	// File is opened at start: a session, or a filter file or kernels for a new session.
	File string
	// Deps are the services used; nil fields take DefaultDeps.
	Deps Deps
	// ProgressInterval throttles job progress messages (default 100 ms; tests use 0).
	ProgressInterval time.Duration
	// Length is the initial impulse response length L (default 1024).
	Length int
	// Dir is where new files go (default: the working directory).
	Dir string
	// AutosaveDir is where unsaved work is autosaved (default sessions.AutosaveDir()).
	AutosaveDir string
	// AutosaveInterval is the longest a change waits before it is autosaved (default 1 s);
	// negative turns autosave, and the offer to recover at start, off.
	AutosaveInterval time.Duration
}

// Model is the workbench: the root Bubble Tea model. It holds the shared state (app: the
// session and what was computed from it) and the components — the four panes and the open
// dialog — routes messages to them, and alone handles window sizes.
type Model struct {
	*app
	list     *listPane
	repr     *reprPane
	plots    *plotsPane
	jobsPane *jobsPane
	panes    [nPanes]component
	focus    pane
	main     pane // the pane shown in the main area when only one of repr and plots fits
	dialog   dialog
	help     help.Model

	width, height int
	lay           layout

	file      string // opened at start
	disk      diskState
	exitNotes []string
	quitting  bool
}

// New returns a workbench on a new, untitled session.
func New(opts Options) *Model {
	a := &app{st: newStyles(), keys: newKeyMap(), deps: opts.Deps.withDefaults(), sess: sessions.New(),
		cache: map[string]*item{}, overlayOn: true, length: opts.Length, dir: opts.Dir, progress: opts.ProgressInterval}
	if a.length == 0 {
		a.length = defaultLength
	}
	if opts.ProgressInterval == 0 && opts.Deps.Runner == nil {
		a.progress = 100 * time.Millisecond
	}
	a.progress = max(a.progress, 0)
	if a.dir == "" {
		a.dir = "."
	}
	m := &Model{app: a, main: panePlots, help: help.New(), file: opts.File}
	m.list, m.repr, m.plots, m.jobsPane = &listPane{m: m}, newRepr(m), newPlots(m), newJobs(m)
	m.panes = [nPanes]component{m.list, m.repr, m.plots, m.jobsPane}
	m.disk = diskState{dir: opts.AutosaveDir, interval: opts.AutosaveInterval}
	if m.disk.interval == 0 {
		m.disk.interval = time.Second
	}
	m.help.ShowAll = false
	m.status = statusMsg{text: "welcome to ssmlab: a adds a preset, o opens a file, : runs any command, ? lists the keys"}
	return m
}

// Init opens the file given on the command line and looks for unsaved work of earlier runs.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.file != "" {
		cmds = append(cmds, openFile(m.deps.Store, expandHome(m.file)))
	}
	return tea.Batch(append(cmds, m.listAutosaves(false))...)
}

// ExitNotes are lines for the terminal after the workbench closes (the session saved on
// quit).
func (m *Model) ExitNotes() []string { return m.exitNotes }

// Update handles one message. It never blocks: everything slow is returned as a command.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		if keys := splitBurst(msg); keys != nil {
			return m, m.burst(keys)
		}
		cmd = m.handleKey(msg)
	case signalMsg:
		cmd = m.endBySignal()
	default:
		cmd = m.route(msg)
	}
	if m.quitting {
		return m, cmd
	}
	if m.ask != nil && m.dialog == nil {
		m.openDialog(m.ask)
		m.ask = nil
	}
	m.sync()
	cmds := []tea.Cmd{cmd, m.refresh(m.repr.tab), m.scheduleAutosave()}
	m.relayout()
	return m, tea.Batch(cmds...)
}

// splitBurst returns the keys a burst holds: keys typed faster than the terminal is read
// arrive as one message with several runes (tmux's send-keys j j j as "jjj"). A paste stays
// whole: it is text for an input, not commands. nil when msg is one key.
func splitBurst(msg tea.KeyMsg) []tea.KeyMsg {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste {
		return nil
	}
	out := make([]tea.KeyMsg, len(msg.Runes))
	for i, r := range msg.Runes {
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}
	}
	return out
}

// burst handles each key of a burst as if it came alone, stopping at a quit, and at a
// question: the rest of the burst was typed before it could be seen, and answers nothing
// (question).
func (m *Model) burst(keys []tea.KeyMsg) tea.Cmd {
	var cmds []tea.Cmd
	for i, k := range keys {
		if _, ok := m.dialog.(question); ok {
			m.setStatus(levelWarn, fmt.Sprintf("%d key(s) typed ahead were ignored: they do not answer a question asked after them", len(keys)-i))
			break
		}
		_, cmd := m.Update(k)
		cmds = append(cmds, cmd)
		if m.quitting {
			break
		}
	}
	return tea.Batch(cmds...)
}

// route hands a result to what it belongs to.
func (m *Model) route(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case respMsg:
		m.onResp(msg)
	case pzMsg:
		m.onPZ(msg)
	case viewMsg:
		m.onView(msg)
	case bankConvertMsg:
		m.onBankConvert(msg)
		m.plots.conversionDone(msg.id)
	case bankRhoMsg:
		m.onBankRho(msg)
	case presetMsg:
		m.onPreset(msg)
		if msg.err != nil && msg.asked != nil && m.dialog == nil {
			m.askPresetParams(*msg.asked, msg.text)
		}
	case openMsg:
		return m.onOpen(msg)
	case savedMsg:
		m.onSaved(msg)
	case exportedMsg:
		m.onExported(msg)
	case plotExportedMsg:
		m.onPlotExported(msg)
	case jobProgressMsg:
		return m.onJobProgress(msg)
	case jobDoneMsg:
		m.onJobDone(msg)
	case suggestMsg:
		if f, ok := m.dialog.(*jobForm); ok {
			f.onSuggest(msg)
		}
	case statusMsg:
		m.setStatus(msg.level, msg.text)
	default:
		return m.routeDisk(msg)
	}
	return nil
}

func (m *Model) onPlotExported(msg plotExportedMsg) {
	if msg.err != nil {
		m.setError(msg.err)
	} else {
		m.setStatus(levelOK, "exported the plots to "+msg.path)
	}
}

// handleKey gives a key to the open dialog, else to a pane that holds the keyboard, else to
// the global keys, else to the focused pane.
func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	if m.dialog != nil {
		if h, ok := m.dialog.(ctrlCHandler); msg.String() == "ctrl+c" && !(ok && h.handlesCtrlC()) {
			m.closeDialog()
			return m.askQuit()
		}
		return m.dialog.update(m, msg)
	}
	p := m.panes[m.focus]
	if cmd, ok := p.capture(msg); ok {
		return cmd
	}
	if cmd, ok := dispatch(m.globalBindings(), msg); ok {
		return cmd
	}
	cmd, ok := dispatch(p.bindings(), msg)
	if !ok {
		m.sayWhereKeyWorks(msg)
	}
	return cmd
}

// sayWhereKeyWorks says which panes a key the focused pane does not handle works in (a in
// the representation did nothing, without a word, while it adds a preset in the list).
func (m *Model) sayWhereKeyWorks(msg tea.KeyMsg) {
	var where []string
	for q := range nPanes {
		if q == m.focus {
			continue
		}
		for _, b := range m.panes[q].bindings() {
			if !b.hidden && key.Matches(msg, b.key) {
				where = append(where, fmt.Sprintf("%s in the %s pane", b.key.Help().Desc, paneNames[q]))
				break
			}
		}
	}
	if len(where) > 0 {
		m.setStatus(levelInfo, fmt.Sprintf("%s: %s (tab moves the focus)", msg.String(), strings.Join(where, ", ")))
	}
}

// globalBindings are the keys that work in every pane.
func (m *Model) globalBindings() []binding {
	k := m.keys
	open := func(d func() dialog) func(tea.KeyMsg) tea.Cmd {
		return func(tea.KeyMsg) tea.Cmd { m.openDialog(d()); return nil }
	}
	return []binding{
		{key: k.NextPane, run: func(tea.KeyMsg) tea.Cmd { m.setFocus((m.focus + 1) % nPanes); return nil }, short: true},
		{key: k.PrevPane, run: func(tea.KeyMsg) tea.Cmd { m.setFocus((m.focus + nPanes - 1) % nPanes); return nil }, hidden: true},
		{key: k.Palette, run: open(func() dialog { return newPalette() }), short: true},
		{key: k.Help, run: open(func() dialog { return &helpDialog{} }), short: true},
		{key: k.Messages, run: open(func() dialog { return &messagesDialog{} })},
		{key: k.Distill, run: func(tea.KeyMsg) tea.Cmd {
			cmd, err := m.openJobForm()
			m.setError(err)
			return cmd
		}},
		{key: k.Undo, run: func(tea.KeyMsg) tea.Cmd { m.setError(m.undoEdit()); return nil }},
		{key: k.SaveSession, run: func(tea.KeyMsg) tea.Cmd { return m.saveSession("", false, afterSave{}) }},
		{key: k.Quit, run: func(tea.KeyMsg) tea.Cmd { return m.askQuit() }, short: true},
	}
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	if p == paneRepr || p == panePlots {
		m.main = p
	}
}

func (m *Model) openDialog(d dialog) { m.dialog = d }
func (m *Model) closeDialog()        { m.dialog = nil }

// sync lets the components follow the session after a message, and records the UI's state
// in the session (it is saved and autosaved with it).
func (m *Model) sync() {
	if m.entry(m.sel) == nil {
		m.sel = ""
		m.selectIndex(0)
	}
	if m.entry(m.overlay) == nil {
		m.overlay = ""
	}
	m.repr.sync()
	m.plots.sync()
	m.jobsPane.sync()
	if m.sess.SetUI(m.uiState()) {
		m.disk.uiChanged = true
	}
}

// convertTo converts the selected filter to form, showing that form while it converts.
func (m *Model) convertTo(to filters.Form) (tea.Cmd, error) {
	cmd, err := m.convert(to)
	if err == nil && m.commit.id != "" {
		m.repr.tab = to
	}
	return cmd, err
}

// undoEdit undoes the selected filter's last edit.
func (m *Model) undoEdit() error {
	left, err := m.undo()
	if err == nil {
		m.setStatus(levelInfo, fmt.Sprintf("undone (%d more)", left))
	}
	return err
}

// uiExtra is the UI state the session's UIState has no field for, kept in its Extra.
type uiExtra struct {
	Focus     string         `json:"focus"`
	Length    int            `json:"length"`
	Log       bool           `json:"log"`
	OverlayOn bool           `json:"overlay_on"`
	Offset    int            `json:"plot_offset"`
	Pole      int            `json:"pole"`
	Step      int            `json:"step"`
	Cursor    [2]int         `json:"cursor"`
	Channels  map[string]int `json:"channels,omitempty"`
	Job       int            `json:"job"`
	// Reports are the reports of the conversions that made the items' filters, as the
	// representation shows them.
	Reports map[string]filters.Report `json:"reports,omitempty"`
}

// uiState is what the session keeps of the view: the selection, the form tab, the plots
// shown, the overlay, the focus, the plots' settings, the cursor, the channels shown.
func (m *Model) uiState() sessions.UIState {
	ui := sessions.UIState{Selected: m.sel, FormTab: string(m.repr.tab), Overlay: m.overlay}
	for k, on := range m.plots.enabled {
		if on {
			ui.Plots = append(ui.Plots, figureKinds[k])
		}
	}
	x := uiExtra{Focus: paneNames[m.focus], Length: m.length, Log: m.plots.logImpulse, OverlayOn: m.overlayOn,
		Offset: m.plots.offset, Pole: m.plots.poleSel, Step: m.plots.step, Cursor: [2]int{m.repr.row, m.repr.col}, Job: m.jobsPane.sel}
	for id, it := range m.cache {
		if it.ch != 0 {
			if x.Channels == nil {
				x.Channels = map[string]int{}
			}
			x.Channels[id] = it.ch
		}
		if e := m.entry(id); e != nil && e.lastReport() != nil {
			if x.Reports == nil {
				x.Reports = map[string]filters.Report{}
			}
			x.Reports[id] = finiteReport(*e.lastReport())
		}
	}
	raw, _ := json.Marshal(x) // plain values: cannot fail
	ui.Extra = map[string]json.RawMessage{}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	for k, v := range fields {
		ui.Extra[k] = v
	}
	return ui
}

// restoreUI shows the session as its UI state says it was shown. A session the workbench
// never showed (made by ssmlab import) keeps the defaults but its selection.
func (m *Model) restoreUI(ui sessions.UIState) {
	m.sel, m.overlay = ui.Selected, ui.Overlay
	_, ours := ui.Extra["focus"]
	if ours {
		for k := range m.plots.enabled {
			m.plots.enabled[k] = false
		}
		for _, name := range ui.Plots {
			if k, ok := plotNamed(name); ok {
				m.plots.enabled[k] = true
			}
		}
	}
	var x uiExtra
	if raw, err := json.Marshal(ui.Extra); err == nil {
		_ = json.Unmarshal(raw, &x) // what cannot be read keeps its default
	}
	for p, name := range paneNames {
		if name == x.Focus {
			m.setFocus(pane(p))
		}
	}
	if x.Length >= minLength && x.Length <= maxLength {
		m.length = x.Length
	}
	if _, ok := ui.Extra["overlay_on"]; ok {
		m.overlayOn = x.OverlayOn
	}
	m.plots.logImpulse, m.plots.offset = x.Log, max(0, x.Offset)
	m.plots.step = min(max(x.Step, 0), len(stepLevels)-1)
	for id, ch := range x.Channels {
		if e := m.entry(id); e != nil && ch >= 0 && ch < e.channels() {
			e.ch = ch
		}
	}
	for id, rep := range x.Reports {
		if e := m.entry(id); e != nil {
			e.report, e.reportRev = &rep, e.rev
		}
	}
	// what the panes follow is now as restored, so that sync keeps it
	if m.entry(m.sel) == nil {
		m.sel = ""
		m.selectIndex(0)
	}
	m.repr.sync()
	m.plots.sync()
	m.jobsPane.sync()
	m.jobsPane.sel = min(max(x.Job, 0), max(0, len(m.jobs)-1))
	m.plots.poleSel = max(0, x.Pole)
	if f, err := filters.ParseForm(ui.FormTab); err == nil && ui.FormTab != "" {
		m.repr.tab = f
	}
	m.repr.row, m.repr.col = max(0, x.Cursor[0]), max(1, x.Cursor[1])
}

// finiteReport is r with numbers JSON can hold: an overflow (or NaN) is kept as the largest
// float64, which the accuracy check reads as an overflow, so the list's ≈ survives a save.
func finiteReport(r filters.Report) filters.Report {
	for _, v := range []*float64{&r.Condition, &r.RelError} {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = math.MaxFloat64
		}
	}
	return r
}
