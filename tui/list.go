package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/filters"
)

// listModel is the filters list: one line per entry (name, form, order, stability) and a
// detail line for the selected one. The selection itself belongs to the session.
type listModel struct {
	c             *common
	width, height int
	top           int
}

func newList(c *common) listModel { return listModel{c: c} }

func (l *listModel) setSize(w, h int) { l.width, l.height = w, h }

// stability is an entry's mark: "✓" stable, "✗" unstable, "·" not known yet.
func stability(st *styles, e *entry) string {
	rho, ok := entryRho(e)
	switch {
	case !ok:
		return st.dim.Render("·")
	case filters.Stable(rho):
		return st.stable.Render("✓")
	}
	return st.unstable.Render("✗")
}

// entryRho returns the spectral radius behind the list's mark: the worst channel of a bank,
// the shown filter's otherwise.
func entryRho(e *entry) (float64, bool) {
	switch e.kind {
	case kindKernel:
		return 0, false
	case kindBank:
		if e.bankRho >= 0 {
			return e.bankRho, true
		}
		return 0, false
	}
	if e.pz != nil && e.pz.havePoles && e.pz.key.rev == e.rev {
		return radius(e.pz.poles), true
	}
	return 0, false
}

func (l *listModel) view(s *session, overlayID int, focused bool) string {
	st := l.c.st
	w, h := l.width, l.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if len(s.entries) == 0 {
		return placeText(w, h, st.dim.Render(wrap("no filters yet\n\na: add a preset\no: open a file", w-2)))
	}
	detail := 2
	rows := max(1, h-detail)
	if s.sel < l.top {
		l.top = s.sel
	}
	if s.sel >= l.top+rows {
		l.top = s.sel - rows + 1
	}
	l.top = max(0, min(l.top, len(s.entries)-rows))
	var lines []string
	for i := l.top; i < len(s.entries) && len(lines) < rows; i++ {
		e := s.entries[i]
		mark := "  "
		if i == s.sel {
			if focused {
				mark = st.accent.Render("▸ ")
			} else {
				mark = "› "
			}
		}
		dirty := " "
		if e.dirty && e.kind != kindKernel {
			dirty = st.warn.Render("•")
		}
		ov := ""
		if e.id == overlayID {
			ov = st.overlay.Render(" ◆")
		}
		form := e.form()
		if e.kind == kindBank {
			form = fmt.Sprintf("%d×%s", e.channels(), form)
		}
		right := fmt.Sprintf("%s %d %s", form, e.order(), stability(st, e))
		name := e.name
		nameW := w - 2 - 1 - lipgloss.Width(right) - 1 - lipgloss.Width(ov)
		name = ansi.Truncate(name, max(1, nameW), "…")
		pad := max(1, w-2-1-lipgloss.Width(name)-lipgloss.Width(ov)-lipgloss.Width(right))
		line := mark + dirty + name + ov + strings.Repeat(" ", pad) + st.dim.Render(right)
		if i == s.sel {
			line = mark + dirty + st.bold.Render(name) + ov + strings.Repeat(" ", pad) + right
		}
		lines = append(lines, ansi.Truncate(line, w, ""))
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	if e := s.selected(); e != nil {
		d := e.origin
		if e.kind != kindFilter {
			d = fmt.Sprintf("ch %d/%d · %s", e.ch+1, e.channels(), d)
		}
		lines = append(lines, st.dim.Render(strings.Repeat("─", w)))
		lines = append(lines, ansi.Truncate(st.dim.Render(d), w, "…"))
	}
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
}

// radius returns max |p| (0 for none).
func radius(poles []complex128) float64 {
	r := 0.0
	for _, p := range poles {
		r = math.Max(r, cmplx.Abs(p))
	}
	return r
}
