package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// dialog is a component that takes the keyboard while it is open: the help, the command
// palette, prompts, confirmations, the preset picker, the distillation form, the message log
// and the offer to recover unsaved work. It acts on the workbench through the root, closes
// itself with closeDialog, and says its keys on the status bar.
type dialog interface {
	update(m *Model, msg tea.KeyMsg) tea.Cmd
	view(m *Model, w, h int) string
	hint() string
}

// ctrlCHandler is a dialog that gives ctrl+c a meaning of its own; in the others ctrl+c
// closes the dialog and asks to quit.
type ctrlCHandler interface{ handlesCtrlC() bool }

// newInput returns a text input with a steady cursor (no blink timer, so tests and golden
// files are deterministic).
func newInput(value string) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.SetValue(value)
	in.CursorEnd()
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Focus()
	return in
}

// modalBox renders a dialog: a titled box w columns wide. Body lines longer than the box are
// cut, not wrapped (callers wrap paragraphs with wrap first).
func modalBox(st *styles, title, body string, w int) string {
	contentW := max(16, w-4)
	lines := strings.Split(body, "\n")
	for i := range lines {
		lines[i] = ansi.Truncate(lines[i], contentW, "…")
	}
	return st.modal.Width(contentW + 2).Render(st.titleFocused.Render(title) + "\n\n" + strings.Join(lines, "\n"))
}

// prompt asks for one line of text; submit acts on it.
type prompt struct {
	title, body string
	input       textinput.Model
	// preset is the preset whose parameters are asked for, whose help lines the body
	// holds ("" for other prompts).
	preset string
	submit func(m *Model, text string) tea.Cmd
}

func newPrompt(title, body, value string, submit func(m *Model, text string) tea.Cmd) *prompt {
	return &prompt{title: title, body: body, input: newInput(value), submit: submit}
}

func (p *prompt) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.closeDialog()
		if p.preset != "" {
			// As the distill form: a refused preset's error would stay up after esc.
			m.setStatus(levelInfo, "no preset added")
		}
		return nil
	case "enter":
		m.closeDialog()
		return p.submit(m, strings.TrimSpace(p.input.Value()))
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return cmd
}

func (p *prompt) view(m *Model, w, _ int) string {
	st := m.st
	w = min(w-2, 76)
	body := p.body + "\n" + st.accent.Render("> ") + p.input.View()
	if p.preset != "" {
		// Each parameter's help whole, wrapped as the distill form's (cut to a line, the
		// refusals it warns of lost their ends), styled line by line: a styled block pads
		// every line to the longest.
		var lines []string
		for _, l := range strings.Split(p.body, "\n") {
			lines = append(lines, wrapLines(st.dim, l, w-4, 0)...)
		}
		body = strings.Join(lines, "\n") + "\n\n" + st.accent.Render("> ") + p.input.View()
	}
	return modalBox(st, p.title, body, w)
}

func (p *prompt) hint() string { return "enter confirms · esc cancels" }

// question is a dialog answered with a key (a confirmation, the offer to recover unsaved
// work). Many open by themselves, when a result comes back (an export over a file that
// exists, a save over a changed one), so keys meant for something else may reach one:
//
//   - it takes only the keys it names, and esc; any other key is dropped, neither closing
//     it nor reaching the panes behind it;
//   - a key that arrived with others, in one read of the terminal (typed ahead while the
//     workbench was busy, pasted, sent by a script: a burst, Model.burst), answers no
//     question: it was on its way before the question could be seen, even one that the
//     burst's own first key asked. A key typed alone after the question appeared cannot be
//     told, without a clock, from one typed just before it; for that, an answer that loses
//     work is y (an overwrite, a discarded autosave), never a letter of the commands or
//     paths likely to be typed next (o, which answered "overwrite?" from the o of
//     ":export"), nor a key that does it alone (d, which discarded an autosave offered back,
//     and the session's changes at the quit question: d asks again, askDiscard).
type question interface {
	dialog
	question()
}

func (*confirm) question()       {}
func (*recoverDialog) question() {}

// confirm asks a question answered with a key; esc (and any key no choice names) keeps it
// open or, for esc, closes it.
type confirm struct {
	title, body string
	choices     []choice
	// cancel is what esc does besides closing (nil: nothing).
	cancel func(m *Model)
}

// choice is one answer: its keys and what it does (the dialog is closed first).
type choice struct {
	keys []string
	run  func(m *Model) tea.Cmd
}

func (c *confirm) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	s := msg.String()
	for _, ch := range c.choices {
		if slices.Contains(ch.keys, s) {
			m.closeDialog()
			return ch.run(m)
		}
	}
	if s == "esc" {
		m.closeDialog()
		if c.cancel != nil {
			c.cancel(m)
		}
	}
	return nil
}

func (c *confirm) handlesCtrlC() bool {
	return slices.ContainsFunc(c.choices, func(ch choice) bool { return slices.Contains(ch.keys, "ctrl+c") })
}

func (c *confirm) view(m *Model, w, h int) string {
	w = min(w-2, 76)
	v := strings.Split(modalBox(m.st, c.title, wrap(c.body, w-4), w), "\n")
	// Taller than the screen, the question gives way in its middle: its title and its end,
	// where the keys are, stay (the root cuts a dialog's end, which cut them off).
	if len(v) > h && h >= 4 {
		v = append(v[:2:2], v[len(v)-(h-2):]...)
	}
	return strings.Join(v, "\n")
}

// hint names the keys that answer (each choice's first), so that a screen too small for the
// question still shows them.
func (c *confirm) hint() string {
	var ks []string
	for _, ch := range c.choices {
		if k := ch.keys[0]; k != "ctrl+c" {
			ks = append(ks, k)
		}
	}
	return "answer " + strings.Join(ks, ", ") + " · esc cancels"
}
