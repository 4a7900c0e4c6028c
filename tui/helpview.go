package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// helpDialog shows every key, the focused pane's first, a page at a time.
type helpDialog struct{ page int }

func (d *helpDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc", "?", "q", "enter":
		m.closeDialog()
	case "right", "l", "tab", "pgdown", " ":
		d.page++
	case "left", "h", "shift+tab", "pgup":
		d.page = max(0, d.page-1)
	}
	return nil
}

func (d *helpDialog) hint() string { return "esc or ? closes the help" }

func (d *helpDialog) view(m *Model, W, B int) string {
	st := m.st
	const tail = "tab moves between the panes; most actions are also commands: press : to list them."
	// The footer's lines are counted at the narrowest the box can be, before the pages are
	// laid out in what is left of B: border, title and two blank lines take 5.
	footH := lipgloss.Height(lipgloss.NewStyle().Width(min(W-4, 50) - 2).Render("Page 1 of 9: ←/→ shows the others. " + tail))
	short := B-5-footH < 6 // a small screen keeps the footer to one line
	if short {
		footH = 1
	}
	pages := m.helpPages(W-6, B-5-footH)
	d.page = min(max(d.page, 0), len(pages)-1)
	inner := min(W-4, max(lipgloss.Width(pages[d.page]), 50))
	foot := tail
	switch {
	case short:
		foot = fmt.Sprintf("page %d of %d · ←/→", d.page+1, len(pages))
	case len(pages) > 1:
		foot = fmt.Sprintf("Page %d of %d: ←/→ shows the others. ", d.page+1, len(pages)) + foot
	}
	foot = lipgloss.NewStyle().Width(inner - 2).Render(foot)
	body := st.titleFocused.Render("ssmlab keys") + "\n\n" + pages[d.page] + "\n\n" + st.dim.Render(foot)
	return st.modal.Width(inner).Render(body)
}

// helpPages lays the key groups out as columns, wrapped into rows and pages that fit w×h.
// The page with the focused pane's keys comes first.
func (m *Model) helpPages(w, h int) []string {
	type group struct {
		p     pane
		title string
		keys  []key.Binding
	}
	_, global := helpOf(m.globalBindings())
	groups := []group{{nPanes, "everywhere", global}}
	for p, title := range []string{"filters list", "representation", "plots", "jobs"} {
		_, full := helpOf(m.panes[p].bindings())
		groups = append(groups, group{pane(p), title, full})
	}
	// the focused pane's group right after the global one
	for i, g := range groups {
		if g.p == m.focus && i > 1 {
			groups[1], groups[i] = groups[i], groups[1]
		}
	}
	var pages, rows, row []string
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
	// a group longer than the page is cut into columns that are (a title line and h-1 keys)
	perCol := max(1, h-1)
	var cols []group
	for _, g := range groups {
		for i, title := 0, g.title; i < len(g.keys); i, title = i+perCol, g.title+" (more)" {
			cols = append(cols, group{g.p, title, g.keys[i:min(i+perCol, len(g.keys))]})
		}
	}
	for _, g := range cols {
		col := m.st.accent.Render(g.title) + "\n" + m.help.FullHelpView([][]key.Binding{g.keys})
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

// messagesDialog is the message log: every kept status line whole, wrapped to the dialog's
// width, newest at the bottom, scrolled up by scroll lines (the view clamps it).
type messagesDialog struct{ scroll int }

func (d *messagesDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc", "M", "q", "enter":
		m.closeDialog()
	case "up", "k":
		d.scroll++
	case "down", "j":
		d.scroll = max(0, d.scroll-1)
	case "pgup", "ctrl+u":
		d.scroll += 10
	case "pgdown", "ctrl+d":
		d.scroll = max(0, d.scroll-10)
	case "home", "g":
		d.scroll = math.MaxInt32
	case "end", "G":
		d.scroll = 0
	}
	return nil
}

func (d *messagesDialog) hint() string {
	return "↑↓/pgup/pgdn scroll · g oldest · G newest · esc closes"
}

func (d *messagesDialog) view(m *Model, W, B int) string {
	st := m.st
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
	d.scroll = min(d.scroll, max(0, len(lines)-rows))
	end := len(lines) - d.scroll
	shown := lines[max(0, end-rows):end]
	title := fmt.Sprintf("messages (%d)", len(m.messages))
	if d.scroll > 0 {
		title += fmt.Sprintf(" · %d lines below", d.scroll)
	}
	return modalBox(st, title, strings.Join(shown, "\n"), w)
}
