package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// entryKind says what an item of the session holds.
type entryKind int

const (
	kindFilter entryKind = iota // one filter
	kindBank                    // a bank of channels of one form
	kindKernel                  // time-domain kernels (a target: a preset that is not a filter, a file of kernels)
)

// item is what the workbench keeps of a session's filter or target between frames: the
// channel shown, what it computed from it and the undo history of its values. Results are
// keyed by the generation of the item they were computed for (sessions.Changed), so a result
// that arrives after the item changed is dropped; one response and one pole/zero computation
// per item are in flight at a time.
type item struct {
	ch int // the channel shown, for banks and kernels

	resp      *respData // responses of the shown channel
	respBusy  bool      // a response computation is in flight
	pz        *pzData   // poles and zeros of the shown channel
	pzBusy    bool
	rho       float64 // worst spectral radius over a bank's channels, for generation rhoRev-1
	rhoRev    uint64  // 0: none
	rhoAsked  uint64  // the generation+1 last asked for
	views     map[viewKey]*viewData
	viewsRev  uint64
	report    *filters.Report // of the conversion that made the filter of generation reportRev
	reportRev uint64
	undo      []undoState

	rows   [][]float64 // a target's kernels as rows, for rowsOf
	rowsOf *arrays.Array
}

// undoState is a filter entry's value before an edit: the history is of the session's
// values, restored with ReplaceFilter, with the report of the conversion that made that value
// (so that an undo back to an inaccurate conversion keeps the list's ≈).
type undoState struct {
	filter filters.Filter
	bank   *filters.Bank
	report *filters.Report
}

// maxUndo bounds each item's undo history.
const maxUndo = 200

// entry is a session item as the panes see it: the session's filter entry or target, read
// afresh for each use (the session is the one model of the work), with the workbench's
// cache of what it computed.
type entry struct {
	*item
	id     string
	kind   entryKind
	name   string
	filter filters.Filter
	bank   *filters.Bank
	target *sessions.Target // kernels
	origin sessions.Origin
	rev    uint64 // the item's generation
	dirty  bool   // changed since the session was loaded or saved
}

// current returns the filter shown (a bank's selected channel); nil for kernels.
func (e *entry) current() filters.Filter {
	switch e.kind {
	case kindFilter:
		return e.filter
	case kindBank:
		if e.bank == nil || len(e.bank.Channels) == 0 {
			return nil
		}
		return e.bank.Channels[min(e.ch, len(e.bank.Channels)-1)]
	}
	return nil
}

// kernels returns a target's kernels as rows (nil when they could not be read).
func (e *entry) kernels() [][]float64 {
	if e.kind != kindKernel || e.target.Kernels == nil {
		return nil
	}
	if e.rowsOf != e.target.Kernels {
		e.rows, e.rowsOf = rowsOf(e.target.Kernels), e.target.Kernels
	}
	return e.rows
}

// kernel returns the shown kernel of a kernel entry.
func (e *entry) kernel() []float64 {
	ks := e.kernels()
	if len(ks) == 0 {
		return nil
	}
	return ks[min(e.ch, len(ks)-1)]
}

// problem says why a target has no kernels (a linked source that could not be read).
func (e *entry) problem() error {
	if e.kind != kindKernel || e.target.Kernels != nil {
		return nil
	}
	if e.target.Err != nil {
		return e.target.Err
	}
	return errors.New("its kernels are not loaded")
}

// channels is the number of channels (1 for a filter).
func (e *entry) channels() int {
	switch e.kind {
	case kindBank:
		return len(e.bank.Channels)
	case kindKernel:
		return len(e.kernels())
	}
	return 1
}

// channelText names the channel shown as word ("channel", "ch") and its number, counted from
// 0 as ssmlab counts channels everywhere (--channel 0, "worst channel 0", the reports), with
// the range: "channel 2 of 0–3" ("channel 0" alone).
func (e *entry) channelText(word string) string {
	if e.channels() == 1 {
		return word + " 0"
	}
	return fmt.Sprintf("%s %d of 0–%d", word, e.ch, e.channels()-1)
}

// form is the entry's form ("kernel" for kernels).
func (e *entry) form() string {
	switch e.kind {
	case kindBank:
		return string(e.bank.Form())
	case kindKernel:
		return "kernel"
	}
	return string(e.filter.Form())
}

// order is the state size of the shown channel (the kernel length for kernels).
func (e *entry) order() int {
	if f := e.current(); f != nil {
		return f.Order()
	}
	return len(e.kernel())
}

// size names the entry's size: "order n", or "length L" for kernels.
func (e *entry) size() string {
	if e.kind == kindKernel {
		return fmt.Sprintf("length %d", e.order())
	}
	return fmt.Sprintf("order %d", e.order())
}

// lastReport is the report of the conversion that made the current filter, if one did.
func (e *entry) lastReport() *filters.Report {
	if e.report != nil && e.reportRev == e.rev {
		return e.report
	}
	return nil
}

// item is the entry as stored.
func (e *entry) stored() Item {
	it := Item{Name: e.name, Filter: e.filter, Bank: e.bank}
	if e.kind == kindKernel {
		it.Kernels = e.target.Kernels
	}
	return it
}

// rowsOf returns the kernels of a (length) or (channels, length) array.
func rowsOf(a *arrays.Array) [][]float64 {
	if len(a.Shape) != 2 {
		return [][]float64{a.Data}
	}
	rows := make([][]float64, a.Shape[0])
	for i := range rows {
		rows[i] = a.Data[i*a.Shape[1] : (i+1)*a.Shape[1]]
	}
	return rows
}

// uniqueName returns itemName(name), or name-2, name-3, … if another item has it
// (Session.UniqueName).
func uniqueName(s *sessions.Session, name string, except string) string {
	return s.UniqueName(itemName(name), except)
}

// itemName is name without surrounding spaces; an empty name is "filter".
func itemName(name string) string {
	if name = strings.TrimSpace(name); name == "" {
		return "filter"
	}
	return name
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultPath is where an item without a file is saved: its name, made safe, with ext, in
// dir.
func defaultPath(dir, name, ext string) string {
	base := strings.Trim(unsafeFileChars.ReplaceAllString(name, "_"), "_.")
	if base == "" {
		base = "filter"
	}
	return filepath.Join(dir, base+ext)
}
