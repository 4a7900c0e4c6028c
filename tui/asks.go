package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/sessions"
)

// The dialogs the panes and commands open to ask for what an action needs.

func (m *Model) openPresets() {
	m.openDialog(&picker{presets: m.deps.Presets.Presets()})
}

// askPresetParams asks for a preset's parameters, filled in with their defaults, or with
// value when the user is asked again after a mistake (so that what was typed is not lost).
func (m *Model) askPresetParams(p PresetInfo, value string) {
	var parts, helps []string
	for _, q := range p.Params {
		if q.Default != "" {
			parts = append(parts, q.Name+"="+q.Default)
		}
		helps = append(helps, q.Name+": "+q.Help)
	}
	if value == "" {
		value = strings.Join(parts, " ")
	}
	name := p.Name
	d := newPrompt("preset "+name, strings.Join(helps, "\n"), value, func(m *Model, text string) tea.Cmd {
		vals, err := kv(strings.Fields(text))
		if err != nil {
			m.setError(err)
			m.askPresetParams(p, text)
			return nil
		}
		build := m.addPreset(name, vals)
		return func() tea.Msg {
			msg := build().(presetMsg)
			msg.asked, msg.text = &p, text
			return msg
		}
	})
	d.preset = name
	m.openDialog(d)
}

func (m *Model) askOpen() {
	m.openDialog(newPrompt("open a file", "path (a session, a filter file, kernels, or a model checkpoint: .safetensors, .npz, .pt…):", "", func(m *Model, text string) tea.Cmd {
		if text == "" {
			// say so, or the status line goes on showing the last open's outcome
			m.setStatus(levelWarn, "nothing opened: the path was empty")
			return nil
		}
		return m.open(text)
	}))
}

func (m *Model) askRename() {
	e := m.selected()
	if e == nil {
		return
	}
	id := e.id
	m.openDialog(newPrompt("rename "+e.name, "new name:", e.name, func(m *Model, text string) tea.Cmd {
		if text != "" {
			m.rename(id, text)
		}
		return nil
	}))
}

func (m *Model) askDelete() error {
	e := m.selected()
	if e == nil {
		return errNoSelection
	}
	body := fmt.Sprintf("delete %s?", e.name)
	if e.dirty {
		body = fmt.Sprintf("%s has unsaved changes. delete it?", e.name)
	}
	body += " There is no undo for this.\n\ny deletes · n or esc keeps it"
	id, name := e.id, e.name
	kept := func(m *Model) { m.setStatus(levelInfo, "kept "+name) }
	m.openDialog(&confirm{title: "delete", body: body, cancel: kept, choices: []choice{
		{keys: []string{"y", "Y"}, run: func(m *Model) tea.Cmd { m.remove(id); return nil }},
		{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd { kept(m); return nil }},
	}})
	return nil
}

// openJobForm opens the distillation form on the selected item and starts computing the
// suggested order for its default length.
func (m *Model) openJobForm() (tea.Cmd, error) {
	e := m.selected()
	if e == nil {
		return nil, errNoSelection
	}
	if err := e.problem(); err != nil {
		return nil, fmt.Errorf("%s: %w", e.name, err)
	}
	def := m.defaultSpecFor(e)
	m.openDialog(newJobForm(e.id, e.name, e.fitted(), def, m.deps.Runner.Backends()))
	return suggestOrder(m.deps.Runner, e.id, def.Target.Length, targetSource(e, def.Target.Length)), nil
}

// askCancel asks before cancelling a running job: the work it has done is lost.
func (m *Model) askCancel(j *job) error {
	if j == nil || j.state() != sessions.JobRunning {
		return m.cancelJob(j) // says why there is nothing to cancel
	}
	body := fmt.Sprintf("cancel job #%d (%s → %s of order %d, at step %d of %d)? its work so far is lost\n\ny cancels it · n or esc lets it run",
		j.num, m.sourceName(j), j.spec.Model, j.spec.Order, j.last.Step, j.last.Steps)
	m.openDialog(&confirm{title: "cancel job", body: body, choices: []choice{
		{keys: []string{"y", "Y"}, run: func(m *Model) tea.Cmd { m.setError(m.cancelJob(j)); return nil }},
		{keys: []string{"n", "N"}, run: func(*Model) tea.Cmd { return nil }},
	}})
	return nil
}
