package tui

import "github.com/charmbracelet/lipgloss"

// styles holds every style the workbench draws with. Colours are adaptive (a light and a
// dark variant, chosen from the terminal's background); with NO_COLOR, or in tests that pin
// the Ascii profile, lipgloss drops them, so nothing may depend on colour alone: the
// focused pane has a thick border, the cursor row a "▸" and the selected pole a "⊗".
type styles struct {
	pane, paneFocused   lipgloss.Style // borders
	title, titleFocused lipgloss.Style
	dim, bold, accent   lipgloss.Style
	cursor              lipgloss.Style // the selected row or cell
	header              lipgloss.Style // table headers
	tab, tabActive      lipgloss.Style
	ok, warn, err       lipgloss.Style
	stable, unstable    lipgloss.Style
	keyHint             lipgloss.Style

	// plots
	axis, label                   lipgloss.Style
	series, overlay, circle, zero lipgloss.Style
	pole, poleSel                 lipgloss.Style

	modal lipgloss.Style
}

func newStyles() *styles {
	var (
		subtle  = lipgloss.AdaptiveColor{Light: "#9A9A9A", Dark: "#5C5C5C"}
		text    = lipgloss.AdaptiveColor{Light: "#1A1A1A", Dark: "#DDDDDD"}
		accent  = lipgloss.AdaptiveColor{Light: "#5A3FC0", Dark: "#A48CFF"}
		cyan    = lipgloss.AdaptiveColor{Light: "#006E8A", Dark: "#4FD6E8"}
		orange  = lipgloss.AdaptiveColor{Light: "#B35900", Dark: "#FFA94D"}
		green   = lipgloss.AdaptiveColor{Light: "#1E7B34", Dark: "#69DB7C"}
		yellow  = lipgloss.AdaptiveColor{Light: "#8A6D00", Dark: "#FFD43B"}
		red     = lipgloss.AdaptiveColor{Light: "#C0182B", Dark: "#FF6B6B"}
		selBg   = lipgloss.AdaptiveColor{Light: "#E4DDFF", Dark: "#3B2F73"}
		pink    = lipgloss.AdaptiveColor{Light: "#B0186E", Dark: "#F783AC"}
		grayTxt = lipgloss.AdaptiveColor{Light: "#6B6B6B", Dark: "#9A9A9A"}
	)
	s := &styles{}
	s.pane = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(subtle)
	s.paneFocused = lipgloss.NewStyle().Border(lipgloss.ThickBorder()).BorderForeground(accent)
	s.title = lipgloss.NewStyle().Foreground(grayTxt).Bold(true)
	s.titleFocused = lipgloss.NewStyle().Foreground(accent).Bold(true)
	s.dim = lipgloss.NewStyle().Foreground(grayTxt)
	s.bold = lipgloss.NewStyle().Foreground(text).Bold(true)
	s.accent = lipgloss.NewStyle().Foreground(accent)
	s.cursor = lipgloss.NewStyle().Background(selBg).Foreground(text).Bold(true)
	s.header = lipgloss.NewStyle().Foreground(grayTxt).Bold(true)
	s.tab = lipgloss.NewStyle().Foreground(grayTxt)
	s.tabActive = lipgloss.NewStyle().Foreground(accent).Bold(true).Underline(true)
	s.ok = lipgloss.NewStyle().Foreground(green)
	s.warn = lipgloss.NewStyle().Foreground(yellow)
	s.err = lipgloss.NewStyle().Foreground(red).Bold(true)
	s.stable = lipgloss.NewStyle().Foreground(green)
	s.unstable = lipgloss.NewStyle().Foreground(red).Bold(true)
	s.keyHint = lipgloss.NewStyle().Foreground(grayTxt)
	s.axis = lipgloss.NewStyle().Foreground(subtle)
	s.label = lipgloss.NewStyle().Foreground(grayTxt)
	s.series = lipgloss.NewStyle().Foreground(cyan)
	s.overlay = lipgloss.NewStyle().Foreground(orange)
	s.circle = lipgloss.NewStyle().Foreground(subtle)
	s.zero = lipgloss.NewStyle().Foreground(green)
	s.pole = lipgloss.NewStyle().Foreground(pink).Bold(true)
	s.poleSel = lipgloss.NewStyle().Foreground(yellow).Bold(true).Reverse(true)
	s.modal = lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).BorderForeground(accent).Padding(0, 1)
	return s
}

// level returns the style and the mark of a status message of level l.
func (s *styles) level(l level) (lipgloss.Style, string) {
	switch l {
	case levelOK:
		return s.ok, "✓ "
	case levelWarn:
		return s.warn, "⚠ "
	case levelError:
		return s.err, "✗ "
	}
	return s.dim, ""
}

// cursorMark is the mark of a list's cursor row: "▸" in a focused pane, "›" in another.
func (s *styles) cursorMark(selected, focused bool) string {
	switch {
	case !selected:
		return "  "
	case focused:
		return s.accent.Render("▸ ")
	}
	return "› "
}
