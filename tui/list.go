package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

// listPane is the filters list: one line per item of the session (name, form, order,
// stability), in the session's order, and a detail line for the selected one. The selection
// is the workbench's (it is the session's UI state); the pane keeps its scroll.
type listPane struct {
	m             *Model
	width, height int
	top           int
}

func (l *listPane) setSize(w, h int) { l.width, l.height = w, h }

func (l *listPane) title() string { return fmt.Sprintf("filters (%d)", len(l.m.sess.Order())) }

func (l *listPane) bindings() []binding {
	k, m := l.m.keys, l.m
	move := func(to func() int) func(tea.KeyMsg) tea.Cmd {
		return func(tea.KeyMsg) tea.Cmd { m.selectIndex(to()); return nil }
	}
	return []binding{
		{key: k.Up, run: move(func() int { return m.selIndex() - 1 })},
		{key: k.Down, run: move(func() int { return m.selIndex() + 1 })},
		{key: k.Top, run: move(func() int { return 0 }), hidden: true},
		{key: k.Bottom, run: move(func() int { return len(m.sess.Order()) - 1 }), hidden: true},
		{key: k.Add, run: func(tea.KeyMsg) tea.Cmd { m.openPresets(); return nil }, short: true},
		{key: k.Open, run: func(tea.KeyMsg) tea.Cmd { m.askOpen(); return nil }, short: true},
		{key: k.Save, run: func(tea.KeyMsg) tea.Cmd { m.setError(m.askSave()); return nil }},
		{key: k.Duplicate, run: func(tea.KeyMsg) tea.Cmd { m.setError(m.duplicate()); return nil }, short: true},
		{key: k.Rename, run: func(tea.KeyMsg) tea.Cmd { m.askRename(); return nil }, short: true},
		{key: k.Delete, run: func(tea.KeyMsg) tea.Cmd { m.setError(m.askDelete()); return nil }, short: true},
		{key: k.Pin, run: func(tea.KeyMsg) tea.Cmd { l.pin(); return nil }, short: true},
		{key: k.PrevChan, run: func(tea.KeyMsg) tea.Cmd { l.channel(-1); return nil }},
		{key: k.NextChan, run: func(tea.KeyMsg) tea.Cmd { l.channel(1); return nil }},
		{key: k.Enter, run: func(tea.KeyMsg) tea.Cmd { m.setFocus(paneRepr); return nil }, hidden: true},
	}
}

// pin makes the selected item the overlay, or clears it when it is.
func (l *listPane) pin() {
	a := l.m.app
	e := a.selected()
	switch {
	case e == nil:
	case a.overlay == e.id:
		a.overlay = ""
		a.setStatus(levelInfo, "overlay cleared")
	default:
		a.overlay, a.overlayOn = e.id, true
		a.setStatus(levelInfo, e.name+" is pinned as the overlay: select another filter to compare")
	}
}

// channel shows the next (d = 1) or previous (d = -1) channel of a bank or kernels.
func (l *listPane) channel(d int) {
	e := l.m.selected()
	if e == nil || e.channels() < 2 {
		return
	}
	e.ch = (e.ch + d + e.channels()) % e.channels()
	l.m.setStatus(levelInfo, e.name+": "+e.channelText("channel"))
}

// stability is an entry's mark: "✓" stable, "◌" marginal (a pole on the unit circle: the
// response neither decays nor grows), "✗" unstable, "·" not known yet, and "≈" for a stable
// filter its form holds outside the documented accuracy (the conversion that made it lost
// more than filters.MaxRelError: what it shows is not the filter it was).
func stability(st *styles, e *entry) string {
	mark := stabilityMark(e)
	switch mark {
	case "·":
		return st.dim.Render(mark)
	case "✗":
		return st.unstable.Render(mark)
	case "◌", "≈":
		return st.warn.Render(mark)
	}
	return st.stable.Render(mark)
}

// stabilityMark is stability's mark, unstyled (markOf).
func stabilityMark(e *entry) string {
	rho, ok := e.rhoOf()
	return markOf(rho, ok, e.inaccuracy() != nil)
}

// markOf is the list's mark of a filter of spectral radius rho (known: computed), held
// inaccurately or not: the verdict of analysis.StabilityOf (as the representation's header
// words it) however the filter was made, then ≈ for a stable one held inaccurately. The
// question before an inaccurate conversion names the mark it will get from here too (gate).
func markOf(rho float64, known, inaccurate bool) string {
	if !known {
		return "·"
	}
	switch analysis.StabilityOf(rho) {
	case analysis.Unstable:
		return "✗"
	case analysis.Marginal:
		return "◌"
	}
	if inaccurate {
		return "≈"
	}
	return "✓"
}

func (l *listPane) view(focused bool) string {
	a := l.m.app
	st := a.st
	w, h := l.width, l.height
	if w <= 0 || h <= 0 {
		return ""
	}
	entries := a.entries()
	if len(entries) == 0 {
		return placeText(w, h, st.dim.Render(wrap("no filters yet\n\na: add a preset\no: open a file", w-2)))
	}
	sel := a.selIndex()
	rows := max(1, h-2) // the detail takes two lines
	if sel < l.top {
		l.top = sel
	}
	if sel >= l.top+rows {
		l.top = sel - rows + 1
	}
	l.top = max(0, min(l.top, len(entries)-rows))
	var lines []string
	for i := l.top; i < len(entries) && len(lines) < rows; i++ {
		lines = append(lines, l.line(entries[i], i == sel, focused))
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	if e := a.selected(); e != nil {
		d := e.origin.Note
		if err := e.problem(); err != nil {
			d = oneLine(err)
		} else if r := e.inaccuracy(); r != nil {
			// the list's mark, so that the two agree: ≈, or ✗ (◌) for a form held unstable (marginal)
			d = fmt.Sprintf("%s rel error %s (%s → %s)", stabilityMark(e), filters.RelErrorText(r.RelError), r.From, r.To)
		} else if e.kind != kindFilter {
			d = e.channelText("ch") + " · " + d
		}
		lines = append(lines, st.dim.Render(strings.Repeat("─", w)))
		lines = append(lines, ansi.Truncate(st.dim.Render(d), w, "…"))
	}
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
}

// line is one item's line: the cursor, the unsaved mark, the name, the overlay mark, and the
// form, order and stability. The name has the room first: where it does not fit whole, the
// form goes (the detail line and the representation pane name it), then the order (a
// result's name holds it: "hippo-legs64~rtf32"), where that shows it whole; at 120 columns
// every result of hippo-legs64 read "hippo-le… diagonal 32". A name too long for the line
// whatever goes is cut beside every column.
func (l *listPane) line(e *entry, selected, focused bool) string {
	st, w := l.m.st, l.width
	mark := st.cursorMark(selected, focused)
	dirty := " "
	if e.dirty {
		dirty = st.warn.Render("•")
	}
	ov := ""
	if e.id == l.m.overlay {
		ov = st.overlay.Render(" ◆")
	}
	form := e.form()
	if e.kind == kindBank {
		form = fmt.Sprintf("%d×%s", e.channels(), form)
	}
	stab := stability(st, e)
	rights := []string{fmt.Sprintf("%s %d %s", form, e.order(), stab), fmt.Sprintf("%d %s", e.order(), stab), stab}
	if e.problem() != nil {
		rights = []string{st.err.Render("unread")}
	}
	room := func(right string) int { return w - 2 - 1 - lipgloss.Width(right) - 1 - lipgloss.Width(ov) }
	right := rights[0] // a name cut whatever goes keeps every column
	for _, r := range rights {
		if lipgloss.Width(e.name) <= room(r) {
			right = r
			break
		}
	}
	nameW := room(right)
	name := ansi.Truncate(e.name, max(1, nameW), "…")
	pad := max(1, w-2-1-lipgloss.Width(name)-lipgloss.Width(ov)-lipgloss.Width(right))
	line := mark + dirty + name + ov + strings.Repeat(" ", pad) + st.dim.Render(right)
	if selected {
		line = mark + dirty + st.bold.Render(name) + ov + strings.Repeat(" ", pad) + right
	}
	return ansi.Truncate(line, w, "")
}

// radius returns max |p| (0 for none).
func radius(poles []complex128) float64 {
	r := 0.0
	for _, p := range poles {
		r = math.Max(r, cmplx.Abs(p))
	}
	return r
}

func (l *listPane) capture(tea.KeyMsg) (tea.Cmd, bool) { return nil, false }
func (l *listPane) hint() string                       { return "" }
