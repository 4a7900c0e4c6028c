package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// layerPicker offers the layers of a checkpoint opened with o or :open (those ssmlab import
// --list prints); enter imports the one chosen, as ssmlab import --layout L --tensor PREFIX.
type layerPicker struct {
	path   string
	layers []LayerChoice
	sel    int
}

func (p *layerPicker) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	key := msg.String()
	if k, ok := map[string]string{"k": "up", "j": "down", "g": "home", "G": "end"}[key]; ok {
		key = k // nothing is typed here: the list keys work too
	}
	if sel, ok := moveInList(key, p.sel, len(p.layers)); ok {
		p.sel = sel
		return nil
	}
	switch key {
	case "esc", "q":
		m.closeDialog()
		m.setStatus(levelInfo, "no layer imported from "+p.path)
	case "enter":
		m.closeDialog()
		c := p.layers[p.sel]
		m.setStatus(levelInfo, fmt.Sprintf("importing the %s layer %s of %s…", c.Layout, c.Prefix, p.path))
		return openLayer(m.deps.Store, p.path, c)
	}
	return nil
}

func (p *layerPicker) view(m *Model, w, h int) string {
	st := m.st
	w = min(w-2, 96)
	rows := max(3, min(len(p.layers), h-8))
	top := min(max(0, p.sel-rows+1), max(0, len(p.layers)-rows))
	lines := []string{st.dim.Render(fmt.Sprintf("%d layers (as ssmlab import --list finds them); enter imports one", len(p.layers)))}
	for i := top; i < len(p.layers) && i < top+rows; i++ {
		line := st.cursorMark(i == p.sel, true) + p.layers[i].Label
		lines = append(lines, ansi.Truncate(line, w-4, "…"))
	}
	return modalBox(st, "open a layer of "+p.path, strings.Join(lines, "\n"), w)
}

func (p *layerPicker) hint() string { return "↑↓ choose · enter imports the layer · esc cancels" }
