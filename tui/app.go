package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
)

// app is the workbench's state, shared by its components: the session (the one model of the
// work: items, their order, origins and links, jobs, the UI's state), what the workbench
// computed from it, the jobs running now, and the status line. Its methods are the actions
// on the work; the components decide when to take them (lazygit's split of controllers and
// the domain).
type app struct {
	st   *styles
	keys *keyMap
	deps Deps
	sess *sessions.Session
	// cache holds each item's view state and computations, by ID.
	cache map[string]*item
	// epoch advances by epochStep with each session opened: an entry's generation is the
	// epoch plus the item's (sessions.Changed), so that a result computed for an item of the
	// session before, which may have had the same ID, is dropped.
	epoch uint64
	// sel is the selected item's ID ("" none); overlay the pinned one's, drawn under the
	// selection when overlayOn.
	sel, overlay string
	overlayOn    bool
	length       int // impulse response length L of the plots
	// commit is a conversion to make the entry's filter when it arrives (convert, c, a pole
	// move in a form that does not hold its poles).
	commit struct {
		id  string
		key viewKey
	}
	jobs []*job // the session's jobs, as the jobs pane shows them
	// ask is a question an action needs answered (a conversion outside the documented
	// accuracy): the root opens it once no other dialog is open.
	ask      dialog
	status   statusMsg
	messages []statusMsg // the last maxMessages results, warnings and errors, oldest first
	dir      string      // where new files go
	progress time.Duration
}

var errNoSelection = errors.New("no filter selected: add one with a")

// epochStep is far above any generation a session reaches.
const epochStep = 1 << 40

// maxMessages bounds the message log (M): it keeps what the status line reported.
const maxMessages = 100

// setStatus shows text on the status line. Results, warnings and errors also go to the
// message log, where a line cut to the terminal's width can be read whole; the info lines
// (L, the selected pole) are transient and are not kept.
func (a *app) setStatus(l level, text string) {
	a.status = statusMsg{text: text, level: l}
	if l == levelInfo {
		return
	}
	if len(a.messages) == maxMessages {
		a.messages = append(a.messages[:0], a.messages[1:]...)
	}
	a.messages = append(a.messages, a.status)
}

func (a *app) setError(err error) {
	if err != nil {
		a.setStatus(levelError, oneLine(err))
	}
}

// entry returns the filter or target with the given ID; nil when there is none.
func (a *app) entry(id string) *entry {
	if id == "" {
		return nil
	}
	if job, ok := strings.CutPrefix(id, fittedPrefix); ok {
		return a.fittedEntry(job)
	}
	e := &entry{id: id, rev: a.epoch + a.sess.Changed(id), dirty: a.sess.ItemDirty(id)}
	switch k, i := a.sess.Lookup(id); k {
	case sessions.KindFilter:
		f := a.sess.Filters[i]
		e.name, e.filter, e.bank, e.origin = f.Name, f.Filter, f.Bank, f.Origin
		e.kind = kindFilter
		if f.Bank != nil {
			e.kind = kindBank
		}
	case sessions.KindTarget:
		t := &a.sess.Targets[i]
		e.name, e.target, e.origin, e.kind = t.Name, t, t.Origin, kindKernel
	default:
		return nil
	}
	e.item = a.cache[id]
	if e.item == nil {
		e.item = &item{}
		a.cache[id] = e.item
	}
	return e
}

// entries returns the session's filters and targets in their order.
func (a *app) entries() []*entry {
	ids := a.sess.Order()
	out := make([]*entry, 0, len(ids))
	for _, id := range ids {
		out = append(out, a.entry(id))
	}
	return out
}

// selected returns the selected entry; nil when there is none.
func (a *app) selected() *entry { return a.entry(a.sel) }

// selIndex returns the selected item's place in the order (-1: none).
func (a *app) selIndex() int { return slices.Index(a.sess.Order(), a.sel) }

// selectIndex selects the item at place i of the order, clamped.
func (a *app) selectIndex(i int) {
	ids := a.sess.Order()
	if len(ids) == 0 {
		return
	}
	a.sel = ids[min(max(i, 0), len(ids)-1)]
}

// setCurrent replaces the shown filter (a bank's channel) by f, as one undoable edit.
func (a *app) setCurrent(e *entry, f filters.Filter) error {
	switch e.kind {
	case kindFilter:
		return a.replace(e, undoState{filter: f})
	case kindBank:
		if f.Form() != e.bank.Form() {
			// Converting the whole bank is a separate action; an edit of one channel in
			// another form would convert that channel only.
			return fmt.Errorf("a bank holds one form (%s); convert the whole bank first", e.bank.Form())
		}
		ch := slices.Clone(e.bank.Channels)
		ch[e.ch] = f
		b, err := filters.NewBank(ch)
		if err != nil {
			return err
		}
		return a.replace(e, undoState{bank: b})
	}
	return fmt.Errorf("kernels cannot be edited")
}

// replace makes v the entry's value, keeping the old one for undo.
func (a *app) replace(e *entry, v undoState) error {
	if err := a.sess.ReplaceFilter(e.id, filters.Document{Filter: v.filter, Bank: v.bank}); err != nil {
		return err
	}
	e.undo = append(e.undo, undoState{e.filter, e.bank, e.lastReport()})
	if len(e.undo) > maxUndo {
		e.undo = e.undo[len(e.undo)-maxUndo:]
	}
	return nil
}

// undo restores the selected filter's value before its last edit.
func (a *app) undo() (int, error) {
	e := a.selected()
	if e == nil {
		return 0, errNoSelection
	}
	if len(e.undo) == 0 {
		return 0, fmt.Errorf("nothing to undo for %s", e.name)
	}
	u := e.undo[len(e.undo)-1]
	if err := a.sess.ReplaceFilter(e.id, filters.Document{Filter: u.filter, Bank: u.bank}); err != nil {
		return 0, err
	}
	e.undo = e.undo[:len(e.undo)-1]
	if u.report != nil {
		e.report, e.reportRev = u.report, a.entry(e.id).rev
	}
	return len(e.undo), nil
}

// overlayEntry is the item drawn under the selected one: the pinned one, or else the target
// the selected filter was distilled from, as its job fitted it where it has changed since
// (fittedEntry): the plots then show what the job's error is of.
func (a *app) overlayEntry() *entry {
	if ov := a.entry(a.overlay); ov != nil && a.overlay != a.sel {
		return ov
	}
	sel := a.selected()
	if sel == nil {
		return nil
	}
	target := a.entry(sel.origin.Target)
	if j := a.jobByID(sel.origin.Job); target != nil && j != nil && j.fitted != nil && j.sourceID == target.id &&
		(j.fitted.filter != target.filter || j.fitted.bank != target.bank) {
		fe := a.fittedEntry(j.id)
		fe.ch = target.ch // the channel the target shows
		return fe
	}
	return target
}

// sayOverlay puts what the plots overlay now on the status line, naming it whole: a plot's
// legend may have room for only part of its name.
func (a *app) sayOverlay() {
	ov := a.overlayEntry()
	switch {
	case !a.overlayOn && ov != nil:
		a.setStatus(levelInfo, "overlay off: "+ov.name+" is not drawn (o or :overlay on draws it)")
	case !a.overlayOn:
		a.setStatus(levelInfo, "overlay off")
	case ov == nil && a.overlay != "" && a.overlay == a.sel:
		a.setStatus(levelInfo, "overlay on: "+a.selected().name+" is pinned: select another filter to compare")
	case ov == nil:
		a.setStatus(levelInfo, "overlay on, but nothing to overlay: pin a filter with v in the list, or select a distilled one")
	default:
		what := "the plots"
		if sel := a.selected(); sel != nil {
			what = sel.name
		}
		name := ov.name
		if job, ok := strings.CutPrefix(ov.id, fittedPrefix); ok {
			name = fmt.Sprintf("%s, as job #%d fitted it (it has changed since),", a.sourceName(a.jobByID(job)), a.jobByID(job).num)
		}
		a.setStatus(levelInfo, "overlay on: "+name+" is drawn over "+what)
	}
}
