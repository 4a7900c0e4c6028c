package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/filters"
)

// render draws d in the pane's block.
func (r *reprPane) render(d reprData, focused bool) string {
	st := r.m.st
	w, h := r.width, r.height
	r.shown.total = 0
	if w <= 0 || h <= 0 {
		return ""
	}
	if d.message != "" {
		return placeText(w, h, st.dim.Render(d.message))
	}
	line := r.tabsLine(d)
	if h <= reprStripRows-2 {
		return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(strings.Join(r.compact(d, line, h), "\n"))
	}
	var head []string
	head = append(head, line)
	head = append(head, ansi.Truncate(st.dim.Render(d.info), w, "…"))
	// the conversion report
	switch {
	case d.view != nil && d.view.pending:
		head = append(head, st.dim.Render(fmt.Sprintf("converting %s → %s…", d.native, r.tab)))
	case d.view != nil && d.view.err != nil:
		head = append(head, wrapLines(st.err, "✗ "+d.view.err.Error(), w, 3)...)
	case d.view != nil:
		head = append(head, reportLines(st, d.view.rep, w)...)
		head = append(head, st.dim.Render(fmt.Sprintf("viewing a conversion: c makes %s %s", d.name, r.tab)))
	case d.last != nil:
		head = append(head, reportLines(st, *d.last, w)...)
	}
	editLines := 0
	if r.editing {
		editLines = 1
	}
	avail := h - len(head) - editLines
	body := r.tablesView(d, w, avail, focused)
	lines := append(head, body...)
	if r.editing {
		lines = append(lines, ansi.Truncate(st.accent.Render("edit "+r.editLabel+" = ")+r.input.View(), w, "…"))
	}
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
}

// compact is the pane in h rows of a strip (reprStripRows): the form shown, with the order
// and the stability; the accuracy of the conversion viewed, or of the one that made the
// filter; then its first warning, or the tabs.
func (r *reprPane) compact(d reprData, tabs string, h int) []string {
	st, w := r.m.st, r.width
	info := d.info
	if d.view != nil {
		info = fmt.Sprintf("%s view of %s", r.tab, info)
	}
	lines := []string{ansi.Truncate(st.dim.Render(info), w, "…")}
	var rep *filters.Report
	switch {
	case d.view != nil && d.view.pending:
		lines = append(lines, st.dim.Render(fmt.Sprintf("converting %s → %s…", d.native, r.tab)))
	case d.view != nil && d.view.err != nil:
		lines = append(lines, ansi.Truncate(st.err.Render("✗ "+oneLine(d.view.err)), w, "…"))
	case d.view != nil:
		rep = &d.view.rep
	case d.last != nil:
		rep = d.last
	}
	if rep != nil {
		lines = append(lines, ansi.Truncate(reportLine(st, *rep), w, "…"))
		if len(rep.Warnings) > 0 {
			lines = append(lines, ansi.Truncate(st.warn.Render("⚠ "+rep.Warnings[0]), w, "…"))
		}
	}
	lines = append(lines, tabs)
	return lines[:min(len(lines), h)]
}

// tabsLine is the forms' tabs, the native one starred and the shown one bracketed: full
// names when they fit, short ones otherwise; a kernel's one tab.
func (r *reprPane) tabsLine(d reprData) string {
	st, w := r.m.st, r.width
	// tabs: full names when they fit, short ones otherwise
	shownForm := d.native
	if r.tab != "" {
		shownForm = r.tab
	}
	short := map[filters.Form]string{filters.FormDiagonal: "diag", filters.FormCompanion: "comp", filters.FormRotation: "rot"}
	var line string
	for _, compact := range []bool{false, true} {
		var tabs []string
		for i, f := range filters.Forms {
			name := string(f)
			if s, ok := short[f]; ok && compact {
				name = s
			}
			label := fmt.Sprintf("%d %s", i+1, name)
			if f == d.native {
				label += "*"
			}
			if f == shownForm {
				tabs = append(tabs, st.tabActive.Render("["+label+"]"))
			} else {
				tabs = append(tabs, st.tab.Render(" "+label+" "))
			}
		}
		line = strings.Join(tabs, "")
		if lipgloss.Width(line) <= w {
			break
		}
	}
	if d.kernel != nil {
		line = st.tabActive.Render("[kernel]")
	}
	return ansi.Truncate(line, w, "…")
}

// reportLine is a conversion report's error and condition, in a line to wrap or cut.
func reportLine(st *styles, rep filters.Report) string {
	errStyle := st.ok
	if rep.RelError > filters.MaxRelError {
		errStyle = st.warn
	}
	condStyle := st.ok
	if rep.Condition > filters.WarnCondition {
		condStyle = st.warn
	}
	line := fmt.Sprintf("%s → %s: rel error %s (%d samples)", rep.From, rep.To, errStyle.Render(filters.RelErrorText(rep.RelError)), rep.Length)
	if rep.Conditioned { // a conversion without a step that loses digits has no condition to give
		line += ", condition " + condStyle.Render(sci(rep.Condition))
	}
	return line
}

// reportLines describes a conversion report: the error and condition, then each warning.
func reportLines(st *styles, rep filters.Report, w int) []string {
	out := strings.Split(lipgloss.NewStyle().Width(max(8, w)).Render(reportLine(st, rep)), "\n")
	if len(out) > 2 {
		out = out[:2]
	}
	for i := range out {
		out[i] = strings.TrimRight(out[i], " ")
	}
	if rep.ConditionOf != "" && rep.Conditioned {
		out = append(out, wrapLines(st.dim, "condition of "+rep.ConditionOf, w, 2)...)
	}
	for _, warn := range rep.Warnings {
		out = append(out, wrapLines(st.warn, "⚠ "+warn, w, 2)...)
	}
	return out
}

// wrapLines wraps text in style to width, keeping at most n lines (n ≤ 0: every line), the
// last of a cut text ending in "…".
func wrapLines(s lipgloss.Style, text string, w, n int) []string {
	lines := strings.Split(lipgloss.NewStyle().Width(max(8, w)).Render(text), "\n")
	if n > 0 && len(lines) > n {
		lines = lines[:n]
		lines[n-1] = ansi.Truncate(lines[n-1], w-1, "") + "…"
	}
	for i := range lines {
		lines[i] = s.Render(strings.TrimRight(lines[i], " "))
	}
	return lines
}

// tablesView renders the tables in h lines, scrolled so that the cursor is visible. Only the
// visible rows' cells are formatted.
func (r *reprPane) tablesView(d reprData, w, h int, focused bool) []string {
	st := r.m.st
	if h <= 0 {
		return nil
	}
	ts := d.tables()
	// line layout: per table an optional title, a header, then its rows
	type line struct {
		t, row  int // row -1: title, -2: header
		dataRow int
	}
	var lines []line
	cursorLine := 0
	g := 0
	for t, tb := range ts {
		if tb.title != "" {
			lines = append(lines, line{t: t, row: -1})
		}
		lines = append(lines, line{t: t, row: -2})
		for i := range tb.rows {
			if g == r.row {
				cursorLine = len(lines)
			}
			lines = append(lines, line{t: t, row: i, dataRow: g})
			g++
		}
	}
	if cursorLine < r.top {
		r.top = cursorLine
	}
	if cursorLine >= r.top+h {
		r.top = cursorLine - h + 1
	}
	// keep the cursor's table header in view when scrolling up to its first rows
	r.top = max(0, min(r.top, len(lines)-h))
	end := min(len(lines), r.top+h)
	vis := lines[r.top:end]
	r.shown.first, r.shown.last, r.shown.total = 0, -1, totalRows(ts)
	for _, ln := range vis {
		if ln.row >= 0 {
			if r.shown.last < 0 {
				r.shown.first = ln.dataRow
			}
			r.shown.last = ln.dataRow
		}
	}

	// column widths per table, from the visible rows only
	widths := make([][]int, len(ts))
	for t, tb := range ts {
		widths[t] = make([]int, len(tb.cols))
		for c, name := range tb.cols {
			widths[t][c] = lipgloss.Width(name)
		}
	}
	cells := make([][]string, len(vis))
	for i, ln := range vis {
		if ln.row < 0 {
			continue
		}
		tb := ts[ln.t]
		cells[i] = make([]string, len(tb.cols))
		for c := range tb.cols {
			s, _ := tb.cell(ln.row, c)
			cells[i][c] = s
			widths[ln.t][c] = max(widths[ln.t][c], lipgloss.Width(s))
		}
	}
	// horizontal scroll: column 0 stays, columns from left on fill the width
	ct, _, _ := rowAt(ts, r.row)
	if len(ts) > 0 {
		wt := widths[ct]
		if r.col < r.left+1 {
			r.left = max(0, r.col-1)
		}
		for r.left < r.col-1 {
			used := 2 + wt[0]
			for c := r.left + 1; c <= r.col; c++ {
				used += 2 + wt[c]
			}
			if used <= w {
				break
			}
			r.left++
		}
	}
	out := make([]string, 0, h)
	for i, ln := range vis {
		tb := ts[ln.t]
		wt := widths[ln.t]
		left := min(r.left, max(0, len(tb.cols)-2))
		switch ln.row {
		case -1:
			out = append(out, ansi.Truncate(st.accent.Render(tb.title), w, "…"))
			continue
		case -2:
			var b strings.Builder
			b.WriteString("  ")
			b.WriteString(padLeft(tb.cols[0], wt[0]))
			if left > 0 {
				b.WriteString(" ‹")
			}
			for c := left + 1; c < len(tb.cols); c++ {
				b.WriteString("  ")
				b.WriteString(padLeft(tb.cols[c], wt[c]))
			}
			out = append(out, st.header.Render(ansi.Truncate(b.String(), w, "›")))
			continue
		}
		isCursor := ln.dataRow == r.row
		var b strings.Builder
		b.WriteString(st.cursorMark(isCursor, focused))
		b.WriteString(st.dim.Render(padLeft(cells[i][0], wt[0])))
		if left > 0 {
			b.WriteString("  ")
		}
		for c := left + 1; c < len(tb.cols); c++ {
			b.WriteString("  ")
			s := padLeft(cells[i][c], wt[c])
			if isCursor && c == r.col {
				s = st.cursor.Render(s)
			}
			b.WriteString(s)
		}
		out = append(out, ansi.Truncate(b.String(), w, "›"))
	}
	return out
}

func padLeft(s string, w int) string {
	if d := w - lipgloss.Width(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}
