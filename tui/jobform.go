package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/train"
)

// maxHelpLines is the most lines the distill form gives its focused field's help.
const maxHelpLines = 3

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

// jobForm is the distillation form: a dialog that starts a job on an item.
type jobForm struct {
	sourceID   string
	source     string
	fits       string     // what of source the job fits (entry.fitted)
	def        train.Spec // what the form does not ask for
	fields     []formField
	focus      int
	suggestion string // the suggested order, once computed
	growing    string // train.Suggestion.GrowingNote for the form's targets, "" where none grow
	orderSet   string // the order the form filled in itself: the default, then the suggestion
	suggested  bool   // orderSet is the suggestion
	// orderTyped is set once the user changed the order field: its value is the user's then,
	// even one equal to orderSet (the default typed again before the suggestion came back,
	// which the suggestion replaced when the form told the user's order by its value).
	orderTyped bool
	// stepsTyped is set once the user changed the steps: given (stepsGiven), they are refused
	// for a recipe that takes no optimiser steps (Spec.CheckOptimiserSetting), as :distill
	// steps=.
	stepsTyped bool
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

func textField(name, help string) formField {
	in := newInput("")
	in.Blur()
	in.Width = 20
	return formField{name: name, input: in, help: help}
}

// radiusField is the form's radius bound: auto (train.Spec's MaxRadius 0), which the job
// resolves for the kernels' length, or a number.
func radiusField(r float64) formField {
	f := textField("radius", "the poles' radius bound: auto, "+train.AutoRadiusRule+", or a number in (0, 1 − 1e-10]")
	f.input.SetValue(train.MaxRadiusText(r))
	f.input.Width = 10
	return f
}

// parseRadius reads a radius bound as the form and :distill radius= take it: empty (the
// form's field cleared) or train.ParseMaxRadius's auto or number.
func parseRadius(v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	r, err := train.ParseMaxRadius(v)
	if err != nil {
		return 0, fmt.Errorf("radius: %v, got %q", err, v)
	}
	return r, nil
}

func newJobForm(sourceID, source, fits string, def train.Spec, backends []train.BackendName) *jobForm {
	f := &jobForm{sourceID: sourceID, source: source, fits: fits, def: def, fields: []formField{
		choiceField("model", "rtf: transfer function · modal: diagonal · rotation: RotRNN", train.Names(train.Models), string(def.Model)),
		numberField("order", "state size n of the fit", def.Order),
		choiceField("init", "hankel: stabilised ERA realisation; montel: rtf only", train.Names(train.Inits), string(def.Init)),
		numberField("steps", "optimiser steps; 0: the init and its refinement alone (hankel rtf or modal: none taken)", def.Steps),
		numberField("length", "samples of the "+fits+" to fit", def.Target.Length),
		choiceField("backend", "where the optimiser runs", train.Names(backends), string(def.Backend)),
		textField("orders", "a ladder: several orders, such as 4,8,16, in place of the order filled in (one typed is refused); empty: one order"),
		choiceField("poles", "any: pairs and real · real · positive (an S4D is_real layer's): variable projection only", train.Names(train.PoleSets), string(def.Poles)),
		radiusField(def.MaxRadius),
	}}
	f.orderSet = strconv.Itoa(def.Order)
	f.setFocus(0)
	return f
}

// suggest fills in a suggested order unless the user has changed the order or the form's
// length cannot fit it (Spec.Validate).
func (f *jobForm) suggest(order int) {
	s, err := f.read()
	if s.Order = order; f.orderTyped || err != nil || s.ValidateDistillation(1, s.Target.Length) != nil {
		return
	}
	for i := range f.fields {
		if fl := &f.fields[i]; fl.name == "order" {
			f.orderSet, f.suggested = strconv.Itoa(order), true
			fl.input.SetValue(f.orderSet)
		}
	}
}

// field is the index of the form's field called name.
func (f *jobForm) field(name string) int {
	i := slices.IndexFunc(f.fields, func(fl formField) bool { return fl.name == name })
	if i < 0 {
		panic("tui: the distill form has no field " + name)
	}
	return i
}

// fieldError is a value of the form's field that does not parse.
type fieldError struct {
	field int
	err   error
}

func (e fieldError) Error() string { return e.err.Error() }

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

// spec reads the form, and its orders for a ladder (nil for one order); a spec
// Spec.Validate refuses is its error. An order beside the ladder's orders is refused as
// :distill order= beside orders= is (train.CheckOrderOrOrders), the cursor on the order:
// the ladder dropped it without a word. Steps the user typed for a recipe fitted by variable
// projection are refused as :distill steps= is (Spec.CheckOptimiserSetting), the cursor on
// the steps (the fit ignored them); emptied, they are the default's, unused.
func (f *jobForm) spec() (train.Spec, []int, error) {
	order, ladder := f.field("order"), f.field("orders")
	if err := train.CheckOrderOrOrders(f.orderGiven(), f.fields[ladder].value() != "", "order", "orders"); err != nil {
		return f.def, nil, fieldError{order, err}
	}
	s, orders, err := f.readLadder()
	if err != nil {
		return s, nil, err
	}
	for i, fl := range f.fields {
		var err error
		switch {
		case fl.name == "order" && orders == nil:
			err = train.CheckDistillOrder(s.Order)
		case fl.name == "steps":
			if err = train.CheckSteps(s.Steps); err == nil && f.stepsGiven() {
				err = s.CheckOptimiserSetting("steps") // the form's name, as the order's rule
			}
		case fl.name == "length":
			err = train.CheckLength(s.Target.Length)
		case fl.name == "radius":
			err = train.CheckMaxRadius(s.MaxRadius)
		}
		if err != nil {
			return s, nil, fieldError{i, err} // the cursor goes to the field
		}
	}
	return s, orders, s.ValidateDistillation(1, s.Target.Length)
}

// orderGiven reports whether the order is the user's: typed, not the default or the
// suggestion the form filled in, which a ladder's orders replace (the form says so).
func (f *jobForm) orderGiven() bool {
	return f.orderTyped && f.fields[f.field("order")].value() != ""
}

// stepsGiven reports whether the steps are the user's: typed, not the default's the form
// filled in nor left empty, which a recipe that takes no steps does without.
func (f *jobForm) stepsGiven() bool {
	return f.stepsTyped && f.fields[f.field("steps")].value() != ""
}

// byProjection reports whether the form as filled in fits by variable projection, which
// takes no optimiser steps (train.Spec.ByProjection): the form marks its steps unused.
func (f *jobForm) byProjection() bool {
	s, _, err := f.readLadder()
	return err == nil && s.ByProjection()
}

// ladderReplacesOrder reports whether the order field holds the form's own value beside a
// ladder's orders, which replace it.
func (f *jobForm) ladderReplacesOrder() bool {
	return !f.orderGiven() && f.fields[f.field("orders")].value() != ""
}

// read reads the form into its default spec; a malformed number is an error naming the
// field. An order the user did not give beside a ladder's orders is the default's (spec
// takes the ladder's highest), and so are steps left empty for a recipe that takes none.
func (f *jobForm) read() (train.Spec, error) {
	s := f.def
	ints := map[string]*int{"order": &s.Order, "steps": &s.Steps, "length": &s.Target.Length}
	notWhole := func(i int) error {
		return fieldError{i, fmt.Errorf("%s: want a whole number, got %q", f.fields[i].name, f.fields[i].value())}
	}
	noSteps := -1
	for i := range f.fields {
		fl := &f.fields[i]
		if fl.name == "order" && f.ladderReplacesOrder() {
			continue
		}
		if fl.name == "steps" && fl.value() == "" {
			noSteps = i // the default's where the recipe takes none (below)
			continue
		}
		if p, ok := ints[fl.name]; ok {
			// The order's, the steps' and the length's ranges are the distillation's (spec),
			// as distill on the command line says them.
			v, err := strconv.Atoi(fl.value())
			if err != nil {
				return s, notWhole(i)
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
		case "poles":
			if v := train.Poles(fl.value()); v != train.PolesAny {
				s.Poles = v // any stays the default's "" (a job records only what it changes)
			}
		case "radius":
			r, err := parseRadius(fl.value())
			if err != nil {
				return s, fieldError{i, err}
			}
			s.MaxRadius = r
		}
	}
	if noSteps >= 0 && !s.ByProjection() {
		return s, notWhole(noSteps)
	}
	return s, nil
}

// readLadder reads the form (read) and its ladder's orders, nil for one order, the spec's
// order the highest of them.
func (f *jobForm) readLadder() (train.Spec, []int, error) {
	s, err := f.read()
	if err != nil {
		return s, nil, err
	}
	ladder := f.field("orders")
	v := f.fields[ladder].value()
	if v == "" {
		return s, nil, nil
	}
	orders, err := parseOrders(v)
	if err != nil {
		return s, nil, fieldError{ladder, err}
	}
	s.Order = slices.Max(orders)
	return s, orders, nil
}

func (f *jobForm) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	fl := &f.fields[f.focus]
	switch msg.String() {
	case "esc":
		m.closeDialog()
		// It replaces what the form's last refusal left on the status line, which read as
		// though it still applied.
		m.setStatus(levelInfo, "no distillation started")
		return nil
	case "enter", "ctrl+s":
		return f.start(m)
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
	was := fl.input.Value()
	fl.input, cmd = fl.input.Update(msg)
	if fl.input.Value() != was {
		f.orderTyped = f.orderTyped || fl.name == "order"
		f.stepsTyped = f.stepsTyped || fl.name == "steps"
	}
	return cmd
}

// start starts the job the form describes; a form Spec.Validate refuses stays open.
func (f *jobForm) start(m *Model) tea.Cmd {
	spec, orders, err := f.spec()
	if err != nil {
		if fe, ok := err.(fieldError); ok {
			f.setFocus(fe.field) // the cursor goes to the field to correct
		}
		m.setStatus(levelError, err.Error())
		return nil
	}
	m.closeDialog()
	e := m.entry(f.sourceID)
	if e == nil {
		m.setError(errNoSelection)
		return nil
	}
	cmd, err := m.startJob(e, spec, orders)
	m.setError(err)
	return cmd
}

func (f *jobForm) hint() string {
	return "↑↓/tab field · ←→ choice · enter starts · esc cancels"
}

func (f *jobForm) view(m *Model, w, _ int) string {
	w = min(w-2, 76)
	return modalBox(m.st, "distill", f.body(m.st, w-4), w)
}

// onSuggest shows a suggested order computed for this form's item.
func (f *jobForm) onSuggest(msg suggestMsg) {
	if f.sourceID != msg.source {
		return
	}
	switch {
	case msg.err != nil:
		f.suggestion = "suggested order: none, " + oneLine(msg.err)
	case msg.ok:
		f.suggestion = fmt.Sprintf("suggested order: %d (relative error %g at length %d)\nfrom the lower bound: %.2g at order %d, under 1/%d of it", msg.order, suggestTol, msg.length, msg.bound, msg.order, train.SuggestMargin)
		f.suggest(msg.order)
	default:
		f.suggestion = fmt.Sprintf("suggested order: none up to %d (relative error %g at length %d)\nfrom the lower bound: %.2g at order %d, above 1/%d of it", msg.order, suggestTol, msg.length, msg.bound, msg.order, train.SuggestMargin)
	}
	f.growing = msg.growing
}

func (f *jobForm) body(st *styles, w int) string {
	var lines []string
	lines = append(lines, st.dim.Render("distil the "+f.fits+" of ")+st.bold.Render(f.source))
	if f.suggestion == "" {
		lines = append(lines, st.dim.Render("suggested order: computing…"))
	} else {
		lines = append(lines, st.dim.Render(f.suggestion))
	}
	if f.growing != "" {
		lines = append(lines, st.dim.Render(ansi.Wordwrap(f.growing, w, "")))
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
		switch {
		case fl.name == "order" && f.ladderReplacesOrder():
			val += st.dim.Render("(the orders replace it)")
		case fl.name == "order" && f.suggested && fl.value() == f.orderSet:
			val += st.dim.Render("(suggested)")
		case fl.name == "steps" && f.byProjection():
			val += st.dim.Render("(unused: it fits by variable projection)")
		}
		lines = append(lines, mark+fmt.Sprintf("%-8s ", fl.name)+val)
	}
	// The focused field's help, whole: cut to a line, the orders' lost what they replace and
	// the steps' which recipes take none. The room is the longest help's, so that the form
	// keeps its height as the cursor moves.
	n := 1
	for _, fl := range f.fields {
		n = max(n, len(strings.Split(wrap(fl.help, w), "\n")))
	}
	n = min(n, maxHelpLines)
	help := wrapLines(st.dim, f.fields[f.focus].help, w, n)
	for len(help) < n {
		help = append(help, "")
	}
	lines = append(append(lines, ""), help...)
	return strings.Join(lines, "\n")
}
