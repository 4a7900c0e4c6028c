package tui

import (
	"math"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/filters"
)

// After every message the root asks for what the view is missing; the computations run in
// commands and their results come back keyed by the item's generation (cmds.go).

// refresh starts the computations the view lacks: every item's poles and zeros and a bank's
// stability (for the list's marks), the selected item's responses and its conversion to the
// form tab shown, a conversion waiting to be committed, and the overlay's responses.
func (a *app) refresh(tab filters.Form) tea.Cmd {
	var cmds []tea.Cmd
	for _, e := range a.entries() {
		cmds = append(cmds, a.ensurePZ(e))
		if e.kind == kindBank && e.rhoAsked != e.rev+1 {
			e.rhoAsked = e.rev + 1
			cmds = append(cmds, computeBankRho(e.id, e.rev, e.bank))
		}
	}
	if e := a.selected(); e != nil {
		cmds = append(cmds, a.ensureResp(e))
		if tab != "" && e.kind != kindKernel {
			cmds = append(cmds, a.ensureView(e, tab))
		}
	}
	if e := a.entry(a.commit.id); e != nil {
		cmds = append(cmds, a.ensureView(e, a.commit.key.form))
	}
	if ov := a.overlayEntry(); ov != nil && a.overlayOn {
		// an item's poles are computed above; a job's fitted source is not an item
		cmds = append(cmds, a.ensureResp(ov), a.ensurePZ(ov))
	}
	return tea.Batch(cmds...)
}

// respKeyFor is the responses the plots want for e now.
func (a *app) respKeyFor(e *entry) respKey {
	return respKey{rev: e.rev, ch: e.ch, length: a.length, n: freqPoints}
}

// ensureResp starts the responses of e if they are missing. One computation per entry is in
// flight at a time: when it returns for an older generation it is dropped, and the next
// refresh starts the current one (so holding a key does not pile up work).
func (a *app) ensureResp(e *entry) tea.Cmd {
	want := a.respKeyFor(e)
	if (e.resp != nil && e.resp.key == want) || e.respBusy || e.problem() != nil {
		return nil
	}
	e.respBusy = true
	omega := make([]float64, want.n)
	for i := range omega {
		omega[i] = math.Pi * float64(i) / float64(want.n-1)
	}
	return computeResponses(a.deps.Analyzer, e.id, want, e.current(), e.kernel(), omega)
}

// ensurePZ takes the poles and zeros the form holds at once (so a moved pole is drawn in the
// same frame) and computes the rest in a command.
func (a *app) ensurePZ(e *entry) tea.Cmd {
	f := e.current()
	if f == nil {
		return nil
	}
	want := pzKey{rev: e.rev, ch: e.ch}
	if e.pz == nil || e.pz.key != want {
		poles, hp := filters.HeldPoles(f)
		zeros, hz := filters.HeldZeros(f)
		e.pz = &pzData{key: want, poles: poles, zeros: zeros, havePoles: hp, haveZeros: hz}
	}
	if (e.pz.havePoles && e.pz.haveZeros) || e.pz.err != nil || e.pzBusy {
		return nil // complete, or one in flight: looked at again when it returns
	}
	e.pzBusy = true
	return computePZ(a.deps.Analyzer, e.id, want, f)
}

// ensureView starts the conversion of e's shown filter to form, unless it has one.
func (a *app) ensureView(e *entry, form filters.Form) tea.Cmd {
	f := e.current()
	if f == nil || string(form) == e.form() {
		return nil
	}
	if e.views == nil || e.viewsRev != e.rev {
		e.views, e.viewsRev = map[viewKey]*viewData{}, e.rev
	}
	key := viewKey{rev: e.rev, ch: e.ch, form: form}
	if _, ok := e.views[key]; ok {
		return nil
	}
	e.views[key] = &viewData{pending: true}
	return convertView(e.id, key, f)
}

func (a *app) onResp(msg respMsg) {
	e := a.entry(msg.id)
	if e == nil {
		return
	}
	e.respBusy = false
	if msg.key != a.respKeyFor(e) {
		return // an older generation: dropped
	}
	e.resp = &respData{key: msg.key, omega: msg.omega, r: msg.r, err: msg.err, overflow: msg.overflow}
}

func (a *app) onPZ(msg pzMsg) {
	e := a.entry(msg.id)
	if e == nil {
		return
	}
	e.pzBusy = false
	if e.pz == nil || e.pz.key != msg.key || msg.key.rev != e.rev {
		return
	}
	pz := *e.pz
	pz.err = msg.err
	if msg.err == nil {
		if !pz.havePoles {
			pz.poles, pz.havePoles = msg.poles, true
		}
		if !pz.haveZeros {
			pz.zeros, pz.haveZeros = msg.zeros, true
		}
	}
	e.pz = &pz
}

func (a *app) onBankRho(msg bankRhoMsg) {
	e := a.entry(msg.id)
	if e == nil || e.rev != msg.rev {
		return
	}
	e.rho, e.rhoRev = msg.rho, msg.rev+1
	if msg.err != nil {
		e.rho = math.Inf(1)
	}
}

// onView stores a conversion, and commits it when it was asked for.
func (a *app) onView(msg viewMsg) {
	e := a.entry(msg.id)
	if e == nil || e.views == nil {
		return
	}
	v := e.views[msg.key]
	if v == nil {
		return // the filter changed: dropped
	}
	*v = viewData{f: msg.f, rep: msg.rep, rho: msg.rho, err: msg.err}
	if a.commit.id == e.id && a.commit.key == msg.key {
		a.commitView(e, msg.key, v)
	}
}

// rhoOf returns the spectral radius behind the list's mark: the worst channel of a bank, the
// shown filter's otherwise.
func (e *entry) rhoOf() (float64, bool) {
	switch e.kind {
	case kindKernel:
		return 0, false
	case kindBank:
		return e.rho, e.rhoRev == e.rev+1
	}
	if e.pz != nil && e.pz.havePoles && e.pz.key.rev == e.rev {
		return radius(e.pz.poles), true
	}
	return 0, false
}
