package tui

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// TestDistillStepsAsTheCLI: the distill form and :distill take the steps ssmlab distill
// --steps takes, 0 included (the init and its refinement alone), and refuse a negative
// count with train's words (CheckSteps), the cursor on steps; the form said "want a
// positive integer" for 0. (Steps are the optimiser's, as --steps: init=zeros.)
func TestDistillStepsAsTheCLI(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	setSteps := func(v string) *jobForm {
		t.Helper()
		form := openFormAt(t, m, "init")
		chooseIn(t, m, form, train.InitZeros)
		keys(t, m, "down")
		keys(t, m, "ctrl+u")
		typeText(t, m, v)
		keys(t, m, "down", "enter")
		return form
	}
	want := train.CheckSteps(-1).Error()
	form := setSteps("-1")
	if _, ok := dialogOf[*jobForm](m); !ok || !strings.Contains(m.status.text, want) || form.fields[form.focus].name != "steps" || len(m.jobs) != 0 {
		t.Errorf("the form's steps -1: dialog %T, status %q, cursor on %s, want %q", m.dialog, m.status.text, form.fields[form.focus].name, want)
	}
	keys(t, m, "esc")
	setSteps("0")
	if len(m.jobs) != 1 || m.jobs[0].spec.Steps != 0 {
		t.Fatalf("the form's steps 0: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	m.sel = m.jobs[0].sourceID
	for _, tc := range []struct {
		line string
		jobs int
		want string
	}{
		{"distill steps=-1 init=zeros", 1, want},
		{"distill steps=0 init=zeros", 2, ""},
	} {
		keys(t, m, ":")
		typeText(t, m, tc.line)
		keys(t, m, "enter")
		if len(m.jobs) != tc.jobs || !strings.Contains(m.status.text, tc.want) || tc.want == "" && m.status.level == levelError {
			t.Errorf(":%s: %d jobs, status %q, want %d jobs and %q", tc.line, len(m.jobs), m.status.text, tc.jobs, tc.want)
		}
	}
	if j := m.jobs[len(m.jobs)-1]; j.spec.Steps != 0 {
		t.Errorf(":distill steps=0 ran %d steps", j.spec.Steps)
	}
}

// TestDistillLengthAsTheCLI: the distill form's length and :distill length=… refuse a
// kernel length outside [2, train.MaxLength] with train's words (CheckLength), those of
// ssmlab distill --length, the cursor on length; the form said "want a positive integer"
// for 0 and took 1, which training then refused with the cursor elsewhere.
func TestDistillLengthAsTheCLI(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	for _, n := range []int{0, 1} {
		want := train.CheckLength(n).Error()
		checkRefused(t, m, "length", strconv.Itoa(n), want)
	}
}

// checkRefused types value into the distill form's field and then gives it as :distill
// field=value: both must refuse it with want on the status line, start no job, and the form
// take its cursor back to field, the one to correct. A ladder's orders are typed with the
// order left empty, as the form takes them.
func checkRefused(t *testing.T, m *Model, field, value, want string) {
	t.Helper()
	jobs := len(m.jobs)
	form := openFormAt(t, m, field)
	if field == "orders" {
		form.fields[form.field("order")].input.SetValue("")
	}
	keys(t, m, "ctrl+u")
	typeText(t, m, value)
	keys(t, m, "up", "enter")
	if _, ok := dialogOf[*jobForm](m); !ok || !strings.Contains(m.status.text, want) || form.fields[form.focus].name != field || len(m.jobs) != jobs {
		t.Errorf("the form's %s %s: dialog %T, status %q, cursor on %s, want %q", field, value, m.dialog, m.status.text, form.fields[form.focus].name, want)
	}
	keys(t, m, "esc", ":")
	typeText(t, m, "distill "+field+"="+value)
	keys(t, m, "enter")
	if m.status.level != levelError || !strings.Contains(m.status.text, want) || len(m.jobs) != jobs {
		t.Errorf(":distill %s=%s: status %q, %d jobs, want %q", field, value, m.status.text, len(m.jobs), want)
	}
}

// TestDistillFormNamesKernels: the distill form of a kernel target says it fits the kernels,
// in its heading and its length's help; it said "impulse response", a filter's word, of
// kernels read from a file. A filter's form still says impulse response.
func TestDistillFormNamesKernels(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	for _, tc := range []struct {
		add  func()
		want string
	}{
		{func() { addKernels(t, m, "k2", [][]float64{{1, 0.5, 0.25, 0.125}, {0, 1, 0, 0.5}}) }, "kernels"},
		{func() { addKernels(t, m, "k1", [][]float64{{1, 0.5, 0.25, 0.125}}) }, "kernel"},
		{func() { addPreset(t, m, "ring") }, "impulse response"},
	} {
		tc.add()
		form := openFormAt(t, m, "length")
		scr := screen(m)
		if head := "distil the " + tc.want + " of " + form.source; !strings.Contains(scr, head) || !strings.Contains(scr, "samples of the "+tc.want+" to fit") {
			t.Errorf("the form of %s, want %q:\n%s", form.source, head, scr)
		}
		if tc.want != "impulse response" && strings.Contains(scr, "impulse response") {
			t.Errorf("the form of kernels %s says impulse response:\n%s", form.source, scr)
		}
		keys(t, m, "esc")
	}
}

// TestJobFormPoles: the distill form sets the poles a fit by variable projection places
// (distill --poles), real or positive for an S4D is_real layer's kernels; any is the
// default, which the job leaves unset.
func TestJobFormPoles(t *testing.T) {
	def := train.DefaultSpec()
	for _, want := range []train.Poles{train.PolesReal, train.PolesPositive, train.PolesAny} {
		f := newJobForm("id", "k", "kernels", def, []train.BackendName{"cpu"})
		found := false
		for i := range f.fields {
			fl := &f.fields[i]
			if fl.name != "poles" {
				continue
			}
			found = true
			for c, name := range fl.choices {
				if name == string(want) {
					fl.choice = c
				}
			}
		}
		if !found {
			t.Fatal("the form has no poles field")
		}
		s, err := f.read()
		if err != nil {
			t.Fatal(err)
		}
		got := s.Poles
		if got == "" {
			got = train.PolesAny
		}
		if got != want || want == train.PolesAny && s.Poles != "" {
			t.Errorf("poles %s: the job's are %q", want, s.Poles)
		}
	}
}

// TestDistillPolesCommand: :distill poles=… sets the job's poles as distill --poles does, and
// refuses another value with train's words.
func TestDistillPolesCommand(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	for _, tc := range []struct {
		line  string
		jobs  int
		poles train.Poles
		want  string
	}{
		{"distill poles=complex", 0, "", "poles"},
		{"distill poles=positive order=2", 1, train.PolesPositive, ""},
		{"distill poles=any order=2", 2, "", ""},
	} {
		keys(t, m, ":")
		typeText(t, m, tc.line)
		keys(t, m, "enter")
		if len(m.jobs) != tc.jobs || !strings.Contains(m.status.text, tc.want) || tc.want == "" && m.status.level == levelError {
			t.Fatalf(":%s: %d jobs, status %q, want %d jobs and %q", tc.line, len(m.jobs), m.status.text, tc.jobs, tc.want)
		}
		if tc.jobs > 0 {
			if got := m.jobs[len(m.jobs)-1].spec.Poles; got != tc.poles {
				t.Errorf(":%s: the job's poles are %q, want %q", tc.line, got, tc.poles)
			}
		}
		if len(m.jobs) > 0 {
			m.sel = m.jobs[0].sourceID
		}
	}
}

// TestJobFormKeepsOrderTypedBeforeSuggestion: an order typed into the form before its
// suggested order comes back stays, even when it is the order the form opened with. The form
// told the user's order from its own by value, so a late suggestion replaced a typed default:
// TestTmux, typing 2 into butter4's form (default 2) under load, distilled at order 4.
func TestJobFormKeepsOrderTypedBeforeSuggestion(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	// Open the form, holding back the command that computes its suggestion: it returns after
	// the keys below, as on a loaded machine.
	_, suggestion := m.Update(keyMsg("D"))
	form, ok := dialogOf[*jobForm](m)
	if !ok {
		t.Fatalf("D opened %T", m.dialog)
	}
	def := form.fields[1].value()
	keys(t, m, "down", "ctrl+u")
	typeText(t, m, def)
	runCmd(t, m, suggestion, 0)
	if !strings.Contains(form.suggestion, "suggested order: ") {
		t.Fatalf("no suggestion came back: %q", form.suggestion)
	}
	got, _, err := form.spec()
	if want, _ := strconv.Atoi(def); err != nil || got.Order != want || strings.Contains(screen(m), "(suggested)") {
		t.Errorf("typed order %s, the form holds %d (%v):\n%s", def, got.Order, err, screen(m))
	}
}

// TestDistillFormOrderWithOrders: the distill form refuses an order beside a ladder's orders
// as :distill order= beside orders= is refused (train.CheckOrderOrOrders), in the same words
// with the form's names for the two, the cursor on the order; it ran the ladder and dropped
// the order without a word (its help said "then order is ignored"). With the order left
// empty, the orders fit the ladder.
func TestDistillFormOrderWithOrders(t *testing.T) {
	m := newLadderModel(t)
	palette := "orders= and order= both give the order: orders= fits a ladder of orders, order= one"
	want := "orders and order both give the order: orders fits a ladder of orders, order one"
	if got := train.CheckOrderOrOrders(true, true, "order", "orders").Error(); got != want || strings.ReplaceAll(palette, "=", "") != want {
		t.Fatalf("the rule says %q, want %q", got, want)
	}
	// The order the form filled in gives way to a ladder, and the form says so.
	openFormAt(t, m, "orders")
	typeText(t, m, "2,4")
	if !strings.Contains(screen(m), "(the orders replace it)") {
		t.Errorf("the form's own order beside orders is not marked as replaced:\n%s", screen(m))
	}
	keys(t, m, "enter")
	if len(m.jobs) != 1 || !slices.Equal(m.jobs[0].orders, []int{2, 4}) || m.jobs[0].spec.Order != 4 {
		t.Fatalf("orders 2,4 beside the form's own order: %d jobs (status %q)", len(m.jobs), m.status.text)
	}
	// An order the user typed is refused beside them.
	m = newLadderModel(t)
	form := openFormAt(t, m, "order")
	keys(t, m, "ctrl+u")
	typeText(t, m, "8")
	for form.fields[form.focus].name != "orders" {
		keys(t, m, "down")
	}
	typeText(t, m, "2,4")
	keys(t, m, "enter")
	if _, ok := dialogOf[*jobForm](m); !ok || m.status.text != want || m.status.level != levelError || form.fields[form.focus].name != "order" || len(m.jobs) != 0 {
		t.Fatalf("order and orders filled: dialog %T, status %q, cursor on %s, %d jobs; want %q", m.dialog, m.status.text, form.fields[form.focus].name, len(m.jobs), want)
	}
	if !strings.Contains(screen(m), "orders   2,4") {
		t.Errorf("the form lost its orders:\n%s", screen(m))
	}
	keys(t, m, "ctrl+u", "enter") // the cursor is on the order
	if len(m.jobs) != 1 || !slices.Equal(m.jobs[0].orders, []int{2, 4}) || m.jobs[0].spec.Order != 4 {
		t.Fatalf("orders 2,4, order empty: %d jobs (status %q)", len(m.jobs), m.status.text)
	}
}

// chooseIn moves the form's focused choice field to choice.
func chooseIn[C ~string](t *testing.T, m *Model, form *jobForm, choice C) {
	t.Helper()
	fl := &form.fields[form.focus]
	for range fl.choices {
		if fl.value() == string(choice) {
			return
		}
		keys(t, m, "right")
	}
	t.Fatalf("the form's %s has no choice %q", fl.name, choice)
}

// TestDistillFormStepsNeedTheOptimiser: the distill form refuses steps typed for a recipe
// fitted by variable projection (the default: hankel, rtf) as :distill steps= and ssmlab
// distill --steps are (Spec.CheckOptimiserSetting), in the same words with the form's name,
// the cursor on the steps; it took them and ignored them. Steps left as the form filled
// them in, or emptied, are marked unused and start the job; with init zeros the typed steps
// are run.
func TestDistillFormStepsNeedTheOptimiser(t *testing.T) {
	m := newLadderModel(t)
	unused := "(unused: it fits by variable projection)"
	form := openFormAt(t, m, "steps")
	if !regexp.MustCompile(`steps +100 +` + regexp.QuoteMeta(unused)).MatchString(screen(m)) {
		t.Errorf("the steps of a hankel rtf fit are not marked unused:\n%s", screen(m))
	}
	keys(t, m, "ctrl+u")
	typeText(t, m, "500")
	keys(t, m, "up", "enter")
	byProjection := train.DefaultSpec()
	want := byProjection.CheckOptimiserSetting("steps").Error()
	if _, ok := dialogOf[*jobForm](m); !ok || m.status.text != want || m.status.level != levelError || form.fields[form.focus].name != "steps" || len(m.jobs) != 0 {
		t.Fatalf("steps 500 by variable projection: dialog %T, status %q, cursor on %s, %d jobs; want %q", m.dialog, m.status.text, form.fields[form.focus].name, len(m.jobs), want)
	}
	for form.fields[form.focus].name != "init" {
		keys(t, m, "up")
	}
	chooseIn(t, m, form, train.InitZeros)
	if strings.Contains(screen(m), unused) {
		t.Errorf("the steps of an init zeros fit are marked unused:\n%s", screen(m))
	}
	keys(t, m, "enter")
	if len(m.jobs) != 1 || m.jobs[0].spec.Steps != 500 || !strings.Contains(m.jobs[0].log[0], "500 steps") {
		t.Fatalf("steps 500, init zeros: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	// The form's own steps, and steps emptied, are the default's: unused, not refused. Emptied
	// for an optimiser's recipe, they are refused.
	for _, clear := range []bool{false, true} {
		openFormAt(t, m, "steps")
		if clear {
			keys(t, m, "ctrl+u")
		}
		keys(t, m, "enter")
		if j := m.jobs[len(m.jobs)-1]; !strings.Contains(j.log[0], "by variable projection") || j.spec.Steps != byProjection.Steps {
			t.Errorf("steps emptied %v, by variable projection: %d jobs, status %q", clear, len(m.jobs), m.status.text)
		}
	}
	form = openFormAt(t, m, "init")
	chooseIn(t, m, form, train.InitZeros)
	keys(t, m, "down", "ctrl+u", "enter")
	if want := `steps: want a whole number, got ""`; m.status.text != want || form.fields[form.focus].name != "steps" || len(m.jobs) != 3 {
		t.Errorf("steps emptied, init zeros: status %q, cursor on %s, %d jobs; want %q", m.status.text, form.fields[form.focus].name, len(m.jobs), want)
	}
}

// TestDistillFormHelpWhole: the distill form shows its focused field's help whole, wrapped,
// where it cut it to a line ("a ladder: several orders, such as 4,8,16, in place of the
// order filled …"); the form keeps its height as the cursor moves.
func TestDistillFormHelpWhole(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	form := openFormAt(t, m, "model")
	height := -1
	for range form.fields {
		fl := form.fields[form.focus]
		var box []string
		for _, line := range strings.Split(screen(m), "\n") {
			if _, inside, ok := strings.Cut(line, "║"); ok {
				box = append(box, strings.TrimSuffix(strings.TrimSpace(inside), "║"))
			}
		}
		if text := strings.Join(strings.Fields(strings.Join(box, " ")), " "); !strings.Contains(text, fl.help) {
			t.Errorf("the form at %s does not show its help %q whole:\n%s", fl.name, fl.help, screen(m))
		}
		if height >= 0 && len(box) != height {
			t.Errorf("the form at %s is %d lines high, at the field before %d", fl.name, len(box), height)
		}
		height = len(box)
		keys(t, m, "down")
	}
}

// TestDistillRadius: the distill form's radius field shows auto, and the job then bounds
// its poles by train.AutoRadius of the kernels' length, which its log gives as distill's
// radius bound line does (1 − 1/16384 at 16384 samples); a number typed, or :distill radius=,
// is the job's bound as given, as distill --max-radius, and the log gives no automatic one;
// a bound outside (0, 1 − 1e-10] or not a number is refused, the cursor on the field.
func TestDistillRadius(t *testing.T) {
	m := newLadderModel(t)
	form := openFormAt(t, m, "radius")
	if got := form.fields[form.focus].value(); got != "auto" {
		t.Errorf("the form's radius: %q, want auto", got)
	}
	keys(t, m, "esc")
	openFormAt(t, m, "length")
	keys(t, m, "ctrl+u")
	typeText(t, m, "16384")
	keys(t, m, "enter")
	if len(m.jobs) != 1 || m.jobs[0].state() != sessions.JobDone || m.jobs[0].spec.MaxRadius != 0 || m.jobs[0].spec.Target.Length != 16384 {
		t.Fatalf("the form's job: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	want := "radius bound 0.999939 (auto: " + train.AutoRadiusRule + ")"
	if log := strings.Join(m.jobs[0].log, "\n"); !strings.Contains(log, want) {
		t.Errorf("the job's log lacks %q:\n%s", want, log)
	}
	m.sel = m.jobs[0].sourceID
	runPalette(t, m, "distill radius=0.99999 length=16384 order=2")
	if len(m.jobs) != 2 || m.jobs[1].state() != sessions.JobDone || m.jobs[1].spec.MaxRadius != 0.99999 {
		t.Fatalf(":distill radius=0.99999: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	if log := strings.Join(m.jobs[1].log, "\n"); strings.Contains(log, "radius bound") {
		t.Errorf("radius=0.99999: the job's log gives an automatic bound:\n%s", log)
	}
	m.sel = m.jobs[0].sourceID
	checkRefused(t, m, "radius", "1.5", train.CheckMaxRadius(1.5).Error())
	checkRefused(t, m, "radius", "wide", `radius: want a number or auto, got "wide"`)
}
