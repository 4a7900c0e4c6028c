package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// layoutMode is how many panes fit.
type layoutMode int

const (
	layoutTiny   layoutMode = iota // the focused pane alone
	layoutNarrow                   // list and jobs on the left, repr or plots on the right
	layoutMedium                   // list and jobs on the left, repr over plots on the right
	layoutWide                     // list and jobs, repr, plots side by side
)

// box is the outer size of a pane, borders included; zero when hidden.
type box struct{ w, h int }

type layout struct {
	mode                    layoutMode
	list, jobs, repr, plots box
}

// statusLines is the height of the status bar (message, key hints).
const statusLines = 2

// relayout sizes the panes for the window and hands each child its inner size. Only the root
// sees tea.WindowSizeMsg; the children get sizes from here.
func (m *Model) relayout() {
	W, H := m.width, m.height
	B := H - statusLines
	var l layout
	switch {
	case W < 60 || B < 12:
		l.mode = layoutTiny
		full := box{W, B}
		switch m.focus {
		case paneList:
			l.list = full
		case paneRepr:
			l.repr = full
		case panePlots:
			l.plots = full
		case paneJobs:
			l.jobs = full
		}
	default:
		leftW := 24
		switch {
		case W >= 150:
			l.mode = layoutWide
			leftW = 30
		case W >= 110:
			l.mode = layoutMedium
			leftW = 28
		default:
			l.mode = layoutNarrow
		}
		jobsH := 3
		if len(m.jobs.jobs) > 0 {
			jobsH = min(B/3, 2+3*len(m.jobs.jobs))
			if m.focus == paneJobs {
				jobsH = B / 2
			}
			jobsH = max(jobsH, 4)
		}
		l.list = box{leftW, B - jobsH}
		l.jobs = box{leftW, jobsH}
		rightW := W - leftW
		switch l.mode {
		case layoutWide:
			reprW := rightW * 2 / 5
			l.repr = box{reprW, B}
			l.plots = box{rightW - reprW, B}
		case layoutMedium:
			reprH := max(10, B*2/5)
			l.repr = box{rightW, reprH}
			l.plots = box{rightW, B - reprH}
		default:
			if m.main == paneRepr {
				l.repr = box{rightW, B}
			} else {
				l.plots = box{rightW, B}
			}
		}
	}
	m.lay = l
	inner := func(b box) (int, int) { return max(0, b.w-2), max(0, b.h-2) }
	m.list.setSize(inner(l.list))
	m.jobs.setSize(inner(l.jobs))
	m.repr.setSize(inner(l.repr))
	m.plots.setSize(inner(l.plots))
	m.help.Width = W
}

// View renders the stored state; it computes nothing but layout and text.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.quitting {
		return ""
	}
	if m.lay == (layout{}) {
		m.relayout()
	}
	if m.width < 16 || m.height < 4 {
		return fit(m.c.st.dim.Render("ssmlab: window too small"), m.width, m.height)
	}
	return fit(m.bodyView()+"\n"+m.statusView(), m.width, m.height)
}

// fit cuts or pads a view to exactly w×h cells, whatever the panes did.
func fit(view string, w, h int) string {
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (m *Model) bodyView() string {
	W, B := m.width, m.height-statusLines
	if m.modal.kind != modalNone {
		return lipgloss.Place(W, B, lipgloss.Center, lipgloss.Center, m.modalView(W, B))
	}
	l := m.lay
	panel := func(p pane, b box, content func() string) string {
		if b.w <= 0 || b.h <= 0 {
			return ""
		}
		return m.frame(p, b, content())
	}
	list := panel(paneList, l.list, func() string { return m.list.view(&m.sess, m.overlayID, m.focus == paneList) })
	jobs := panel(paneJobs, l.jobs, func() string { return m.jobs.view(m.focus == paneJobs) })
	repr := panel(paneRepr, l.repr, func() string {
		e := m.sess.selected()
		if e == nil {
			return m.repr.view(reprData{message: "no filter: press a to add a preset"}, false)
		}
		return m.repr.view(m.reprData(e), m.focus == paneRepr)
	})
	plots := panel(panePlots, l.plots, func() string { return m.plots.view(m.plotData(), m.focus == panePlots) })
	var out string
	switch l.mode {
	case layoutTiny:
		out = list + jobs + repr + plots
	case layoutWide:
		left := lipgloss.JoinVertical(lipgloss.Left, list, jobs)
		out = lipgloss.JoinHorizontal(lipgloss.Top, left, repr, plots)
	case layoutMedium:
		left := lipgloss.JoinVertical(lipgloss.Left, list, jobs)
		right := lipgloss.JoinVertical(lipgloss.Left, repr, plots)
		out = lipgloss.JoinHorizontal(lipgloss.Top, left, right)
	default:
		left := lipgloss.JoinVertical(lipgloss.Left, list, jobs)
		out = lipgloss.JoinHorizontal(lipgloss.Top, left, repr+plots)
	}
	return out
}

// frame draws a pane's border with its title in the top edge; the focused pane has a thick
// border (visible without colour).
func (m *Model) frame(p pane, b box, content string) string {
	st := m.c.st
	if b.w < 4 || b.h < 3 {
		return blank(b.w, b.h)
	}
	style, border, titleStyle := st.pane, lipgloss.RoundedBorder(), st.title
	if p == m.focus {
		style, border, titleStyle = st.paneFocused, lipgloss.ThickBorder(), st.titleFocused
	}
	edge := lipgloss.NewStyle().Foreground(style.GetBorderTopForeground())
	title := " " + m.paneTitle(p) + " "
	title = ansi.Truncate(title, max(0, b.w-4), "…")
	fill := max(0, b.w-3-lipgloss.Width(title))
	top := edge.Render(border.TopLeft+border.Top) + titleStyle.Render(title) + edge.Render(strings.Repeat(border.Top, fill)+border.TopRight)
	inner := lipgloss.NewStyle().Width(b.w - 2).Height(b.h - 2).MaxWidth(b.w - 2).MaxHeight(b.h - 2).Render(content)
	rest := style.Border(border, false, true, true, true).Render(inner)
	return top + "\n" + rest
}

func (m *Model) paneTitle(p pane) string {
	switch p {
	case paneList:
		return fmt.Sprintf("filters (%d)", len(m.sess.entries))
	case paneRepr:
		if e := m.sess.selected(); e != nil {
			return "representation · " + e.name
		}
	case panePlots:
		t := fmt.Sprintf("plots · L=%d", m.length)
		if m.plots.logImpulse {
			t += " · log"
		}
		kinds, _, _ := m.plots.visible()
		on := 0
		for _, e := range m.plots.enabled {
			if e {
				on++
			}
		}
		if len(kinds) < on {
			t += fmt.Sprintf(" · %d of %d (p: more)", len(kinds), on)
		}
		if m.lay.mode == layoutNarrow {
			t += " · tab: repr"
		}
		return t
	case paneJobs:
		if n := m.jobs.running(); n > 0 {
			return fmt.Sprintf("jobs (%d running)", n)
		}
		return "jobs"
	}
	return paneNames[p]
}

func (m *Model) statusView() string {
	st := m.c.st
	W := m.width
	var right []string
	if s := m.jobs.summary(); s != "" {
		right = append(right, st.accent.Render(s))
	}
	if n := len(m.sess.dirty()); n > 0 {
		right = append(right, st.warn.Render(fmt.Sprintf("%d unsaved", n)))
	}
	rightText := strings.Join(right, "  ")
	msgStyle, prefix := st.level(m.status.level)
	avail := max(0, W-lipgloss.Width(rightText)-1)
	// A cut line that the message log keeps says where to read it whole.
	tail := "… (M)"
	if m.status.level == levelInfo {
		tail = "…"
	}
	msg := ansi.Truncate(msgStyle.Render(prefix+m.status.text), avail, tail)
	pad := max(1, W-lipgloss.Width(msg)-lipgloss.Width(rightText))
	line1 := msg + strings.Repeat(" ", pad) + rightText
	var line2 string
	switch m.modal.kind {
	case modalNone:
		if m.repr.editing {
			line2 = st.keyHint.Render("enter set · esc cancel · ←→ move in the text")
		} else {
			line2 = m.help.ShortHelpView(m.c.keys.helpFor(m.focus).ShortHelp())
		}
	case modalHelp:
		line2 = st.keyHint.Render("esc or ? closes the help")
	case modalPalette:
		line2 = st.keyHint.Render("type a command · enter runs · tab completes · esc closes")
	case modalPrompt:
		line2 = st.keyHint.Render("enter confirms · esc cancels")
	case modalConfirm:
		line2 = st.keyHint.Render("answer with the key shown · esc cancels")
	case modalPresets:
		line2 = st.keyHint.Render("type to filter · ↑↓ choose · enter set parameters · esc cancels")
	case modalJobForm:
		line2 = st.keyHint.Render("↑↓/tab field · ←→ choice · enter starts · esc cancels")
	case modalMessages:
		line2 = st.keyHint.Render("↑↓/pgup/pgdn scroll · g oldest · G newest · esc closes")
	}
	return ansi.Truncate(line1, W, "") + "\n" + ansi.Truncate(line2, W, "…")
}

func (m *Model) modalView(W, B int) string {
	st := m.c.st
	w := min(W-2, 76)
	md := &m.modal
	switch md.kind {
	case modalHelp:
		pages := m.helpPages(W-6, B-8)
		md.page = min(max(md.page, 0), len(pages)-1)
		inner := min(W-4, max(lipgloss.Width(pages[md.page]), 50))
		foot := "tab moves between the panes; every action is also a command: press : and type its name."
		if len(pages) > 1 {
			foot = fmt.Sprintf("Page %d of %d: ←/→ shows the others. ", md.page+1, len(pages)) + foot
		}
		foot = lipgloss.NewStyle().Width(inner - 2).Render(foot)
		body := st.titleFocused.Render("ssmlab keys") + "\n\n" + pages[md.page] + "\n\n" + st.dim.Render(foot)
		return st.modal.Width(inner).Render(body)
	case modalPalette:
		return m.paletteView(w, B)
	case modalPrompt:
		body := md.body + "\n" + st.accent.Render("> ") + md.input.View()
		if md.prompt == promptPresetParams {
			// style line by line: a styled block pads every line to the longest
			lines := strings.Split(md.body, "\n")
			for i, l := range lines {
				lines[i] = st.dim.Render(ansi.Truncate(l, w-4, "…"))
			}
			body = strings.Join(lines, "\n") + "\n\n" + st.accent.Render("> ") + md.input.View()
		}
		return modalBox(st, md.title, body, w)
	case modalConfirm:
		return modalBox(st, md.title, wrap(md.body, w-4), w)
	case modalPresets:
		lines := []string{st.dim.Render("type to filter")}
		if md.presetFilter != "" {
			lines[0] = st.accent.Render("/ ") + md.presetFilter
		}
		lines = append(lines, "")
		shown := md.shownPresets()
		if len(shown) == 0 {
			lines = append(lines, st.dim.Render(fmt.Sprintf("no preset matches %q (backspace or esc clears the filter)", md.presetFilter)))
		}
		rows := max(3, B-10)
		first := max(0, md.presetSel-rows+1)
		nameW := 0
		for _, p := range md.presets {
			nameW = max(nameW, len(p.Name))
		}
		for i := first; i < len(shown) && i < first+rows; i++ {
			p := shown[i]
			mark := "  "
			name := fmt.Sprintf("%-*s", nameW, p.Name)
			if i == md.presetSel {
				mark = st.accent.Render("▸ ")
				name = st.bold.Render(name)
			}
			lines = append(lines, ansi.Truncate(mark+name+" "+st.dim.Render(p.Description), w-4, "…"))
		}
		return modalBox(st, "add a preset", strings.Join(lines, "\n"), w)
	case modalJobForm:
		return modalBox(st, "distill", md.form.view(st, w-4), w)
	case modalMessages:
		return m.messagesView(W, B)
	}
	return ""
}

// helpPages lays the key groups out as columns, wrapped into rows and pages that fit w×h.
// The page with the focused pane's keys comes first.
func (m *Model) helpPages(w, h int) []string {
	k := m.c.keys
	groups := []struct {
		p     pane
		title string
		keys  []key.Binding
	}{
		{nPanes, "everywhere", k.global()},
		{paneList, "filters list", k.listKeys()},
		{paneRepr, "representation", k.reprKeys()},
		{panePlots, "plots", k.plotKeys()},
		{paneJobs, "jobs", k.jobKeys()},
	}
	// the focused pane's group right after the global one
	for i, g := range groups {
		if g.p == m.focus && i > 1 {
			groups[1], groups[i] = groups[i], groups[1]
		}
	}
	var pages []string
	var rows []string
	var row []string
	rowW, pageH := 0, 0
	flushRow := func() {
		if len(row) == 0 {
			return
		}
		r := lipgloss.JoinHorizontal(lipgloss.Top, row...)
		rows = append(rows, r)
		pageH += lipgloss.Height(r) + 1
		row, rowW = nil, 0
	}
	flushPage := func() {
		flushRow()
		if len(rows) > 0 {
			pages = append(pages, strings.Join(rows, "\n\n"))
		}
		rows, pageH = nil, 0
	}
	for _, g := range groups {
		col := m.c.st.accent.Render(g.title) + "\n" + m.help.FullHelpView([][]key.Binding{g.keys})
		cw := lipgloss.Width(col) + 4
		ch := lipgloss.Height(col)
		if rowW > 0 && rowW+cw > w {
			flushRow()
		}
		if pageH > 0 && pageH+ch > h {
			flushPage()
		}
		row = append(row, lipgloss.NewStyle().PaddingRight(4).Render(col))
		rowW += cw
	}
	flushPage()
	if len(pages) == 0 {
		pages = []string{""}
	}
	return pages
}

// messagesView is the message log: every kept status line whole, wrapped to the dialog's
// width, newest at the bottom, scrolled up by modal.page lines.
func (m *Model) messagesView(W, B int) string {
	st := m.c.st
	w := min(W-2, 100)
	contentW := max(16, w-4)
	var lines []string
	for _, s := range m.messages {
		style, prefix := st.level(s.level)
		for i, l := range strings.Split(wrap(s.text, contentW-2), "\n") {
			if i > 0 {
				prefix = "  "
			}
			lines = append(lines, style.Render(prefix+strings.TrimRight(l, " ")))
		}
	}
	if len(lines) == 0 {
		lines = []string{st.dim.Render("no messages yet: results, warnings and errors are kept here")}
	}
	rows := max(3, B-6)
	m.modal.page = min(m.modal.page, max(0, len(lines)-rows))
	end := len(lines) - m.modal.page
	shown := lines[max(0, end-rows):end]
	title := fmt.Sprintf("messages (%d)", len(m.messages))
	if m.modal.page > 0 {
		title += fmt.Sprintf(" · %d lines below", m.modal.page)
	}
	return modalBox(st, title, strings.Join(shown, "\n"), w)
}
