package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The actions on the session's items. Each changes the session through its methods (so the
// change is a new generation, unsaved, and autosaved) and says what it did on the status line.

// add adds an item to the session — a filter or bank entry, or kernels as a target — under
// a name no other item has, and selects it unless keepSelection.
func (a *app) add(it Item, origin sessions.Origin, keepSelection bool) (string, error) {
	si := sessionItem(it, uniqueName(a.sess, it.Name, ""), origin)
	var id string
	var err error
	if si.Target != nil {
		id, err = a.sess.AddTarget(*si.Target)
	} else {
		id, err = a.sess.AddEntry(*si.Entry)
	}
	if err == nil && !keepSelection {
		a.sel = id
	}
	return id, err
}

// sessionItem is it as the session holds it, named name.
func sessionItem(it Item, name string, origin sessions.Origin) sessions.Item {
	if it.Kernels != nil {
		return sessions.Item{Target: &sessions.Target{Name: name, Kernels: it.Kernels, Source: it.Source, Origin: origin}}
	}
	return sessions.Item{Entry: &sessions.Entry{Name: name, Filter: it.Filter, Bank: it.Bank, Origin: origin}}
}

// convert makes the selected filter (or bank) the given form. The conversion runs in a
// command (for a filter, the view of that form refresh computes) and is committed when it
// arrives, unless the filter changed meanwhile.
func (a *app) convert(to filters.Form) (tea.Cmd, error) {
	e := a.selected()
	switch {
	case e == nil:
		return nil, errNoSelection
	case e.kind == kindKernel:
		return nil, fmt.Errorf("kernels have no form to convert: distil them into a filter (D)")
	case e.form() == string(to):
		return nil, fmt.Errorf("%s is already %s", e.name, to)
	case e.kind == kindBank:
		a.setStatus(levelInfo, fmt.Sprintf("converting %d channels %s → %s…", e.channels(), e.form(), to))
		return convertBank(e.id, e.rev, e.bank, to), nil
	}
	key := viewKey{rev: e.rev, ch: e.ch, form: to}
	a.commit.id, a.commit.key = e.id, key
	if v := e.views[key]; v != nil && e.viewsRev == e.rev && !v.pending {
		a.commitView(e, key, v)
		return nil, nil
	}
	a.setStatus(levelInfo, fmt.Sprintf("converting %s → %s…", e.form(), to))
	return nil, nil // refresh starts the conversion
}

// commitView makes a finished conversion the entry's filter; one outside the documented
// accuracy asks first (gate).
func (a *app) commitView(e *entry, key viewKey, v *viewData) {
	a.commit.id = ""
	if v.err != nil {
		a.setStatus(levelError, fmt.Sprintf("%s → %s failed: %s", e.form(), key.form, oneLine(v.err)))
		return
	}
	rep, g := v.rep, v.f
	a.gate(e, []filters.Report{rep}, v.rho, func(a *app, e *entry) {
		if err := a.setCurrent(e, g); err != nil {
			a.setError(err)
			return
		}
		e.report, e.reportRev = &rep, a.entry(e.id).rev
		a.setStatus(reportLevel(rep), reportSummary(rep))
	})
}

// gate applies a replacement of e's filter made by the conversions reps describe (one per
// channel of a bank). When one is outside the documented accuracy (filters.CheckAccuracy, the
// CLI's gate: a relative error above filters.MaxRelError, or a stable filter made unstable)
// it asks first, naming the error, the condition and, where the result's spectral radius rho
// is known, the list's mark it will get (markOf); apply runs only if e has not changed
// meanwhile.
func (a *app) gate(e *entry, reps []filters.Report, rho radiusOf, apply func(a *app, e *entry)) {
	id, rev := e.id, e.rev
	run := func(m *Model) tea.Cmd {
		e := m.entry(id)
		if e == nil || e.rev != rev {
			m.setStatus(levelWarn, "the filter changed meanwhile: the conversion was dropped")
			return nil
		}
		apply(m.app, e)
		return nil
	}
	err := filters.CheckAccuracy(reps)
	var acc *filters.AccuracyError
	if !errors.As(err, &acc) {
		apply(a, e)
		return
	}
	r := acc.Report
	name := e.name
	// the mark the list will show, from the one classification it reads (markOf); an
	// edited conversion's radius is not known before it is applied
	undo := "u undoes"
	if rho.known {
		undo += "; the list marks it " + markOf(rho.rho, true, true)
		if s := analysis.StabilityOf(rho.rho); s != analysis.Stable {
			undo += ", " + s.String()
		}
	}
	body := fmt.Sprintf("%s (condition %s). The %s form would hold %s inaccurately.\n\n"+
		"y replaces it anyway (%s) · n or esc keeps it in %s", oneLine(err), sci(r.Condition), r.To, name, undo, r.From)
	kept := func(m *Model) { m.setStatus(levelInfo, fmt.Sprintf("kept %s in %s", name, r.From)) }
	a.ask = &confirm{title: "inaccurate conversion", body: body, cancel: kept, choices: []choice{
		{keys: []string{"y", "Y"}, run: run},
		{keys: []string{"n", "N"}, run: func(m *Model) tea.Cmd { kept(m); return nil }},
	}}
	a.setStatus(levelWarn, oneLine(err)+": replace "+name+"?")
}

// inaccuracy is the report of the conversion that made e's filter when it holds the filter
// outside the documented accuracy (the list's ≈); nil otherwise.
func (e *entry) inaccuracy() *filters.Report {
	if r := e.lastReport(); r != nil && r.Inaccurate() {
		return r
	}
	return nil
}

func reportLevel(rep filters.Report) level {
	if len(rep.Warnings) > 0 {
		return levelWarn
	}
	return levelOK
}

func reportSummary(rep filters.Report) string {
	s := fmt.Sprintf("converted %s → %s: rel error %s over %d samples", rep.From, rep.To, filters.RelErrorText(rep.RelError), rep.Length)
	if rep.Conditioned {
		s += ", condition " + sci(rep.Condition)
	}
	if len(rep.Warnings) > 0 {
		s += " · warning: " + rep.Warnings[0]
	}
	return s
}

func (a *app) onBankConvert(msg bankConvertMsg) {
	e := a.entry(msg.id)
	if e == nil || e.rev != msg.rev {
		return
	}
	if msg.err != nil {
		a.setStatus(levelError, fmt.Sprintf("%s: converting the bank to %s failed: %s", e.name, msg.form, oneLine(msg.err)))
		return
	}
	worst := 0
	warns := 0
	for i, r := range msg.reps {
		if r.RelError > msg.reps[worst].RelError || (r.Inaccurate() && !msg.reps[worst].Inaccurate()) {
			worst = i
		}
		warns += len(r.Warnings)
	}
	a.gate(e, msg.reps, msg.rho, func(a *app, e *entry) {
		if err := a.replace(e, undoState{bank: msg.bank}); err != nil {
			a.setError(err)
			return
		}
		if len(msg.reps) > 0 {
			// the worst channel's report stands for the bank (the list's mark)
			rep := msg.reps[worst]
			e.report, e.reportRev = &rep, a.entry(e.id).rev
		}
		lvl := levelOK
		if warns > 0 {
			lvl = levelWarn
		}
		a.setStatus(lvl, fmt.Sprintf("converted %s to %s: worst rel error %s, %s", plural.Count(len(msg.reps), "channel"), msg.form, filters.RelErrorText(msg.reps[worst].RelError), plural.Count(warns, "warning")))
	})
}

func (a *app) addPreset(name string, vals map[string]string) tea.Cmd {
	a.setStatus(levelInfo, "building "+name+"…")
	return buildPreset(a.deps.Presets, name, vals)
}

func (a *app) onPreset(msg presetMsg) {
	if msg.err != nil {
		a.setError(msg.err)
		return
	}
	b := msg.built
	it := Item{Name: b.Name, Filter: b.Filter, Bank: b.Bank}
	switch {
	case b.Filter != nil, b.Bank != nil:
	case len(b.Kernels) > 0:
		k, err := arrays.FromRows(b.Kernels)
		if err != nil {
			a.setError(err)
			return
		}
		it.Kernels = k
	default:
		a.setStatus(levelError, msg.name+" built nothing")
		return
	}
	id, err := a.add(it, sessions.Origin{Note: "preset " + msg.label}, false)
	if err != nil {
		a.setError(err)
		return
	}
	e := a.entry(id)
	added := fmt.Sprintf("added %s (%s, %s)", e.name, e.form(), e.size())
	if b.Note != "" {
		a.setStatus(levelWarn, added+"; note: "+b.Note)
		return
	}
	a.setStatus(levelOK, added)
}

// onImport adds the items of a filter, bank or kernel file to the session and selects the
// last. An item the session holds already, under its name and with identical content, is
// selected instead of added again: Session.Add's rule, as for ssmlab import --session.
func (a *app) onImport(path string, items []Item) {
	var warnings, held []string
	for _, it := range items {
		origin := sessions.Origin{Note: "file " + path}
		switch {
		case it.Note != "":
			// a model's layer: w must not write a filter file over the checkpoint
			origin.Note += ": " + it.Note
		case it.Kernels == nil:
			origin.File = path
		}
		added, err := a.sess.Add(sessionItem(it, itemName(it.Name), origin)) // Add names it uniquely
		if err != nil {
			a.setError(fmt.Errorf("%s: %w", path, err))
			return
		}
		a.sel = added.ID
		if added.Existing {
			held = append(held, added.Name)
			continue
		}
		warnings = append(warnings, it.Warnings...)
	}
	switch {
	case len(held) > 0 && len(held) == len(items):
		a.setStatus(levelOK, fmt.Sprintf("%s is already open as %s (identical content): selected it, added nothing", path, strings.Join(held, ", ")))
		return
	case len(held) > 0:
		a.setStatus(levelOK, fmt.Sprintf("opened %s (%d new item(s)); already open with identical content, not added again: %s", path, len(items)-len(held), strings.Join(held, ", ")))
	case len(items) == 1 && items[0].Note != "":
		a.setStatus(levelOK, fmt.Sprintf("imported %s: %s", path, items[0].Note))
	default:
		a.setStatus(levelOK, fmt.Sprintf("opened %s (%d item(s))", path, len(items)))
	}
	if len(warnings) > 0 {
		a.setStatus(levelWarn, "warning: "+strings.Join(warnings, "; "))
	}
}

func (a *app) duplicate() error {
	e := a.selected()
	if e == nil {
		return errNoSelection
	}
	id, err := a.add(Item{Name: e.name + "-copy", Filter: e.filter, Bank: e.bank, Kernels: e.stored().Kernels},
		sessions.Origin{Note: "copy of " + e.name, Target: e.origin.Target}, false)
	if err != nil {
		return err
	}
	d := a.entry(id)
	d.ch = e.ch
	a.setStatus(levelOK, "duplicated "+e.name+" as "+d.name)
	return nil
}

func (a *app) rename(id, name string) {
	e := a.entry(id)
	if e == nil {
		return
	}
	name = uniqueName(a.sess, name, id)
	if name != e.name {
		if err := a.sess.Rename(id, name); err != nil {
			a.setError(err)
			return
		}
	}
	a.setStatus(levelOK, fmt.Sprintf("renamed %s to %s", e.name, name))
}

// remove deletes an item; the next one in the list is selected.
func (a *app) remove(id string) {
	e := a.entry(id)
	if e == nil {
		return
	}
	at := slices.Index(a.sess.Order(), id)
	if err := a.sess.Remove(id); err != nil {
		a.setError(err)
		return
	}
	a.unlinkJobs(id)
	delete(a.cache, id)
	if a.overlay == id {
		a.overlay = ""
	}
	if a.sel == id {
		a.sel = ""
		a.selectIndex(at)
	}
	a.setStatus(levelInfo, "deleted "+e.name)
}

// unlinkJobs clears the jobs' links to a removed item, as Session.Remove clears their
// records': a job running here points at it no longer, and does not write it back.
func (a *app) unlinkJobs(id string) {
	for _, j := range a.jobs {
		if j.sourceID == id {
			j.sourceID = ""
		}
		if j.resultID == id {
			j.resultID = ""
		}
	}
}

// onExported reports an export on the status line: the conversion a .json export made, or
// how closely RTF tensors read back (as `ssmlab export` prints it), as a warning when they
// lose more than filters.MaxRelError or cannot be read back, and the layout chosen where
// none was named.
func (a *app) onExported(msg exportedMsg) {
	var exists *ExistsError
	if errors.As(msg.err, &exists) {
		req, it := msg.req, msg.it
		req.over = true
		a.ask = overwriteQuestion(req.path+" exists.", ":export PATH writes elsewhere", "not exported: "+req.path+" is as it was",
			func(m *Model) tea.Cmd {
				m.setStatus(levelInfo, "exporting to "+req.path+"…")
				return exportItem(m.deps.Store, it, req)
			})
		a.setStatus(levelWarn, req.path+" exists: overwrite it?")
		return
	}
	if msg.err != nil {
		a.setError(msg.err)
		return
	}
	done := fmt.Sprintf("exported %s as %s", msg.req.path, msg.req.opts.Format)
	if msg.rep != nil {
		a.setStatus(levelOK, fmt.Sprintf("%s (%s → %s, rel error %s)", done, msg.rep.From, msg.rep.To, filters.RelErrorText(msg.rep.RelError)))
		return
	}
	if len(msg.out.ReadBack) == 0 {
		a.setStatus(levelOK, done)
		return
	}
	text, warn := msg.out.ReadBack[0].Summary("dtype=float64")
	// The layout export chose where none was named, and why (sessions.Exported.Notes).
	for _, n := range msg.out.Notes {
		text += "; " + n
	}
	if warn {
		a.setStatus(levelWarn, done+", but it "+text)
	} else {
		a.setStatus(levelOK, done+"; it "+text)
	}
}

// onSaved records a filter written to a filter file (w, :save): its origin's file.
func (a *app) onSaved(msg savedMsg) {
	var exists *ExistsError
	if errors.As(msg.err, &exists) {
		a.ask = overwriteQuestion(fmt.Sprintf("%s exists and is not %s's file.", msg.path, msg.it.Name), ":save PATH saves elsewhere",
			"not saved: "+msg.path+" is as it was, "+msg.it.Name+" is in the session",
			func(m *Model) tea.Cmd {
				m.setStatus(levelInfo, "saving "+msg.path+"…")
				return saveItem(m.deps.Store, msg.s, msg.id, msg.path, msg.it, true)
			})
		a.setStatus(levelWarn, msg.path+" exists: overwrite it?")
		return
	}
	if msg.err != nil {
		a.setError(msg.err)
		return
	}
	if e := a.entry(msg.id); e != nil && msg.s == a.sess {
		o := e.origin
		o.File = msg.path
		a.setError(a.sess.SetOrigin(e.id, o))
	}
	a.setStatus(levelOK, "saved "+msg.path)
}

// figureSeries is the channel an entry shows, for a figure.
func figureSeries(e *entry) FigureSeries {
	s := FigureSeries{Name: e.name, Filter: e.current(), Kernel: e.kernel()}
	if e.channels() > 1 {
		s.Name = fmt.Sprintf("%s, ch %d", e.name, e.ch)
	}
	return s
}
