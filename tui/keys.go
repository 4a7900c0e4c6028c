package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// keyMap holds every binding. Pane keys are only live while that pane has the focus; the
// global ones work everywhere outside a dialog. Each component says which of them it handles
// (its bindings), so that its help is what it does.
type keyMap struct {
	// global
	Quit, Help, Palette, Messages, NextPane, PrevPane, Distill, Undo, SaveSession key.Binding
	// shared movement
	Up, Down, Left, Right, PageUp, PageDown, Top, Bottom key.Binding
	// filters list
	Add, Open, Save, Duplicate, Rename, Delete, Pin, PrevChan, NextChan, Enter key.Binding
	// representation
	PrevTab, NextTab, Tabs, Edit, Commit key.Binding
	// plots
	TogglePlot, Scale, Overlay, Shorter, Longer, NextPole, PrevPole, Finer, Coarser, PoleMove, More key.Binding
	// jobs
	NewJob, Cancel, Show key.Binding
}

func newKeyMap() *keyMap {
	b := key.NewBinding
	k := &keyMap{
		Quit:        b(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:        b(key.WithKeys("?"), key.WithHelp("?", "help")),
		Palette:     b(key.WithKeys(":"), key.WithHelp(":", "commands")),
		Messages:    b(key.WithKeys("M"), key.WithHelp("M", "messages")),
		NextPane:    b(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:    b(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev pane")),
		Distill:     b(key.WithKeys("D"), key.WithHelp("D", "distill")),
		Undo:        b(key.WithKeys("u"), key.WithHelp("u", "undo")),
		SaveSession: b(key.WithKeys("ctrl+s"), key.WithHelp("^s", "save session")),

		Up:       b(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     b(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:     b(key.WithKeys("left", "h"), key.WithHelp("←/h", "left")),
		Right:    b(key.WithKeys("right", "l"), key.WithHelp("→/l", "right")),
		PageUp:   b(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: b(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      b(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:   b(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),

		Add:       b(key.WithKeys("a"), key.WithHelp("a", "add preset")),
		Open:      b(key.WithKeys("o"), key.WithHelp("o", "open file")),
		Save:      b(key.WithKeys("w"), key.WithHelp("w", "save filter")),
		Duplicate: b(key.WithKeys("y"), key.WithHelp("y", "duplicate")),
		Rename:    b(key.WithKeys("r"), key.WithHelp("r", "rename")),
		Delete:    b(key.WithKeys("x", "delete"), key.WithHelp("x", "delete")),
		Pin:       b(key.WithKeys("v"), key.WithHelp("v", "pin as overlay")),
		PrevChan:  b(key.WithKeys("["), key.WithHelp("[", "prev channel")),
		NextChan:  b(key.WithKeys("]"), key.WithHelp("]", "next channel")),
		Enter:     b(key.WithKeys("enter"), key.WithHelp("enter", "open")),

		PrevTab: b(key.WithKeys("["), key.WithHelp("[", "prev form")),
		NextTab: b(key.WithKeys("]"), key.WithHelp("]", "next form")),
		Tabs:    b(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1-6", "form tab")),
		Edit:    b(key.WithKeys("enter", "e"), key.WithHelp("enter", "edit value")),
		Commit:  b(key.WithKeys("c"), key.WithHelp("c", "convert to this form")),

		TogglePlot: b(key.WithKeys("1", "2", "3", "4", "5"), key.WithHelp("1-5", "toggle plot")),
		Scale:      b(key.WithKeys("s"), key.WithHelp("s", "lin/log impulse")),
		Overlay:    b(key.WithKeys("o"), key.WithHelp("o", "overlay on/off")),
		Shorter:    b(key.WithKeys("<"), key.WithHelp("<", "halve L")),
		Longer:     b(key.WithKeys(">"), key.WithHelp(">", "double L")),
		NextPole:   b(key.WithKeys("n"), key.WithHelp("n", "next pole")),
		PrevPole:   b(key.WithKeys("N"), key.WithHelp("N", "prev pole")),
		Finer:      b(key.WithKeys("-"), key.WithHelp("-", "finer step")),
		Coarser:    b(key.WithKeys("+", "="), key.WithHelp("+", "coarser step")),
		PoleMove:   b(key.WithKeys("up", "down", "left", "right", "h", "j", "k", "l"), key.WithHelp("←→↑↓", "move pole (angle, radius)")),
		More:       b(key.WithKeys("p"), key.WithHelp("p", "more plots")),

		NewJob: b(key.WithKeys("n"), key.WithHelp("n", "new job")),
		Cancel: b(key.WithKeys("x"), key.WithHelp("x", "cancel job")),
		Show:   b(key.WithKeys("enter"), key.WithHelp("enter", "show result")),
	}
	return k
}

// binding is one key a component handles (lazygit's controllers): the keys and their help,
// what they do, and where the help shows them.
type binding struct {
	key key.Binding
	run func(tea.KeyMsg) tea.Cmd
	// short puts the key in the status bar's one-line help; hidden leaves it out of the
	// help altogether (a second key for a move the help already names).
	short, hidden bool
}

// dispatch runs the first of bs that matches msg; false when none does.
func dispatch(bs []binding, msg tea.KeyMsg) (tea.Cmd, bool) {
	for _, b := range bs {
		if key.Matches(msg, b.key) {
			return b.run(msg), true
		}
	}
	return nil, false
}

// helpOf returns the help of bindings: the short ones, and all but the hidden ones.
func helpOf(bs []binding) (short, full []key.Binding) {
	for _, b := range bs {
		if b.short {
			short = append(short, b.key)
		}
		if !b.hidden {
			full = append(full, b.key)
		}
	}
	return short, full
}
