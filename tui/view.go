package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// layoutMode is how many panes fit.
type layoutMode int

const (
	layoutTiny   layoutMode = iota // the focused pane alone
	layoutNarrow                   // list and jobs on the left, repr and plots (when short, the repr alone or a strip of it over the plots) on the right
	layoutMedium                   // list and jobs on the left, repr over plots on the right
	layoutWide                     // list and jobs, repr, plots side by side
)

// box is the outer size of a pane, borders included; zero when hidden.
type box struct{ w, h int }

type layout struct {
	mode                    layoutMode
	list, jobs, repr, plots box
}

// boxes are the panes' boxes, by pane.
func (l layout) boxes() [nPanes]box {
	return [nPanes]box{paneList: l.list, paneRepr: l.repr, panePlots: l.plots, paneJobs: l.jobs}
}

// statusLines is the height of the status bar (message, key hints).
const statusLines = 2

// narrowSplitRows is the least body height (80×24's) at which the narrow layout shows the
// representation and the plots one over the other: the one last focused gets the larger
// part, so that the plots follow an edited cell, and the representation a moved pole.
const narrowSplitRows = 22

// reprStripRows is the height of the representation's strip over the plots on a shorter
// screen: its compact rows (reprPane.compact) say the form, the order, the stability and
// the conversion's accuracy, which hiding the pane left nowhere on screen.
const reprStripRows = 5

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
		if len(m.jobs) > 0 {
			jobsH = min(B/3, 2+3*len(m.jobs))
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
			small := max(10, B*2/5)
			switch {
			case B >= narrowSplitRows && m.main == paneRepr:
				l.repr, l.plots = box{rightW, B - small}, box{rightW, small}
			case B >= narrowSplitRows:
				l.repr, l.plots = box{rightW, small}, box{rightW, B - small}
			case m.main == paneRepr:
				l.repr = box{rightW, B}
			default:
				strip := reprStripRows
				if B-strip < 10 { // the plots keep a few rows of curve: the strip drops its tabs
					strip--
				}
				l.repr, l.plots = box{rightW, strip}, box{rightW, B - strip}
			}
		}
	}
	m.lay = l
	inner := func(b box) (int, int) { return max(0, b.w-2), max(0, b.h-2) }
	for p, b := range l.boxes() {
		m.panes[p].setSize(inner(b))
	}
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
		msg := "ssmlab: window too small"
		if len(msg) > m.width {
			msg = "too small" // whole, where the other would be cut to "ssmlab: wind"
		}
		return fit(m.st.dim.Render(msg), m.width, m.height)
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
	if m.dialog != nil {
		// a dialog taller than the body is cut there, so that the status bar with its keys
		// stays on screen
		v := strings.Split(m.dialog.view(m, W, B), "\n")
		return lipgloss.Place(W, B, lipgloss.Center, lipgloss.Center, strings.Join(v[:min(len(v), max(B, 0))], "\n"))
	}
	l := m.lay
	var views [nPanes]string
	for p, b := range l.boxes() {
		if b.w > 0 && b.h > 0 {
			views[p] = m.frame(pane(p), b, m.panes[p].view(m.focus == pane(p)))
		}
	}
	list, jobs, repr, plots := views[paneList], views[paneJobs], views[paneRepr], views[panePlots]
	switch l.mode {
	case layoutTiny:
		return list + jobs + repr + plots
	case layoutWide:
		left := lipgloss.JoinVertical(lipgloss.Left, list, jobs)
		return lipgloss.JoinHorizontal(lipgloss.Top, left, repr, plots)
	case layoutMedium:
		left := lipgloss.JoinVertical(lipgloss.Left, list, jobs)
		right := lipgloss.JoinVertical(lipgloss.Left, repr, plots)
		return lipgloss.JoinHorizontal(lipgloss.Top, left, right)
	}
	left := lipgloss.JoinVertical(lipgloss.Left, list, jobs)
	right := repr // alone, on a short screen
	if plots != "" {
		right = lipgloss.JoinVertical(lipgloss.Left, repr, plots)
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, left, right)
}

// frame draws a pane's border with its title in the top edge; the focused pane has a thick
// border (visible without colour).
func (m *Model) frame(p pane, b box, content string) string {
	st := m.st
	if b.w < 4 || b.h < 3 {
		return blank(b.w, b.h)
	}
	style, border, titleStyle := st.pane, lipgloss.RoundedBorder(), st.title
	if p == m.focus {
		style, border, titleStyle = st.paneFocused, lipgloss.ThickBorder(), st.titleFocused
	}
	edge := lipgloss.NewStyle().Foreground(style.GetBorderTopForeground())
	title := " " + m.panes[p].title() + " "
	title = ansi.Truncate(title, max(0, b.w-4), "…")
	fill := max(0, b.w-3-lipgloss.Width(title))
	top := edge.Render(border.TopLeft+border.Top) + titleStyle.Render(title) + edge.Render(strings.Repeat(border.Top, fill)+border.TopRight)
	inner := lipgloss.NewStyle().Width(b.w - 2).Height(b.h - 2).MaxWidth(b.w - 2).MaxHeight(b.h - 2).Render(content)
	rest := style.Border(border, false, true, true, true).Render(inner)
	return top + "\n" + rest
}

func (m *Model) statusView() string {
	st := m.st
	W := m.width
	var right []string
	if s := m.jobsPane.summary(); s != "" {
		right = append(right, st.accent.Render(s))
	}
	if m.sess.Dirty() {
		if n := len(m.unsavedNames()); n > 0 {
			right = append(right, st.warn.Render(fmt.Sprintf("%d unsaved", n)))
		} else {
			right = append(right, st.warn.Render("unsaved"))
		}
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
	return ansi.Truncate(line1, W, "") + "\n" + ansi.Truncate(m.keyLine(), W, "…")
}

// keyLine is the status bar's second line: the keys of the open dialog, of a pane that holds
// the keyboard, or the focused pane's and the global ones.
func (m *Model) keyLine() string {
	p := m.panes[m.focus]
	switch {
	case m.dialog != nil:
		return m.st.keyHint.Render(m.dialog.hint())
	case p.hint() != "":
		return m.st.keyHint.Render(p.hint())
	}
	short, _ := helpOf(p.bindings())
	global, _ := helpOf(m.globalBindings())
	return m.help.ShortHelpView(append(short, global...))
}
