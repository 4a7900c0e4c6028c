package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/ssmlab/ssmlab/train"
)

// Dialogs take the keyboard while open: help, the command palette, one-line prompts,
// confirmations, the preset picker and the distillation form. Their purpose is data (an enum
// and ids), not a closure, so that tests can inspect them.

type modalKind int

const (
	modalNone modalKind = iota
	modalHelp
	modalPalette
	modalPrompt
	modalConfirm
	modalPresets
	modalJobForm
	modalMessages
)

type promptPurpose int

const (
	promptRename promptPurpose = iota
	promptOpen
	promptSave
	promptPresetParams
	promptLength
)

type confirmPurpose int

const (
	confirmDelete confirmPurpose = iota
	confirmQuit
)

type modalState struct {
	kind     modalKind
	title    string
	body     string // prompt or confirmation text
	input    textinput.Model
	prompt   promptPurpose
	confirm  confirmPurpose
	targetID int
	preset   string // for promptPresetParams

	presets      []PresetInfo
	presetFilter string // typed in the picker: only presets whose name or description holds it
	presetSel    int    // index into shownPresets

	form jobForm

	pal palette

	page int // of the help; for the messages, how many lines they are scrolled up
}

// shownPresets is the picker's list: the presets whose name or description contains the
// filter, ignoring case, in the registry's order.
func (md *modalState) shownPresets() []PresetInfo {
	if md.presetFilter == "" {
		return md.presets
	}
	f := strings.ToLower(md.presetFilter)
	var shown []PresetInfo
	for _, p := range md.presets {
		if strings.Contains(strings.ToLower(p.Name), f) || strings.Contains(strings.ToLower(p.Description), f) {
			shown = append(shown, p)
		}
	}
	return shown
}

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

// formField is one field of the distillation form: a choice cycled with ←/→ or a number.
type formField struct {
	name    string
	choices []string
	choice  int
	input   textinput.Model
	help    string
}

func (f *formField) value() string {
	if f.choices != nil {
		return f.choices[f.choice]
	}
	return strings.TrimSpace(f.input.Value())
}

type jobForm struct {
	sourceID   int
	source     string
	def        train.Spec // what the form does not ask for
	fields     []formField
	focus      int
	suggestion string // the suggested order, once computed
	orderSet   string // the order the form filled in itself; a different value is the user's
	suggested  bool   // orderSet is the suggestion
}

func choiceField(name, help string, choices []string, val string) formField {
	f := formField{name: name, choices: choices, help: help}
	for i, c := range choices {
		if c == val {
			f.choice = i
		}
	}
	return f
}

func numberField(name, help string, v int) formField {
	in := newInput(strconv.Itoa(v))
	in.Blur()
	in.Width = 10
	return formField{name: name, input: in, help: help}
}

func newJobForm(sourceID int, source string, def train.Spec, backends []train.BackendName) jobForm {
	f := jobForm{sourceID: sourceID, source: source, def: def, fields: []formField{
		choiceField("model", "rtf: transfer function · modal: diagonal · rotation: RotRNN", train.Names(train.Models), string(def.Model)),
		numberField("order", "state size n of the fit", def.Order),
		choiceField("init", "hankel: stabilised ERA realisation; montel: rtf only", train.Names(train.Inits), string(def.Init)),
		numberField("steps", "optimiser steps", def.Steps),
		numberField("length", "samples of the impulse response to fit", def.Target.Length),
		choiceField("backend", "where the optimiser runs", train.Names(backends), string(def.Backend)),
	}}
	f.orderSet = strconv.Itoa(def.Order)
	f.setFocus(0)
	return f
}

// suggest fills in a suggested order unless the user has typed one or the form's length
// cannot fit it (Spec.Validate).
func (f *jobForm) suggest(order int) {
	s, err := f.read()
	if s.Order = order; err != nil || s.Validate(1, s.Target.Length) != nil {
		return
	}
	for i := range f.fields {
		fl := &f.fields[i]
		if fl.name != "order" || fl.value() != f.orderSet {
			continue
		}
		f.orderSet, f.suggested = strconv.Itoa(order), true
		fl.input.SetValue(f.orderSet)
	}
}

func (f *jobForm) setFocus(i int) {
	n := len(f.fields)
	f.focus = ((i % n) + n) % n
	for k := range f.fields {
		if f.fields[k].choices == nil {
			if k == f.focus {
				f.fields[k].input.Focus()
			} else {
				f.fields[k].input.Blur()
			}
		}
	}
}

// spec reads the form; a spec Spec.Validate refuses is its error.
func (f *jobForm) spec() (train.Spec, error) {
	s, err := f.read()
	if err != nil {
		return s, err
	}
	return s, s.Validate(1, s.Target.Length)
}

// read reads the form into its default spec; a malformed number is an error naming the
// field.
func (f *jobForm) read() (train.Spec, error) {
	s := f.def
	ints := map[string]*int{"order": &s.Order, "steps": &s.Steps, "length": &s.Target.Length}
	for i := range f.fields {
		fl := &f.fields[i]
		if p, ok := ints[fl.name]; ok {
			v, err := strconv.Atoi(fl.value())
			if err != nil || v < 1 {
				return s, fmt.Errorf("%s: want a positive integer, got %q", fl.name, fl.value())
			}
			*p = v
			continue
		}
		switch fl.name {
		case "model":
			s.Model = train.Model(fl.value())
		case "init":
			s.Init = train.Init(fl.value())
		case "backend":
			s.Backend = train.BackendName(fl.value())
		}
	}
	return s, nil
}

func (f *jobForm) update(msg tea.KeyMsg) tea.Cmd {
	fl := &f.fields[f.focus]
	switch msg.String() {
	case "tab", "down":
		f.setFocus(f.focus + 1)
		return nil
	case "shift+tab", "up":
		f.setFocus(f.focus - 1)
		return nil
	}
	if fl.choices != nil {
		switch msg.String() {
		case "left", "h":
			fl.choice = (fl.choice + len(fl.choices) - 1) % len(fl.choices)
		case "right", "l", " ":
			fl.choice = (fl.choice + 1) % len(fl.choices)
		}
		return nil
	}
	var cmd tea.Cmd
	fl.input, cmd = fl.input.Update(msg)
	return cmd
}

func (f *jobForm) view(st *styles, w int) string {
	var lines []string
	lines = append(lines, st.dim.Render("distil the impulse response of ")+st.bold.Render(f.source))
	if f.suggestion == "" {
		lines = append(lines, st.dim.Render("suggested order: computing…"))
	} else {
		lines = append(lines, st.dim.Render(f.suggestion))
	}
	lines = append(lines, "")
	for i, fl := range f.fields {
		mark := "  "
		if i == f.focus {
			mark = st.accent.Render("▸ ")
		}
		var val string
		if fl.choices != nil {
			var opts []string
			for k, c := range fl.choices {
				if k == fl.choice {
					opts = append(opts, st.tabActive.Render("["+c+"]"))
				} else {
					opts = append(opts, st.dim.Render(" "+c+" "))
				}
			}
			val = strings.Join(opts, "")
		} else {
			val = fl.input.View()
		}
		if fl.name == "order" && f.suggested && fl.value() == f.orderSet {
			val += st.dim.Render("(suggested)")
		}
		lines = append(lines, mark+fmt.Sprintf("%-8s ", fl.name)+val)
	}
	lines = append(lines, "", ansi.Truncate(st.dim.Render(f.fields[f.focus].help), w, "…"))
	return strings.Join(lines, "\n")
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
