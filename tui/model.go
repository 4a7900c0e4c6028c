package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/train"
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

// common is what every child model shares: styles and keys (soft-serve's Common).
type common struct {
	st   *styles
	keys *keyMap
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
	// File is opened at start (a filter file; a session file once sessions land).
	File string
	// Deps are the services used; nil fields take DefaultDeps.
	Deps Deps
	// ProgressInterval throttles job progress messages (default 100 ms; tests use 0).
	ProgressInterval time.Duration
	// Length is the initial impulse response length L (default 1024).
	Length int
	// Dir is where unsaved filters go on "save and quit" (default: the working directory).
	Dir string
}

// Model is the workbench: the root Bubble Tea model. It owns the session and the child
// models, handles window sizes and routes keys to the focused pane or the open dialog.
type Model struct {
	c     *common
	deps  Deps
	sess  session
	focus pane
	main  pane // the pane shown in the main area when only one of repr and plots fits

	list  listModel
	repr  reprModel
	plots plotsModel
	jobs  jobsModel
	help  help.Model
	modal modalState

	width, height int
	lay           layout

	status    statusMsg
	messages  []statusMsg // the last maxMessages results, warnings and errors, oldest first
	length    int
	overlayID int

	// a conversion to commit when it arrives ("convert", "c", pole editing in a form that
	// does not hold its poles)
	commitID  int
	commitKey viewKey

	progressDelay time.Duration
	dir           string
	file          string
	savesForQuit  int
	exitNotes     []string
	quitting      bool
}

// New returns a workbench.
func New(opts Options) *Model {
	c := &common{st: newStyles(), keys: newKeyMap()}
	m := &Model{
		c:             c,
		deps:          opts.Deps.withDefaults(),
		main:          panePlots,
		list:          newList(c),
		repr:          newRepr(c),
		plots:         newPlots(c),
		jobs:          newJobs(c),
		help:          help.New(),
		length:        opts.Length,
		progressDelay: opts.ProgressInterval,
		dir:           opts.Dir,
		file:          opts.File,
	}
	if m.length == 0 {
		m.length = defaultLength
	}
	if opts.ProgressInterval == 0 && opts.Deps.Runner == nil {
		m.progressDelay = 100 * time.Millisecond
	}
	if m.progressDelay < 0 {
		m.progressDelay = 0
	}
	if m.dir == "" {
		m.dir = "."
	}
	m.help.ShowAll = false
	m.status = statusMsg{text: "welcome to ssmlab: a adds a preset, o opens a file, : runs any command, ? lists the keys"}
	return m
}

// Init opens the file given on the command line.
func (m *Model) Init() tea.Cmd {
	if m.file != "" {
		return openFile(m.deps.Store, m.file)
	}
	return nil
}

// ExitNotes are lines for the terminal after the workbench closes (files saved on quit).
func (m *Model) ExitNotes() []string { return m.exitNotes }

var errNoSelection = errors.New("no filter selected: add one with a")

// maxMessages bounds the message log (M): it keeps what the status line reported.
const maxMessages = 100

// setStatus shows text on the status line. Results, warnings and errors also go to the
// message log, where a line cut to the terminal's width can be read whole; the info lines
// (L, the selected pole) are transient and are not kept.
func (m *Model) setStatus(l level, text string) {
	m.status = statusMsg{text: text, level: l}
	if l == levelInfo {
		return
	}
	if len(m.messages) == maxMessages {
		m.messages = append(m.messages[:0], m.messages[1:]...)
	}
	m.messages = append(m.messages, m.status)
}

func (m *Model) setError(err error) {
	if err != nil {
		m.setStatus(levelError, oneLine(err))
	}
}

// Update handles one message. It never blocks: everything slow is returned as a command.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		cmds = append(cmds, m.handleKey(msg))
	case respMsg:
		m.onResp(msg)
	case pzMsg:
		m.onPZ(msg)
	case viewMsg:
		m.onView(msg)
	case bankConvertMsg:
		m.onBankConvert(msg)
	case bankRhoMsg:
		if e := m.sess.byID(msg.id); e != nil && e.rev == msg.rev {
			e.bankRho = msg.rho
			if msg.err != nil {
				e.bankRho = math.Inf(1)
			}
			e.bankRhoRev = msg.rev
		}
	case presetMsg:
		m.onPreset(msg)
	case openMsg:
		m.onOpen(msg)
	case sessionSavedMsg:
		if msg.err != nil {
			m.setError(msg.err)
			break
		}
		for i, id := range msg.ids {
			// Entries edited since the snapshot stay unsaved.
			if e := m.sess.byID(id); e != nil && e.rev == msg.revs[i] {
				e.dirty = false
			}
		}
		m.setStatus(levelOK, fmt.Sprintf("saved the session (%d item(s)) to %s", len(msg.ids), msg.path))
	case savedMsg:
		cmds = append(cmds, m.onSaved(msg))
	case savedAllMsg:
		for _, s := range msg {
			cmds = append(cmds, m.onSaved(s))
		}
	case exportedMsg:
		m.onExported(msg)
	case plotExportedMsg:
		if msg.err != nil {
			m.setError(msg.err)
		} else {
			m.setStatus(levelOK, "exported the plots to "+msg.path)
		}
	case jobProgressMsg:
		cmds = append(cmds, m.onJobProgress(msg))
	case jobDoneMsg:
		m.onJobDone(msg)
	case suggestMsg:
		m.onSuggest(msg)
	case statusMsg:
		m.setStatus(msg.level, msg.text)
	}
	if m.quitting {
		return m, tea.Batch(cmds...)
	}
	cmds = append(cmds, m.refresh())
	m.relayout()
	return m, tea.Batch(cmds...)
}

// ---- keys

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	if m.modal.kind != modalNone {
		return m.modalKey(msg)
	}
	if m.repr.editing {
		return m.editKey(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.askQuit()
	case key.Matches(msg, k.Help):
		m.modal = modalState{kind: modalHelp}
		return nil
	case key.Matches(msg, k.Palette):
		m.modal = modalState{kind: modalPalette, input: newInput("")}
		return nil
	case key.Matches(msg, k.Messages):
		m.modal = modalState{kind: modalMessages}
		return nil
	case key.Matches(msg, k.NextPane):
		m.setFocus((m.focus + 1) % nPanes)
		return nil
	case key.Matches(msg, k.PrevPane):
		m.setFocus((m.focus + nPanes - 1) % nPanes)
		return nil
	case key.Matches(msg, k.Distill):
		cmd, err := m.openJobForm()
		m.setError(err)
		return cmd
	case key.Matches(msg, k.Undo):
		cmd, err := m.undo()
		m.setError(err)
		return cmd
	}
	switch m.focus {
	case paneList:
		return m.listKey(msg)
	case paneRepr:
		return m.reprKey(msg)
	case panePlots:
		return m.plotsKey(msg)
	case paneJobs:
		return m.jobsKey(msg)
	}
	return nil
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	if p == paneRepr || p == panePlots {
		m.main = p
	}
}

func (m *Model) listKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	e := m.sess.selected()
	switch {
	case key.Matches(msg, k.Up):
		m.selectIndex(m.sess.sel - 1)
	case key.Matches(msg, k.Down):
		m.selectIndex(m.sess.sel + 1)
	case key.Matches(msg, k.Top):
		m.selectIndex(0)
	case key.Matches(msg, k.Bottom):
		m.selectIndex(len(m.sess.entries) - 1)
	case key.Matches(msg, k.Add):
		m.openPresets()
	case key.Matches(msg, k.Open):
		m.modal = modalState{kind: modalPrompt, prompt: promptOpen, title: "open a filter file", body: "path:", input: newInput("")}
	case key.Matches(msg, k.Save):
		if e == nil {
			m.setError(errNoSelection)
			return nil
		}
		m.askSave()
	case key.Matches(msg, k.Duplicate):
		cmd, err := m.duplicate()
		m.setError(err)
		return cmd
	case key.Matches(msg, k.Rename):
		if e != nil {
			m.askRename()
		}
	case key.Matches(msg, k.Delete):
		_, err := m.askDelete()
		m.setError(err)
	case key.Matches(msg, k.Pin):
		if e == nil {
			return nil
		}
		if m.overlayID == e.id {
			m.overlayID = 0
			m.setStatus(levelInfo, "overlay cleared")
		} else {
			m.overlayID = e.id
			m.plots.overlayOn = true
			m.setStatus(levelInfo, e.name+" is pinned as the overlay: select another filter to compare")
		}
	case key.Matches(msg, k.PrevChan), key.Matches(msg, k.NextChan):
		if e == nil || e.channels() < 2 {
			return nil
		}
		d := 1
		if key.Matches(msg, k.PrevChan) {
			d = -1
		}
		e.ch = (e.ch + d + e.channels()) % e.channels()
		m.repr.reset()
		m.setStatus(levelInfo, fmt.Sprintf("%s: channel %d of %d", e.name, e.ch+1, e.channels()))
	case key.Matches(msg, k.Enter):
		m.setFocus(paneRepr)
	}
	return nil
}

func (m *Model) selectIndex(i int) {
	if len(m.sess.entries) == 0 {
		return
	}
	i = min(max(i, 0), len(m.sess.entries)-1)
	if i != m.sess.sel {
		m.sess.sel = i
		m.repr.reset()
		m.repr.tab = ""
		m.plots.poleSel = 0
	}
}

func (m *Model) selectID(id int) {
	for i, e := range m.sess.entries {
		if e.id == id {
			m.selectIndex(i)
		}
	}
}

func (m *Model) reprKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	e := m.sess.selected()
	if e == nil {
		return nil
	}
	d := m.reprData(e)
	page := max(1, m.repr.height-4)
	switch {
	case key.Matches(msg, k.Tabs):
		i := int(msg.String()[0] - '1')
		m.showTab(filters.Forms[i])
	case key.Matches(msg, k.PrevTab), key.Matches(msg, k.NextTab):
		cur := m.repr.tab
		if cur == "" {
			cur = filters.Form(e.form())
		}
		i := 0
		for j, f := range filters.Forms {
			if f == cur {
				i = j
			}
		}
		step := 1
		if key.Matches(msg, k.PrevTab) {
			step = len(filters.Forms) - 1
		}
		m.showTab(filters.Forms[(i+step)%len(filters.Forms)])
	case key.Matches(msg, k.Up):
		m.repr.move(d, -1, 0)
	case key.Matches(msg, k.Down):
		m.repr.move(d, 1, 0)
	case key.Matches(msg, k.Left):
		m.repr.move(d, 0, -1)
	case key.Matches(msg, k.Right):
		m.repr.move(d, 0, 1)
	case key.Matches(msg, k.PageUp):
		m.repr.move(d, -page, 0)
	case key.Matches(msg, k.PageDown):
		m.repr.move(d, page, 0)
	case key.Matches(msg, k.Top):
		m.repr.move(d, -totalRows(d.tables()), 0)
	case key.Matches(msg, k.Bottom):
		m.repr.move(d, totalRows(d.tables()), 0)
	case key.Matches(msg, k.Edit):
		m.startEdit(e, d)
	case key.Matches(msg, k.Commit):
		if m.repr.tab == "" || string(m.repr.tab) == e.form() {
			m.setStatus(levelInfo, "this is already the filter's form: pick another tab (1-6) to convert")
			return nil
		}
		cmd, err := m.convert(m.repr.tab)
		m.setError(err)
		return cmd
	}
	return nil
}

// showTab shows the selected filter in form f (a conversion view, computed in a command).
func (m *Model) showTab(f filters.Form) {
	e := m.sess.selected()
	if e == nil || e.kind == kindKernel {
		return
	}
	if string(f) == e.form() {
		m.repr.tab = ""
	} else {
		m.repr.tab = f
	}
	m.repr.reset()
}

func (m *Model) startEdit(e *entry, d reprData) {
	if d.shown == nil {
		m.setStatus(levelWarn, "kernels cannot be edited")
		return
	}
	if d.view != nil && (d.view.pending || d.view.err != nil) {
		m.setStatus(levelWarn, "the conversion is not available: nothing to edit")
		return
	}
	ref, label := m.repr.cursorRef(d)
	if ref == nil {
		m.setStatus(levelInfo, "this cell is a label, not a value")
		return
	}
	m.repr.editing = true
	m.repr.editRef = *ref
	m.repr.editLabel = label
	m.repr.input = newInput(editText(d.shown, *ref))
	m.repr.input.Width = max(10, m.repr.width-len(label)-10)
	hint := "enter sets the value, esc cancels"
	if ref.part == "arg" {
		hint += "; angles are in units of π"
	} else if isComplexCell(d.shown, *ref) {
		hint += "; complex values as 0.9+0.1j or 0.95@0.3 (polar, radians)"
	}
	m.setStatus(levelInfo, hint)
}

func (m *Model) editKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.repr.editing = false
		m.setStatus(levelInfo, "edit cancelled")
		return nil
	case "ctrl+c":
		m.repr.editing = false
		return m.askQuit()
	case "enter":
		m.repr.editing = false
		e := m.sess.selected()
		if e == nil {
			return nil
		}
		d := m.reprData(e)
		if d.shown == nil {
			return nil
		}
		g, err := applyEdit(d.shown, m.repr.editRef, m.repr.input.Value())
		if err != nil {
			m.setStatus(levelError, m.repr.editLabel+": "+oneLine(err))
			return nil
		}
		if err := e.setCurrent(g); err != nil {
			m.setError(err)
			return nil
		}
		m.repr.tab = ""
		m.setStatus(levelOK, fmt.Sprintf("%s = %s (u undoes)", m.repr.editLabel, strings.TrimSpace(m.repr.input.Value())))
		return nil
	}
	var cmd tea.Cmd
	m.repr.input, cmd = m.repr.input.Update(msg)
	return cmd
}

func (m *Model) plotsKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	p := &m.plots
	switch {
	case key.Matches(msg, k.NextPole), key.Matches(msg, k.PrevPole):
		p.showPZ()
		e := m.sess.selected()
		if e == nil || e.pz == nil || !e.pz.havePoles {
			return nil
		}
		n := len(poleReps(e.pz.poles))
		if n == 0 {
			m.setStatus(levelInfo, "this filter has no poles")
			return nil
		}
		d := 1
		if key.Matches(msg, k.PrevPole) {
			d = n - 1
		}
		p.poleSel = (p.poleSel + d) % n
		m.describePole(e)
	case key.Matches(msg, k.PoleMove):
		var radial, angular int
		switch msg.String() {
		case "up", "k":
			radial = 1
		case "down", "j":
			radial = -1
		case "right", "l":
			angular = 1
		case "left", "h":
			angular = -1
		}
		p.showPZ()
		return m.movePole(stepLevels[p.step], radial, angular)
	case key.Matches(msg, k.Finer):
		p.step = max(0, p.step-1)
		m.describeStep()
	case key.Matches(msg, k.Coarser):
		p.step = min(len(stepLevels)-1, p.step+1)
		m.describeStep()
	case key.Matches(msg, k.TogglePlot):
		kinds := []plotKind{plotImpulse, plotMagnitude, plotPhase, plotDelay, plotPZ}
		kd := kinds[msg.String()[0]-'1']
		p.enabled[kd] = !p.enabled[kd]
		state := "off"
		if p.enabled[kd] {
			state = "on"
		}
		m.setStatus(levelInfo, plotNames[kd]+" plot "+state)
	case key.Matches(msg, k.More):
		p.offset++
	case key.Matches(msg, k.Scale):
		p.logImpulse = !p.logImpulse
	case key.Matches(msg, k.Overlay):
		p.overlayOn = !p.overlayOn
		if p.overlayOn && m.overlayEntry() == nil {
			m.setStatus(levelInfo, "nothing to overlay: pin a filter with v in the list, or select a distilled one")
		}
	case key.Matches(msg, k.Shorter):
		m.length = max(minLength, m.length/2)
		m.setStatus(levelInfo, fmt.Sprintf("L = %d samples", m.length))
	case key.Matches(msg, k.Longer):
		m.length = min(maxLength, m.length*2)
		m.setStatus(levelInfo, fmt.Sprintf("L = %d samples", m.length))
	}
	return nil
}

func (m *Model) describeStep() {
	s := stepLevels[m.plots.step]
	m.setStatus(levelInfo, fmt.Sprintf("pole step: radius %s, angle %sπ per key", num(s.r), num(s.th/math.Pi)))
}

func (m *Model) describePole(e *entry) {
	i, ok := m.plots.selectedPole(e.pz)
	if !ok {
		return
	}
	p := e.pz.poles[i]
	what := "pole"
	if imag(p) != 0 {
		what = "pole pair"
	}
	m.setStatus(levelInfo, fmt.Sprintf("%s %d of %d: %s = %s∠%sπ · arrows move it", what, m.plots.poleSel+1, len(poleReps(e.pz.poles)), cnum(p), num(absC(p)), num(argC(p)/math.Pi)))
}

// movePole nudges the selected pole (and its conjugate) of the shown filter by radial and
// angular steps of s. The edit itself is O(n); the responses follow in a command.
func (m *Model) movePole(s stepLevel, radial, angular int) tea.Cmd {
	e := m.sess.selected()
	if e == nil {
		return nil
	}
	f := e.current()
	if f == nil {
		m.setStatus(levelWarn, "kernels have no poles to move")
		return nil
	}
	pm, held := f.(filters.PoleMover)
	if !held && f.Order() > 0 {
		// convert once to a form that holds its poles, then edit there
		m.setStatus(levelInfo, fmt.Sprintf("moving poles needs a form that holds them: converting %s → zpk (press again once done)", f.Form()))
		cmd, err := m.convert(filters.FormZPK)
		m.setError(err)
		return cmd
	}
	if e.pz == nil || !e.pz.havePoles || e.pz.key.rev != e.rev {
		return nil
	}
	i, ok := m.plots.selectedPole(e.pz)
	if !ok {
		m.setStatus(levelInfo, "this filter has no poles")
		return nil
	}
	np := nudge(e.pz.poles[i], s, radial, angular)
	g, err := pm.MovePole(i, np)
	if err != nil {
		m.setError(err)
		return nil
	}
	if err := e.setCurrent(g); err != nil {
		m.setError(err)
		return nil
	}
	m.repr.tab = ""
	m.setStatus(levelInfo, fmt.Sprintf("pole → %s∠%sπ (|p| %s) · u undoes", num(absC(np)), num(argC(np)/math.Pi), stableWord(absC(np))))
	return nil
}

func stableWord(r float64) string {
	if filters.Stable(r) {
		return "inside the unit circle"
	}
	return "on or outside the unit circle: unstable"
}

func (m *Model) jobsKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Up):
		m.jobs.sel = max(0, m.jobs.sel-1)
	case key.Matches(msg, k.Down):
		m.jobs.sel = min(len(m.jobs.jobs)-1, m.jobs.sel+1)
	case key.Matches(msg, k.NewJob):
		cmd, err := m.openJobForm()
		m.setError(err)
		return cmd
	case key.Matches(msg, k.Cancel):
		m.setError(m.cancelJob(m.jobs.selected()))
	case key.Matches(msg, k.Show):
		j := m.jobs.selected()
		if j == nil {
			return nil
		}
		if j.state != jobDone || m.sess.byID(j.resultID) == nil {
			m.setStatus(levelInfo, "this job has no result to show")
			return nil
		}
		m.selectID(j.resultID)
		m.plots.overlayOn = true
		m.setFocus(panePlots)
		m.setStatus(levelInfo, "showing the result over its target (o toggles the overlay)")
	}
	return nil
}

// ---- dialogs

func (m *Model) modalKey(msg tea.KeyMsg) tea.Cmd {
	md := &m.modal
	switch md.kind {
	case modalHelp:
		switch msg.String() {
		case "esc", "?", "q", "enter":
			m.modal = modalState{}
		case "right", "l", "tab", "pgdown", " ":
			md.page++
		case "left", "h", "shift+tab", "pgup":
			md.page = max(0, md.page-1)
		case "ctrl+c":
			m.modal = modalState{}
			return m.askQuit()
		}
		return nil
	case modalPalette:
		if msg.String() == "ctrl+c" {
			m.modal = modalState{}
			return m.askQuit()
		}
		return m.paletteKey(msg)
	case modalPrompt:
		switch msg.String() {
		case "esc":
			m.modal = modalState{}
			return nil
		case "ctrl+c":
			m.modal = modalState{}
			return m.askQuit()
		case "enter":
			return m.submitPrompt()
		}
		var cmd tea.Cmd
		md.input, cmd = md.input.Update(msg)
		return cmd
	case modalConfirm:
		return m.confirmKey(msg)
	case modalPresets:
		shown := md.shownPresets()
		switch msg.String() {
		case "esc":
			if md.presetFilter != "" {
				md.presetFilter, md.presetSel = "", 0
				return nil
			}
			m.modal = modalState{}
		case "ctrl+c":
			m.modal = modalState{}
			return m.askQuit()
		case "up", "ctrl+p":
			md.presetSel = max(0, md.presetSel-1)
		case "down", "ctrl+n":
			md.presetSel = max(0, min(len(shown)-1, md.presetSel+1))
		case "pgup":
			md.presetSel = max(0, md.presetSel-10)
		case "pgdown":
			md.presetSel = max(0, min(len(shown)-1, md.presetSel+10))
		case "home":
			md.presetSel = 0
		case "end":
			md.presetSel = max(0, len(shown)-1)
		case "backspace":
			if r := []rune(md.presetFilter); len(r) > 0 {
				md.presetFilter, md.presetSel = string(r[:len(r)-1]), 0
			}
		case "enter":
			if len(shown) == 0 {
				return nil
			}
			p := shown[md.presetSel]
			var parts []string
			for _, q := range p.Params {
				if q.Default != "" {
					parts = append(parts, q.Name+"="+q.Default)
				}
			}
			var helps []string
			for _, q := range p.Params {
				helps = append(helps, q.Name+": "+q.Help)
			}
			m.modal = modalState{kind: modalPrompt, prompt: promptPresetParams, preset: p.Name,
				title: "preset " + p.Name, body: strings.Join(helps, "\n"), input: newInput(strings.Join(parts, " "))}
		default:
			if msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace {
				md.presetFilter, md.presetSel = md.presetFilter+string(msg.Runes), 0
			}
		}
		return nil
	case modalMessages:
		// page counts the lines scrolled up from the newest; the view clamps it.
		switch msg.String() {
		case "esc", "M", "q", "enter":
			m.modal = modalState{}
		case "ctrl+c":
			m.modal = modalState{}
			return m.askQuit()
		case "up", "k":
			md.page++
		case "down", "j":
			md.page = max(0, md.page-1)
		case "pgup", "ctrl+u":
			md.page += 10
		case "pgdown", "ctrl+d":
			md.page = max(0, md.page-10)
		case "home", "g":
			md.page = math.MaxInt32
		case "end", "G":
			md.page = 0
		}
		return nil
	case modalJobForm:
		switch msg.String() {
		case "esc":
			m.modal = modalState{}
			return nil
		case "ctrl+c":
			m.modal = modalState{}
			return m.askQuit()
		case "enter", "ctrl+s":
			spec, err := md.form.spec()
			if err != nil {
				m.setStatus(levelError, err.Error())
				return nil
			}
			e := m.sess.byID(md.form.sourceID)
			m.modal = modalState{}
			if e == nil {
				m.setError(errNoSelection)
				return nil
			}
			cmd, err := m.startJob(e, spec)
			m.setError(err)
			return cmd
		}
		return md.form.update(msg)
	}
	return nil
}

func (m *Model) submitPrompt() tea.Cmd {
	md := m.modal
	text := strings.TrimSpace(md.input.Value())
	m.modal = modalState{}
	switch md.prompt {
	case promptOpen:
		if text == "" {
			return nil
		}
		m.setStatus(levelInfo, "opening "+text+"…")
		return openFile(m.deps.Store, text)
	case promptSave:
		e := m.sess.byID(md.targetID)
		if e == nil || text == "" {
			return nil
		}
		return m.save(e, text)
	case promptRename:
		if e := m.sess.byID(md.targetID); e != nil && text != "" {
			m.rename(e, text)
		}
	case promptPresetParams:
		vals, err := kv(strings.Fields(text))
		if err != nil {
			m.setError(err)
			return nil
		}
		return m.addPreset(md.preset, vals)
	case promptLength:
		_, err := cmdLength(m, []string{text})
		m.setError(err)
	}
	return nil
}

func (m *Model) confirmKey(msg tea.KeyMsg) tea.Cmd {
	md := m.modal
	s := msg.String()
	switch md.confirm {
	case confirmDelete:
		switch s {
		case "y", "Y", "enter":
			m.modal = modalState{}
			if e := m.sess.byID(md.targetID); e != nil {
				m.sess.remove(e.id)
				if m.overlayID == e.id {
					m.overlayID = 0
				}
				m.repr.reset()
				m.repr.tab = ""
				m.setStatus(levelInfo, "deleted "+e.name+" (there is no undo for this)")
			}
		case "n", "N", "esc", "q":
			m.modal = modalState{}
		case "ctrl+c":
			m.modal = modalState{}
			return m.askQuit()
		}
	case confirmQuit:
		switch s {
		case "s", "S", "y", "Y":
			m.modal = modalState{}
			return m.saveAllAndQuit()
		case "d", "D":
			return m.quit()
		case "ctrl+c":
			// a second ctrl+c is the way out that always works
			return m.quit()
		case "esc", "n", "N", "c":
			m.modal = modalState{}
			m.setStatus(levelInfo, "not quitting")
		}
	}
	return nil
}

func (m *Model) openPresets() {
	m.modal = modalState{kind: modalPresets, presets: m.deps.Presets.Presets()}
}

func (m *Model) askSave() {
	e := m.sess.selected()
	if e == nil {
		return
	}
	path := e.path
	if path == "" {
		path = defaultPath(m.dir, e.name)
	}
	m.modal = modalState{kind: modalPrompt, prompt: promptSave, targetID: e.id, title: "save " + e.name, body: "path (a filter file, JSON):", input: newInput(path)}
}

func (m *Model) askRename() {
	e := m.sess.selected()
	if e == nil {
		return
	}
	m.modal = modalState{kind: modalPrompt, prompt: promptRename, targetID: e.id, title: "rename " + e.name, body: "new name:", input: newInput(e.name)}
}

func (m *Model) askDelete() (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	body := fmt.Sprintf("delete %s? y deletes, n keeps it", e.name)
	if e.dirty && e.kind != kindKernel {
		body = fmt.Sprintf("%s has unsaved changes. delete it? y deletes, n keeps it", e.name)
	}
	m.modal = modalState{kind: modalConfirm, confirm: confirmDelete, targetID: e.id, title: "delete", body: body}
	return nil, nil
}

// askQuit quits, or asks first when there is unsaved work.
func (m *Model) askQuit() tea.Cmd {
	dirty := m.sess.dirty()
	if len(dirty) == 0 {
		return m.quit()
	}
	names := make([]string, len(dirty))
	for i, e := range dirty {
		names[i] = e.name
	}
	body := fmt.Sprintf("%d unsaved: %s\n\ns saves each to its file and quits · d discards and quits · esc stays", len(dirty), strings.Join(names, ", "))
	if n := m.jobs.running(); n > 0 {
		body += fmt.Sprintf("\n%d running job(s) will be cancelled", n)
	}
	m.modal = modalState{kind: modalConfirm, confirm: confirmQuit, title: "quit ssmlab?", body: body}
	return nil
}

func (m *Model) quit() tea.Cmd {
	m.jobs.cancelAll()
	m.quitting = true
	m.modal = modalState{}
	return tea.Quit
}

// saveAllAndQuit saves every unsaved entry (to its file, or a new file named after it in the
// working directory) and quits once all are written.
func (m *Model) saveAllAndQuit() tea.Cmd {
	var reqs []saveReq
	for _, e := range m.sess.dirty() {
		reqs = append(reqs, saveReq{id: e.id, rev: e.rev, path: e.path, item: e.item()})
	}
	if len(reqs) == 0 {
		return m.quit()
	}
	m.savesForQuit = len(reqs)
	m.setStatus(levelInfo, "saving…")
	return saveAll(m.deps.Store, m.dir, reqs)
}

// ---- actions

func (m *Model) save(e *entry, path string) tea.Cmd {
	if e.kind == kindKernel {
		m.setStatus(levelWarn, "kernels cannot be saved as filter files")
		return nil
	}
	m.setStatus(levelInfo, "saving "+path+"…")
	return saveItem(m.deps.Store, e.id, e.rev, path, e.item(), false)
}

func (m *Model) rename(e *entry, name string) {
	old := e.name
	e.name = ""
	e.name = m.sess.uniqueName(name)
	if e.name != old {
		e.dirty = true
	}
	m.setStatus(levelOK, fmt.Sprintf("renamed %s to %s", old, e.name))
}

func (m *Model) duplicate() (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	d := &entry{name: e.name + "-copy", kind: e.kind, filter: e.filter, bank: e.bank, kernels: e.kernels, ch: e.ch,
		dirty: e.kind != kindKernel, origin: "copy of " + e.name, target: e.target}
	m.sess.add(d)
	m.repr.reset()
	m.repr.tab = ""
	m.setStatus(levelOK, "duplicated "+e.name+" as "+d.name)
	return nil, nil
}

func (m *Model) undo() (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if !e.popUndo() {
		return nil, fmt.Errorf("nothing to undo for %s", e.name)
	}
	m.repr.tab = ""
	m.setStatus(levelInfo, fmt.Sprintf("undone (%d more)", len(e.undo)))
	return nil, nil
}

func (m *Model) addPreset(name string, vals map[string]string) tea.Cmd {
	m.setStatus(levelInfo, "building "+name+"…")
	return buildPreset(m.deps.Presets, name, vals)
}

// convert makes the selected filter (or bank) the given form. The conversion runs in a
// command; it is committed when it arrives, unless the filter changed meanwhile.
func (m *Model) convert(to filters.Form) (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if e.kind == kindKernel {
		return nil, fmt.Errorf("kernels have no form to convert: distil them into a filter (D)")
	}
	if e.form() == string(to) {
		return nil, fmt.Errorf("%s is already %s", e.name, to)
	}
	if e.kind == kindBank {
		m.setStatus(levelInfo, fmt.Sprintf("converting %d channels %s → %s…", e.channels(), e.form(), to))
		return convertBank(e.id, e.rev, e.bank, to), nil
	}
	key := viewKey{rev: e.rev, ch: e.ch, form: to}
	m.commitID, m.commitKey = e.id, key
	m.repr.tab = to
	if v := e.views[key]; v != nil && !v.pending {
		m.commitView(e, key, v)
		return nil, nil
	}
	m.setStatus(levelInfo, fmt.Sprintf("converting %s → %s…", e.form(), to))
	return nil, nil // refresh starts the conversion for the tab
}

// commitView makes a finished conversion the entry's filter.
func (m *Model) commitView(e *entry, key viewKey, v *viewData) {
	m.commitID = 0
	if v.err != nil {
		m.setStatus(levelError, fmt.Sprintf("%s → %s failed: %s", e.form(), key.form, oneLine(v.err)))
		return
	}
	rep := v.rep
	if err := e.setCurrent(v.f); err != nil {
		m.setError(err)
		return
	}
	e.lastReport = &rep
	m.repr.tab = ""
	m.repr.reset()
	m.setStatus(reportLevel(rep), reportSummary(rep))
}

func reportLevel(rep filters.Report) level {
	if len(rep.Warnings) > 0 {
		return levelWarn
	}
	return levelOK
}

func reportSummary(rep filters.Report) string {
	s := fmt.Sprintf("converted %s → %s: rel error %s over %d samples, condition %s", rep.From, rep.To, sci(rep.RelError), rep.Length, sci(rep.Condition))
	if len(rep.Warnings) > 0 {
		s += " · warning: " + rep.Warnings[0]
	}
	return s
}

// ---- results

// respKeyFor is the responses the plots want for e now.
func (m *Model) respKeyFor(e *entry) respKey {
	return respKey{rev: e.rev, ch: e.ch, length: m.length, n: freqPoints}
}

func (m *Model) onResp(msg respMsg) {
	e := m.sess.byID(msg.id)
	if e == nil {
		return
	}
	e.respPending = respKey{} // one computation per entry is in flight at a time
	if msg.key != m.respKeyFor(e) {
		return // an older generation: dropped
	}
	e.resp = &respData{key: msg.key, omega: msg.omega, r: msg.r, err: msg.err}
}

func (m *Model) onPZ(msg pzMsg) {
	e := m.sess.byID(msg.id)
	if e == nil {
		return
	}
	e.pzPending = pzKey{} // one computation per entry is in flight at a time
	if e.pz == nil || e.pz.key != msg.key || msg.key.rev != e.rev {
		return
	}
	pz := *e.pz
	pz.err = msg.err
	if msg.err == nil {
		if !pz.havePoles {
			pz.poles, pz.havePoles = msg.poles, true
		}
		if !pz.haveZeros {
			pz.zeros, pz.haveZeros = msg.zeros, true
		}
	}
	e.pz = &pz
}

func (m *Model) onView(msg viewMsg) {
	e := m.sess.byID(msg.id)
	if e == nil || e.views == nil {
		return
	}
	v := e.views[msg.key]
	if v == nil {
		return // the filter changed: dropped
	}
	*v = viewData{f: msg.f, rep: msg.rep, err: msg.err}
	if m.commitID == e.id && m.commitKey == msg.key {
		m.commitView(e, msg.key, e.views[msg.key])
	}
}

func (m *Model) onBankConvert(msg bankConvertMsg) {
	e := m.sess.byID(msg.id)
	if e == nil || e.rev != msg.rev {
		return
	}
	if msg.err != nil {
		m.setStatus(levelError, fmt.Sprintf("%s: converting the bank to %s failed: %s", e.name, msg.form, oneLine(msg.err)))
		return
	}
	worst := 0.0
	warns := 0
	for _, r := range msg.reps {
		worst = math.Max(worst, r.RelError)
		warns += len(r.Warnings)
	}
	e.setBank(msg.bank)
	m.repr.tab = ""
	lvl := levelOK
	if warns > 0 {
		lvl = levelWarn
	}
	m.setStatus(lvl, fmt.Sprintf("converted %d channels to %s: worst rel error %s, %d warnings", len(msg.reps), msg.form, sci(worst), warns))
}

func (m *Model) onPreset(msg presetMsg) {
	if msg.err != nil {
		m.setError(msg.err)
		return
	}
	b := msg.built
	e := &entry{name: b.Name, dirty: true, origin: "preset " + msg.label}
	switch {
	case b.Filter != nil:
		e.kind, e.filter = kindFilter, b.Filter
	case b.Bank != nil:
		e.kind, e.bank = kindBank, b.Bank
	case len(b.Kernels) > 0:
		e.kind, e.kernels = kindKernel, b.Kernels
	default:
		m.setStatus(levelError, msg.name+" built nothing")
		return
	}
	m.sess.add(e)
	m.repr.reset()
	m.repr.tab = ""
	m.plots.poleSel = 0
	m.setStatus(levelOK, fmt.Sprintf("added %s (%s, order %d)", e.name, e.form(), e.order()))
}

func (m *Model) onOpen(msg openMsg) {
	if msg.err != nil {
		m.setError(msg.err)
		return
	}
	for _, it := range msg.items {
		e := &entry{name: it.Name, path: msg.path, origin: "file " + msg.path}
		switch {
		case it.Bank != nil:
			e.kind, e.bank = kindBank, it.Bank
		case it.Kernels != nil:
			// Kernels are not a filter file: saving them goes through a session.
			e.kind, e.kernels, e.path = kindKernel, it.Kernels, ""
		default:
			e.kind, e.filter = kindFilter, it.Filter
		}
		m.sess.add(e)
	}
	m.repr.reset()
	m.repr.tab = ""
	m.setStatus(levelOK, fmt.Sprintf("opened %s (%d item(s))", msg.path, len(msg.items)))
}

// onExported reports an export on the status line: the conversion a .json export made, or
// how closely RTF tensors read back (as `ssmlab export` prints it), as a warning when they
// lose more than filters.MaxRelError or cannot be read back.
func (m *Model) onExported(msg exportedMsg) {
	if msg.err != nil {
		m.setError(msg.err)
		return
	}
	done := fmt.Sprintf("exported %s as %s", msg.req.path, msg.req.opts.Format)
	if msg.rep != nil {
		m.setStatus(levelOK, fmt.Sprintf("%s (%s → %s, rel error %s)", done, msg.rep.From, msg.rep.To, sci(msg.rep.RelError)))
		return
	}
	if len(msg.out.ReadBack) == 0 {
		m.setStatus(levelOK, done)
		return
	}
	text, warn := msg.out.ReadBack[0].Summary("dtype=float64")
	if warn {
		m.setStatus(levelWarn, done+", but it "+text)
	} else {
		m.setStatus(levelOK, done+"; it "+text)
	}
}

func (m *Model) onSaved(msg savedMsg) tea.Cmd {
	e := m.sess.byID(msg.id)
	if msg.err != nil {
		m.setError(msg.err)
		if msg.quit {
			m.savesForQuit = 0
			m.setStatus(levelError, "not quitting: "+oneLine(msg.err))
		}
		return nil
	}
	if e != nil {
		e.path = msg.path
		if e.rev == msg.rev {
			e.dirty = false
		}
	}
	if msg.quit {
		name := msg.path
		if e != nil {
			name = e.name + " → " + msg.path
		}
		m.exitNotes = append(m.exitNotes, "saved "+name)
		m.savesForQuit--
		if m.savesForQuit == 0 {
			return m.quit()
		}
		return nil
	}
	m.setStatus(levelOK, "saved "+msg.path)
	return nil
}

// ---- jobs

// defaultSpecFor is the distillation form's starting point for e: the runner's defaults, an
// order of half the filter's (at most 16), and a length that fits it.
func (m *Model) defaultSpecFor(e *entry) train.Spec {
	s := m.deps.Runner.Defaults()
	if b := m.deps.Runner.Backends(); len(b) > 0 {
		s.Backend = b[0]
	}
	if n := e.order(); e.kind != kindKernel && n > 0 {
		s.Order = max(1, min(16, n/2))
	}
	if e.kind == kindKernel {
		s.Target.Length = len(e.kernel())
	}
	s.Target.Length = max(s.Target.Length, 2*s.Order+8)
	return s
}

// suggestTol is the relative error the distillation form's suggested order is for (the
// CLI's default --suggest-tol).
const suggestTol = 1e-3

// openJobForm opens the distillation form on the selected entry and starts computing the
// suggested order for its default length.
func (m *Model) openJobForm() (tea.Cmd, error) {
	e := m.sess.selected()
	if e == nil {
		return nil, errNoSelection
	}
	def := m.defaultSpecFor(e)
	m.modal = modalState{kind: modalJobForm, form: newJobForm(e.id, e.name, def, m.deps.Runner.Backends())}
	return suggestOrder(m.deps.Runner, e.id, def.Target.Length, targetSource(e, def.Target.Length)), nil
}

// onSuggest shows a suggested order in the form it was computed for, if still open.
func (m *Model) onSuggest(msg suggestMsg) {
	f := &m.modal.form
	if m.modal.kind != modalJobForm || f.sourceID != msg.source {
		return
	}
	switch {
	case msg.err != nil:
		f.suggestion = "suggested order: none, " + oneLine(msg.err)
	case msg.ok:
		f.suggestion = fmt.Sprintf("suggested order: %d (relative error %g at length %d, truncated ERA)", msg.order, suggestTol, msg.length)
		f.suggest(msg.order)
	default:
		f.suggestion = fmt.Sprintf("suggested order: none up to %d reaches relative error %g at length %d", msg.order, suggestTol, msg.length)
	}
}

// targetSource returns what distilling e at length L fits: its impulse response (every
// channel of a bank), or its kernels cut or zero-padded to L.
func targetSource(e *entry, L int) func() ([][]float64, error) {
	var source func() ([][]float64, error)
	switch e.kind {
	case kindFilter:
		f := e.filter
		source = func() ([][]float64, error) {
			h := f.Impulse(L)
			return [][]float64{h}, checkFinite(h)
		}
	case kindBank:
		b := e.bank
		source = func() ([][]float64, error) {
			out := make([][]float64, len(b.Channels))
			filters.ForEachChannel(len(out), func(i int) { out[i] = b.Channels[i].Impulse(L) })
			for _, h := range out {
				if err := checkFinite(h); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case kindKernel:
		ks := e.kernels
		source = func() ([][]float64, error) {
			out := make([][]float64, len(ks))
			for i, k := range ks {
				out[i] = make([]float64, L)
				copy(out[i], k)
			}
			return out, nil
		}
	}
	return source
}

// startJob starts distilling e's impulse response (every channel of a bank).
func (m *Model) startJob(e *entry, spec train.Spec) (tea.Cmd, error) {
	source := targetSource(e, spec.Target.Length)
	ctx, cancel := context.WithCancel(context.Background())
	m.jobs.nextID++
	j := &job{id: m.jobs.nextID, spec: spec, sourceID: e.id, source: e.name, state: jobRunning,
		started: time.Now(), cancel: cancel, chans: newJobChans(), last: JobProgress{Steps: spec.Steps}}
	m.jobs.jobs = append(m.jobs.jobs, j)
	m.jobs.sel = len(m.jobs.jobs) - 1
	m.setStatus(levelInfo, fmt.Sprintf("job #%d: distilling %s into %s of order %d (x in the jobs pane cancels)", j.id, e.name, spec.Model, spec.Order))
	return tea.Batch(runJob(ctx, m.deps.Runner, j.id, spec, source, j.chans), waitJob(j.id, j.chans, 0)), nil
}

func (m *Model) cancelJob(j *job) error {
	if j == nil {
		return errors.New("no job selected")
	}
	if j.state != jobRunning {
		return fmt.Errorf("job #%d is not running", j.id)
	}
	j.cancel()
	m.setStatus(levelInfo, fmt.Sprintf("cancelling job #%d…", j.id))
	return nil
}

func (m *Model) onJobProgress(msg jobProgressMsg) tea.Cmd {
	j := m.jobs.byID(msg.id)
	if j == nil || j.state != jobRunning {
		return nil
	}
	j.last = msg.p
	j.addLoss(msg.p.Loss)
	return waitJob(j.id, j.chans, m.progressDelay)
}

func (m *Model) onJobDone(msg jobDoneMsg) {
	j := m.jobs.byID(msg.id)
	if j == nil {
		return
	}
	j.cancel()
	switch {
	case errors.Is(msg.err, context.Canceled):
		j.state = jobCancelled
		m.setStatus(levelWarn, fmt.Sprintf("job #%d cancelled", j.id))
		return
	case msg.err != nil:
		j.state, j.err = jobFailed, msg.err
		m.setStatus(levelError, fmt.Sprintf("job #%d failed: %s", j.id, oneLine(msg.err)))
		return
	case msg.res == nil || len(msg.res.Filters) == 0:
		j.state, j.err = jobFailed, errors.New("the runner returned no filter")
		m.setStatus(levelError, fmt.Sprintf("job #%d: %s", j.id, j.err))
		return
	}
	j.state, j.result = jobDone, msg.res
	j.last.Step = j.last.Steps
	name := fmt.Sprintf("%s~%s%d", j.source, j.spec.Model, j.spec.Order)
	e := &entry{name: name, dirty: true, target: j.sourceID,
		origin: fmt.Sprintf("job #%d from %s: rel error %s", j.id, j.source, sci(msg.res.MaxRelError))}
	if len(msg.res.Filters) == 1 {
		e.kind, e.filter = kindFilter, msg.res.Filters[0]
	} else {
		b, err := filters.NewBank(msg.res.Filters)
		if err != nil {
			j.state, j.err = jobFailed, err
			m.setError(err)
			return
		}
		e.kind, e.bank = kindBank, b
	}
	// add without moving the selection: the user may be busy elsewhere
	sel := m.sess.sel
	m.sess.add(e)
	m.sess.sel = sel
	j.resultID = e.id
	lvl := levelOK
	if !msg.res.Stable || len(msg.res.Warnings) > 0 {
		lvl = levelWarn
	}
	done := "done"
	if b := msg.res.Backend; b != "" && b != "cpu" {
		done += " on " + b
	}
	m.setStatus(lvl, fmt.Sprintf("job #%d %s: added %s (rel error %s) · enter in the jobs pane shows it over %s", j.id, done, e.name, sci(msg.res.MaxRelError), j.source))
}

// ---- refresh: start the computations the view is missing

// overlayEntry is the filter drawn under the selected one: the pinned one, or else the target
// the selected filter was distilled from.
func (m *Model) overlayEntry() *entry {
	sel := m.sess.selected()
	if ov := m.sess.byID(m.overlayID); ov != nil && ov != sel {
		return ov
	}
	if sel != nil && sel.target != 0 {
		return m.sess.byID(sel.target)
	}
	return nil
}

func (m *Model) refresh() tea.Cmd {
	var cmds []tea.Cmd
	for _, e := range m.sess.entries {
		cmds = append(cmds, m.ensurePZ(e))
		if e.kind == kindBank && e.bankRho < 0 && e.bankRhoRev != e.rev {
			e.bankRhoRev = e.rev
			cmds = append(cmds, computeBankRho(e.id, e.rev, e.bank))
		}
	}
	if e := m.sess.selected(); e != nil {
		cmds = append(cmds, m.ensureResp(e))
		if m.repr.tab != "" && e.kind != kindKernel {
			cmds = append(cmds, m.ensureView(e, m.repr.tab))
		}
	}
	if ov := m.overlayEntry(); ov != nil && m.plots.overlayOn {
		cmds = append(cmds, m.ensureResp(ov))
	}
	return tea.Batch(cmds...)
}

// ensureResp starts the responses of e if they are missing. One computation per entry is in
// flight at a time: when it returns for an older generation it is dropped, and the next
// refresh starts the current one (so holding a key does not pile up work).
func (m *Model) ensureResp(e *entry) tea.Cmd {
	want := m.respKeyFor(e)
	if e.resp != nil && e.resp.key == want {
		return nil
	}
	if e.respPending != (respKey{}) {
		return nil
	}
	e.respPending = want
	omega := make([]float64, want.n)
	for i := range omega {
		omega[i] = math.Pi * float64(i) / float64(want.n-1)
	}
	return computeResponses(m.deps.Analyzer, e.id, want, e.current(), e.kernel(), omega)
}

// ensurePZ takes the poles and zeros the form holds at once (so a moved pole is drawn in the
// same frame) and computes the rest in a command.
func (m *Model) ensurePZ(e *entry) tea.Cmd {
	f := e.current()
	if f == nil {
		return nil
	}
	want := pzKey{rev: e.rev, ch: e.ch}
	if e.pz == nil || e.pz.key != want {
		poles, hp := filters.HeldPoles(f)
		zeros, hz := filters.HeldZeros(f)
		e.pz = &pzData{key: want, poles: poles, zeros: zeros, havePoles: hp, haveZeros: hz}
	}
	if (e.pz.havePoles && e.pz.haveZeros) || e.pz.err != nil {
		return nil
	}
	if e.pzPending != (pzKey{}) {
		return nil // one in flight; looked at again when it returns
	}
	e.pzPending = want
	return computePZ(m.deps.Analyzer, e.id, want, f)
}

func (m *Model) ensureView(e *entry, form filters.Form) tea.Cmd {
	f := e.current()
	if f == nil || string(form) == e.form() {
		return nil
	}
	key := viewKey{rev: e.rev, ch: e.ch, form: form}
	if e.views == nil {
		e.views = map[viewKey]*viewData{}
	}
	if _, ok := e.views[key]; ok {
		return nil
	}
	e.views[key] = &viewData{pending: true}
	return convertView(e.id, key, f)
}

// ---- data for the panes

func (m *Model) reprData(e *entry) reprData {
	d := reprData{name: e.name}
	if e.kind == kindKernel {
		d.kernel = e.kernel()
		d.info = fmt.Sprintf("%d samples · channel %d of %d · distil it with D", len(d.kernel), e.ch+1, e.channels())
		return d
	}
	f := e.current()
	d.native = f.Form()
	d.shown = f
	if m.repr.tab != "" && m.repr.tab != d.native {
		key := viewKey{rev: e.rev, ch: e.ch, form: m.repr.tab}
		v := e.views[key]
		if v == nil {
			v = &viewData{pending: true}
		}
		d.view = v
		if !v.pending && v.err == nil {
			d.shown = v.f
		} else {
			d.shown = nil
		}
	}
	d.last = e.lastReport
	info := fmt.Sprintf("%s · order %d", d.native, f.Order())
	if e.kind == kindBank {
		info += fmt.Sprintf(" · channel %d of %d ([ ])", e.ch+1, e.channels())
	}
	if e.pz != nil && e.pz.havePoles && e.pz.key.rev == e.rev {
		r := radius(e.pz.poles)
		if filters.Stable(r) {
			info += fmt.Sprintf(" · stable, ρ = %s", num(r))
		} else {
			info += fmt.Sprintf(" · UNSTABLE, ρ = %s", num(r))
		}
	}
	d.info = info
	return d
}

func (m *Model) plotData() plotData {
	e := m.sess.selected()
	if e == nil {
		return plotData{message: "no filter: press a to add a preset"}
	}
	d := plotData{name: e.name, resp: e.resp, length: m.length, kernel: e.kind == kindKernel}
	if e.resp != nil {
		d.err = e.resp.err
		d.stale = e.resp.key != m.respKeyFor(e)
	}
	if e.pz != nil && e.pz.key.rev == e.rev {
		d.pz = e.pz
	}
	if ov := m.overlayEntry(); ov != nil && m.plots.overlayOn {
		d.ovName = ov.name
		if ov.resp != nil && ov.resp.err == nil && ov.resp.key.length == m.length {
			d.ovResp = ov.resp
		}
		d.ovPZ = ov.pz
	}
	return d
}

func absC(c complex128) float64 { return math.Hypot(real(c), imag(c)) }
func argC(c complex128) float64 { return math.Atan2(imag(c), real(c)) }
