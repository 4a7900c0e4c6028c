package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

// reprPane is the representation view: form tabs, the conversion report, and the shown
// filter as scrollable tables with a cell cursor and in-place editing.
type reprPane struct {
	m             *Model
	width, height int
	tab           filters.Form // the form shown; "" follows the filter's own form
	row, col      int          // cursor: data row over all tables, column (≥ 1)
	top, left     int          // first visible line, first visible scrolled column
	editing       bool
	editRef       cellRef
	editLabel     string
	input         textinput.Model
	seen          reprSeen // what sync saw last
	// the data rows the last render showed, 0-based, of how many (total 0: no tables), which
	// the title gives when some are not shown: cut with nothing said, a zpk filter's last
	// zeros looked like all there was
	shown struct{ first, last, total int }
}

// reprSeen is what the pane shows a view of: the selection, its channel and filter.
type reprSeen struct {
	id   string
	ch   int
	f    filters.Filter
	form string
}

func newRepr(m *Model) *reprPane {
	return &reprPane{m: m, col: 1, input: newInput("")}
}

func (r *reprPane) setSize(w, h int) {
	r.width, r.height = w, h
	r.input.Width = max(10, w-24)
}

func (r *reprPane) title() string {
	t := paneNames[paneRepr]
	if e := r.m.selected(); e != nil {
		t = "representation · " + e.name
	}
	var more string // said after the name, which is cut for it where the border is short
	if sh := r.shown; sh.total > 0 && (sh.first > 0 || sh.last < sh.total-1) {
		switch {
		case sh.last < sh.first: // only titles and headers fit
			more = fmt.Sprintf(" · %d rows", sh.total)
		case sh.last == sh.first:
			more = fmt.Sprintf(" · row %d of %d", sh.first+1, sh.total)
		default:
			more = fmt.Sprintf(" · rows %d–%d of %d", sh.first+1, sh.last+1, sh.total)
		}
	}
	if l := r.m.lay; l.mode == layoutNarrow && l.plots.h == 0 {
		// the plots are hidden on a short screen: say how to see them
		more += fmt.Sprintf(" · tab: plots, or %d rows", narrowSplitRows+statusLines)
	}
	// frame cuts a title at the pane's width less 2 (the box's less 4), its corners and spaces
	if room := r.width - 4 - lipgloss.Width(more); more != "" && room > len("representation · ")+1 && lipgloss.Width(t) > room {
		t = ansi.Truncate(t, room, "…")
	}
	return t + more
}

// sync follows the session: another item or channel puts the cursor at the top, another
// filter (an edit, a conversion, an undo) shows its own form, in a new form from the top.
func (r *reprPane) sync() {
	var now reprSeen
	if e := r.m.selected(); e != nil {
		now = reprSeen{e.id, e.ch, e.current(), e.form()}
	}
	switch {
	case now.id != r.seen.id:
		r.reset()
		r.tab = ""
	case now.ch != r.seen.ch:
		r.reset()
	case now.f != r.seen.f:
		r.tab = ""
		if now.form != r.seen.form {
			r.reset()
		}
	}
	r.seen = now
}

func (r *reprPane) bindings() []binding {
	k := r.m.keys
	move := func(dr, dc int) func(tea.KeyMsg) tea.Cmd {
		return func(tea.KeyMsg) tea.Cmd { r.moveBy(dr, dc); return nil }
	}
	page := func(sign int) func(tea.KeyMsg) tea.Cmd {
		return func(tea.KeyMsg) tea.Cmd { r.moveBy(sign*max(1, r.height-4), 0); return nil }
	}
	return []binding{
		{key: k.Tabs, run: func(msg tea.KeyMsg) tea.Cmd {
			r.showTab(filters.Forms[msg.String()[0]-'1'])
			return nil
		}, short: true},
		{key: k.PrevTab, run: func(tea.KeyMsg) tea.Cmd { r.stepTab(len(filters.Forms) - 1); return nil }},
		{key: k.NextTab, run: func(tea.KeyMsg) tea.Cmd { r.stepTab(1); return nil }},
		{key: k.Up, run: move(-1, 0)},
		{key: k.Down, run: move(1, 0)},
		{key: k.Left, run: move(0, -1)},
		{key: k.Right, run: move(0, 1)},
		{key: k.PageUp, run: page(-1)},
		{key: k.PageDown, run: page(1)},
		{key: k.Top, run: move(-1<<30, 0), hidden: true},
		{key: k.Bottom, run: move(1<<30, 0), hidden: true},
		{key: k.Edit, run: func(tea.KeyMsg) tea.Cmd { r.startEdit(); return nil }, short: true},
		{key: k.Commit, run: func(tea.KeyMsg) tea.Cmd { return r.commit() }, short: true},
	}
}

// moveBy moves the cursor over the selected item's tables.
func (r *reprPane) moveBy(dr, dc int) {
	if e := r.m.selected(); e != nil {
		r.move(r.data(e), dr, dc)
	}
}

// stepTab shows the form step places after the one shown, cyclically.
func (r *reprPane) stepTab(step int) {
	e := r.m.selected()
	if e == nil {
		return
	}
	cur := r.tab
	if cur == "" {
		cur = filters.Form(e.form())
	}
	i := 0
	for j, f := range filters.Forms {
		if f == cur {
			i = j
		}
	}
	r.showTab(filters.Forms[(i+step)%len(filters.Forms)])
}

// showTab shows the selected filter in form f (a conversion view, computed in a command).
func (r *reprPane) showTab(f filters.Form) {
	e := r.m.selected()
	if e == nil || e.kind == kindKernel {
		return
	}
	if string(f) == e.form() {
		r.tab = ""
	} else {
		r.tab = f
	}
	r.reset()
}

// commit converts the filter to the form shown (c).
func (r *reprPane) commit() tea.Cmd {
	e := r.m.selected()
	if e == nil {
		return nil
	}
	if r.tab == "" || string(r.tab) == e.form() {
		r.m.setStatus(levelInfo, "this is already the filter's form: pick another tab (1-6) to convert")
		return nil
	}
	cmd, err := r.m.convertTo(r.tab)
	r.m.setError(err)
	return cmd
}

func (r *reprPane) startEdit() {
	e := r.m.selected()
	if e == nil {
		return
	}
	d := r.data(e)
	if d.shown == nil {
		r.m.setStatus(levelWarn, "kernels cannot be edited")
		return
	}
	if d.view != nil && (d.view.pending || d.view.err != nil) {
		r.m.setStatus(levelWarn, "the conversion is not available: nothing to edit")
		return
	}
	ref, label := r.cursorRef(d)
	if ref == nil {
		r.m.setStatus(levelInfo, "this cell is a label, not a value")
		return
	}
	r.editing = true
	r.editRef = *ref
	r.editLabel = label
	r.input = newInput(editText(d.shown, *ref))
	r.input.Width = max(10, r.width-len(label)-10)
	hint := "enter sets the value, esc cancels"
	if ref.part == "arg" {
		hint += "; angles are in units of π"
	} else if isComplexCell(d.shown, *ref) {
		hint += "; complex values as 0.9+0.1j or 0.95@0.3 (polar, radians)"
	}
	r.m.setStatus(levelInfo, hint)
}

// capture takes every key while a value is being edited.
func (r *reprPane) capture(msg tea.KeyMsg) (tea.Cmd, bool) {
	if !r.editing {
		return nil, false
	}
	switch msg.String() {
	case "esc":
		r.editing = false
		r.m.setStatus(levelInfo, "edit cancelled")
		return nil, true
	case "ctrl+c":
		r.editing = false
		return r.m.askQuit(), true
	case "enter":
		r.editing = false
		r.applyEdit()
		return nil, true
	}
	var cmd tea.Cmd
	r.input, cmd = r.input.Update(msg)
	return cmd, true
}

// applyEdit sets the edited value: a new filter, as one undoable edit.
func (r *reprPane) applyEdit() {
	e := r.m.selected()
	if e == nil {
		return
	}
	d := r.data(e)
	if d.shown == nil {
		return
	}
	g, err := applyEdit(d.shown, r.editRef, r.input.Value())
	if err != nil {
		r.m.setStatus(levelError, r.editLabel+": "+oneLine(err))
		return
	}
	label, value := r.editLabel, strings.TrimSpace(r.input.Value())
	set := func(a *app, e *entry) {
		if err := a.setCurrent(e, g); err != nil {
			a.setError(err)
			return
		}
		a.setStatus(levelOK, fmt.Sprintf("%s = %s (u undoes)", label, value))
	}
	if d.view == nil {
		set(r.m.app, e)
		return
	}
	// an edit in another form's view replaces the filter by its conversion, edited: the
	// conversion's report stays with it
	rep := d.view.rep
	r.m.gate(e, []filters.Report{rep}, radiusOf{}, func(a *app, e *entry) {
		set(a, e)
		if e := a.entry(e.id); e.form() == string(rep.To) {
			e.report, e.reportRev = &rep, e.rev
		}
	})
}

func (r *reprPane) hint() string {
	if r.editing {
		return "enter set · esc cancel · ←→ move in the text"
	}
	return ""
}

func (r *reprPane) view(focused bool) string {
	e := r.m.selected()
	if e == nil {
		return r.render(reprData{message: "no filter: press a to add a preset"}, false)
	}
	return r.render(r.data(e), focused)
}

// reprData is what the pane shows of an entry.
type reprData struct {
	name    string
	native  filters.Form // "" for kernels
	shown   filters.Filter
	kernel  []float64
	view    *viewData // conversion to the tab's form (nil when the tab is the native form)
	last    *filters.Report
	info    string // order, channels, stability
	message string // no entry
}

// data gathers what the pane shows of e.
func (r *reprPane) data(e *entry) reprData {
	d := reprData{name: e.name}
	if err := e.problem(); err != nil {
		d.message = e.name + ": " + oneLine(err)
		return d
	}
	if e.kind == kindKernel {
		d.kernel = e.kernel()
		d.info = fmt.Sprintf("%d samples · %s · distil it with D", len(d.kernel), e.channelText("channel"))
		return d
	}
	f := e.current()
	d.native = f.Form()
	d.shown = f
	if r.tab != "" && r.tab != d.native {
		v := e.views[viewKey{rev: e.rev, ch: e.ch, form: r.tab}]
		if v == nil || e.viewsRev != e.rev {
			v = &viewData{pending: true}
		}
		d.view = v
		if !v.pending && v.err == nil {
			d.shown = v.f
		} else {
			d.shown = nil
		}
	}
	d.last = e.lastReport()
	info := fmt.Sprintf("%s · order %d", d.native, f.Order())
	if e.kind == kindBank {
		info += " · " + e.channelText("channel")
		if r.m.focus == paneList {
			info += " ([ ])" // the list's keys: here they step the form tab
		}
	}
	if e.pz != nil && e.pz.havePoles && e.pz.key.rev == e.rev {
		info += " · " + stabilityText(radius(e.pz.poles))
	}
	d.info = info
	return d
}

// stabilityText is the header's verdict on a spectral radius, in analyze --properties' words
// (analysis.StabilityOf): "stable, ρ = 0.9", "marginal, ρ = 1 (on the unit circle)",
// "UNSTABLE, ρ = 1.2 (outside the unit circle)", the last in capitals as a warning.
func stabilityText(r float64) string {
	v := analysis.StabilityOf(r)
	if v == analysis.Stable {
		return "stable, ρ = " + filters.FormatModulus(r)
	}
	word := v.String()
	if v == analysis.Unstable {
		word = strings.ToUpper(word)
	}
	return fmt.Sprintf("%s, ρ = %s (%s)", word, filters.FormatModulus(r), filters.CirclePlace(r))
}

// tables returns the tables of the shown filter.
func (d reprData) tables() []table {
	if d.kernel != nil {
		return kernelTable(d.kernel)
	}
	if d.shown == nil {
		return nil
	}
	return tablesFor(d.shown)
}

// rowAt maps a data row over all tables to its table and row.
func rowAt(ts []table, g int) (int, int, bool) {
	for t, tb := range ts {
		if g < tb.rows {
			return t, g, true
		}
		g -= tb.rows
	}
	return 0, 0, false
}

func totalRows(ts []table) int {
	n := 0
	for _, t := range ts {
		n += t.rows
	}
	return n
}

// cursorRef returns the editable cell under the cursor.
func (r *reprPane) cursorRef(d reprData) (*cellRef, string) {
	ts := d.tables()
	t, row, ok := rowAt(ts, r.row)
	if !ok {
		return nil, ""
	}
	tb := ts[t]
	c := min(r.col, len(tb.cols)-1)
	_, ref := tb.cell(row, c)
	label := tb.cols[c]
	rowLabel, _ := tb.cell(row, 0)
	if rowLabel != "" {
		label = fmt.Sprintf("%s[%s]", strings.TrimSpace(label), rowLabel)
	}
	if tb.title != "" && len(ts) > 1 {
		label = firstWord(tb.title) + " " + label
	}
	return ref, label
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}

// move moves the cursor by dr rows and dc columns, clamped to the tables.
func (r *reprPane) move(d reprData, dr, dc int) {
	ts := d.tables()
	n := totalRows(ts)
	if n == 0 {
		r.row, r.col = 0, 1
		return
	}
	r.row = min(max(r.row+dr, 0), n-1)
	t, _, _ := rowAt(ts, r.row)
	r.col = min(max(r.col+dc, 1), max(1, len(ts[t].cols)-1))
}

// reset puts the cursor at the top (a new filter or form).
func (r *reprPane) reset() { r.row, r.col, r.top, r.left = 0, 1, 0, 0 }
