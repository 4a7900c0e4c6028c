package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// picker is the preset picker: the presets, narrowed to those whose name or description
// holds what was typed; enter asks for the chosen one's parameters.
type picker struct {
	presets []PresetInfo
	filter  string // typed: only presets whose name or description holds it, ignoring case
	sel     int    // index into shown
}

// shown is the picker's list, in the registry's order.
func (p *picker) shown() []PresetInfo {
	if p.filter == "" {
		return p.presets
	}
	f := strings.ToLower(p.filter)
	var shown []PresetInfo
	for _, x := range p.presets {
		if strings.Contains(strings.ToLower(x.Name), f) || strings.Contains(strings.ToLower(x.Description), f) {
			shown = append(shown, x)
		}
	}
	return shown
}

func (p *picker) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	shown := p.shown()
	if sel, ok := moveInList(msg.String(), p.sel, len(shown)); ok {
		p.sel = sel
		return nil
	}
	switch msg.String() {
	case "esc":
		if p.filter != "" {
			p.filter, p.sel = "", 0
			return nil
		}
		m.closeDialog()
	case "backspace":
		if r := []rune(p.filter); len(r) > 0 {
			p.filter, p.sel = string(r[:len(r)-1]), 0
		}
	case "enter":
		if len(shown) > 0 {
			m.askPresetParams(shown[p.sel], "")
		}
	default:
		if msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace {
			p.filter, p.sel = p.filter+string(msg.Runes), 0
		}
	}
	return nil
}

func (p *picker) view(m *Model, W, B int) string {
	st := m.st
	w := min(W-2, 76)
	lines := []string{st.dim.Render("type to filter")}
	if p.filter != "" {
		lines[0] = st.accent.Render("/ ") + p.filter
	}
	lines = append(lines, "")
	shown := p.shown()
	if len(shown) == 0 {
		lines = append(lines, st.dim.Render(fmt.Sprintf("no preset matches %q (backspace or esc clears the filter)", p.filter)))
	}
	rows := max(3, B-10)
	first := max(0, p.sel-rows+1)
	nameW := 0
	for _, x := range p.presets {
		nameW = max(nameW, len(x.Name))
	}
	for i := first; i < len(shown) && i < first+rows; i++ {
		x := shown[i]
		mark := st.cursorMark(i == p.sel, true)
		name := fmt.Sprintf("%-*s", nameW, x.Name)
		if i == p.sel {
			name = st.bold.Render(name)
		}
		lines = append(lines, ansi.Truncate(mark+name+" "+st.dim.Render(x.Description), w-4, "…"))
	}
	return modalBox(st, "add a preset", strings.Join(lines, "\n"), w)
}

func (p *picker) hint() string {
	return "type to filter · ↑↓ choose · enter set parameters · esc cancels"
}

// moveInList is the cursor's move in a dialog's list of n rows for key (↑↓, ctrl+p/n, page
// up and down, home, end); false when key is no move.
func moveInList(key string, sel, n int) (int, bool) {
	last := max(0, n-1)
	switch key {
	case "up", "ctrl+p":
		return max(0, sel-1), true
	case "down", "ctrl+n":
		return min(last, sel+1), true
	case "pgup":
		return max(0, sel-10), true
	case "pgdown":
		return min(last, sel+10), true
	case "home":
		return 0, true
	case "end":
		return last, true
	}
	return sel, false
}
