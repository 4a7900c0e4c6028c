package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// palette is the command palette: a line to type a command into, and the commands that
// match it.
type palette struct {
	input textinput.Model
	sel   int
}

func newPalette() *palette { return &palette{input: newInput("")} }

// matches returns the commands whose name starts with (or else contains) the first word typed.
func matches(text string) []command {
	word := strings.ToLower(strings.TrimSpace(text))
	if i := strings.IndexByte(word, ' '); i >= 0 {
		word = word[:i]
	}
	var pre, sub []command
	for _, c := range commands() {
		switch {
		case strings.HasPrefix(c.name, word):
			pre = append(pre, c)
		case strings.Contains(c.name, word):
			sub = append(sub, c)
		}
	}
	return append(pre, sub...)
}

// isCommand reports whether the first word of text names a command exactly.
func isCommand(text string) bool {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return false
	}
	for _, c := range commands() {
		if c.name == strings.ToLower(fields[0]) {
			return true
		}
	}
	return false
}

func (p *palette) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	ms := matches(p.input.Value())
	switch msg.String() {
	case "esc":
		m.closeDialog()
		return nil
	case "up", "ctrl+p":
		p.sel = max(0, p.sel-1)
		return nil
	case "down", "ctrl+n":
		p.sel = max(0, min(len(ms)-1, p.sel+1))
		return nil
	case "tab":
		if p.sel < len(ms) {
			p.input.SetValue(ms[p.sel].name + " ")
			p.input.CursorEnd()
		}
		return nil
	case "enter":
		return p.run(m, ms)
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	if n := len(matches(p.input.Value())); p.sel >= n {
		p.sel = max(0, n-1)
	}
	return cmd
}

// run runs the line typed, or else the command chosen: at once when it takes no argument
// or only optional ones, otherwise by completing its name for the arguments.
func (p *palette) run(m *Model, ms []command) tea.Cmd {
	text := strings.TrimSpace(p.input.Value())
	if !isCommand(text) && p.sel < len(ms) {
		c := ms[p.sel]
		// the words after the name typed are the chosen command's (they were dropped)
		_, rest, _ := strings.Cut(text, " ")
		if rest = strings.TrimSpace(rest); rest == "" && !strings.HasPrefix(c.args, "[") && c.args != "" {
			p.input.SetValue(c.name + " ")
			p.input.CursorEnd()
			m.setStatus(levelInfo, fmt.Sprintf("%s needs %s", c.name, c.args))
			return nil
		}
		text = strings.TrimSpace(c.name + " " + rest)
	}
	m.closeDialog()
	// the status line speaks for this command: one that says nothing (view, log) must not
	// leave an earlier command's error standing as if it were its own
	m.setStatus(levelInfo, "")
	cmd, err := m.runLine(text)
	if err != nil {
		m.setStatus(levelError, err.Error())
	}
	return cmd
}

// runLine parses and runs one palette line.
func (m *Model) runLine(line string) (tea.Cmd, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, nil
	}
	name := strings.ToLower(fields[0])
	run := func(c command) (tea.Cmd, error) {
		if err := c.check(fields[1:]); err != nil {
			return nil, err
		}
		return c.run(m, fields[1:])
	}
	for _, c := range commands() {
		if c.name == name {
			return run(c)
		}
	}
	if ms := matches(name); len(ms) == 1 {
		return run(ms[0])
	}
	return nil, fmt.Errorf("unknown command %q (: lists them)", name)
}

func (p *palette) hint() string { return "type a command · enter runs · tab completes · esc closes" }

func (p *palette) view(m *Model, W, h int) string {
	st := m.st
	inner := max(20, min(W-2, 76)-4)
	ms := matches(p.input.Value())
	lines := []string{st.accent.Render(": ") + p.input.View(), ""}
	rows := max(1, h-8)
	first := max(0, p.sel-rows+1)
	for i := first; i < len(ms) && i < first+rows; i++ {
		c := ms[i]
		mark := st.cursorMark(i == p.sel, true)
		name := c.name
		if i == p.sel {
			name = st.bold.Render(name)
		}
		line := mark + name + " " + st.dim.Render(c.args) + "  " + st.dim.Render("— "+c.help)
		// one line each, inside the modal's padding (a wrapped entry pushed the list's end
		// and the keys off the screen)
		lines = append(lines, ansi.Truncate(line, inner-st.modal.GetHorizontalPadding(), "…"))
	}
	if len(ms) == 0 {
		lines = append(lines, st.dim.Render("no command matches"))
	}
	lines = append(lines, "", st.dim.Render("enter run · tab complete · ↑↓ choose · esc close"))
	return st.modal.Width(inner).Render(lipgloss.JoinVertical(lipgloss.Left, lines...))
}
