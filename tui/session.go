package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
)

// entryKind says what an entry of the filters list holds.
type entryKind int

const (
	kindFilter entryKind = iota // one filter
	kindBank                    // a bank of channels of one form
	kindKernel                  // time-domain kernels only (a preset that is not a filter)
)

// entry is one item of the session. Filters are never modified in place: an edit builds a new
// filter, bumps rev and pushes the old one on the undo stack, so a command holding the old
// pointer computes on consistent data, and its result (keyed by the rev it was computed for)
// is dropped when it arrives late.
type entry struct {
	id      int
	name    string
	kind    entryKind
	filter  filters.Filter
	bank    *filters.Bank
	kernels [][]float64
	ch      int // the channel shown, for banks and kernels

	rev    uint64 // edit generation
	dirty  bool   // changed since loaded or saved
	path   string // file it came from or was last saved to
	origin string // where it came from, for the list's detail line
	target int    // id of the entry it was distilled from (0: none)
	undo   []undoState

	resp        *respData // responses of the shown channel, for resp.key
	respPending respKey   // the key of the responses being computed
	pz          *pzData   // poles and zeros of the shown channel
	pzPending   pzKey
	bankRho     float64 // worst spectral radius over a bank's channels (-1: unknown)
	bankRhoRev  uint64
	views       map[viewKey]*viewData // converted views of the shown channel
	lastReport  *filters.Report       // the report of the conversion that made this filter
}

type undoState struct {
	filter filters.Filter
	bank   *filters.Bank
}

// maxUndo bounds each entry's undo stack.
const maxUndo = 200

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

// kernel returns the shown kernel of a kernel entry.
func (e *entry) kernel() []float64 {
	if e.kind != kindKernel || len(e.kernels) == 0 {
		return nil
	}
	return e.kernels[min(e.ch, len(e.kernels)-1)]
}

// channels is the number of channels (1 for a filter).
func (e *entry) channels() int {
	switch e.kind {
	case kindBank:
		return len(e.bank.Channels)
	case kindKernel:
		return len(e.kernels)
	}
	return 1
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

// setCurrent replaces the shown filter (a bank's channel) by f, as one undoable edit.
func (e *entry) setCurrent(f filters.Filter) error {
	e.pushUndo()
	switch e.kind {
	case kindFilter:
		e.filter = f
	case kindBank:
		ch := slicesClone(e.bank.Channels)
		ch[e.ch] = f
		if f.Form() != e.bank.Form() {
			// A bank holds one form: convert the whole bank is a separate action; an edit
			// of one channel in another form converts that channel only, so refuse.
			e.undo = e.undo[:len(e.undo)-1]
			return fmt.Errorf("a bank holds one form (%s); convert the whole bank first", e.bank.Form())
		}
		b, err := filters.NewBank(ch)
		if err != nil {
			e.undo = e.undo[:len(e.undo)-1]
			return err
		}
		e.bank = b
	default:
		e.undo = e.undo[:len(e.undo)-1]
		return fmt.Errorf("kernels cannot be edited")
	}
	e.touch()
	return nil
}

// setBank replaces a bank, as one undoable edit.
func (e *entry) setBank(b *filters.Bank) {
	e.pushUndo()
	e.bank = b
	e.touch()
}

func (e *entry) pushUndo() {
	e.undo = append(e.undo, undoState{e.filter, e.bank})
	if len(e.undo) > maxUndo {
		e.undo = e.undo[len(e.undo)-maxUndo:]
	}
}

// popUndo restores the previous filter; false when there is none.
func (e *entry) popUndo() bool {
	if len(e.undo) == 0 {
		return false
	}
	u := e.undo[len(e.undo)-1]
	e.undo = e.undo[:len(e.undo)-1]
	e.filter, e.bank = u.filter, u.bank
	e.touch()
	return true
}

// touch records a change: a new generation, so every result in flight for the old one is
// dropped.
func (e *entry) touch() {
	e.rev++
	e.dirty = true
	e.views = nil
	e.lastReport = nil
	e.bankRho = -1
}

// item is the entry as stored.
func (e *entry) item() Item {
	return Item{Name: e.name, Filter: e.filter, Bank: e.bank, Kernels: e.kernels}
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// session is the in-memory list of entries.
type session struct {
	entries []*entry
	sel     int // index of the selected entry
	nextID  int
}

func (s *session) selected() *entry {
	if s.sel < 0 || s.sel >= len(s.entries) {
		return nil
	}
	return s.entries[s.sel]
}

func (s *session) byID(id int) *entry {
	if id == 0 {
		return nil
	}
	for _, e := range s.entries {
		if e.id == id {
			return e
		}
	}
	return nil
}

// add appends e with a fresh id and a name unique in the session, and selects it.
func (s *session) add(e *entry) *entry {
	s.nextID++
	e.id = s.nextID
	e.name = s.uniqueName(e.name)
	e.rev = 1
	e.bankRho = -1
	s.entries = append(s.entries, e)
	s.sel = len(s.entries) - 1
	return e
}

func (s *session) remove(id int) {
	for i, e := range s.entries {
		if e.id == id {
			s.entries = append(s.entries[:i], s.entries[i+1:]...)
			if s.sel >= len(s.entries) {
				s.sel = len(s.entries) - 1
			}
			return
		}
	}
}

var trailingNumber = regexp.MustCompile(`-\d+$`)

// uniqueName returns name, or name-2, name-3, … if it is taken.
func (s *session) uniqueName(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "filter"
	}
	taken := map[string]bool{}
	for _, e := range s.entries {
		taken[e.name] = true
	}
	if !taken[name] {
		return name
	}
	base := trailingNumber.ReplaceAllString(name, "")
	for i := 2; ; i++ {
		if c := fmt.Sprintf("%s-%d", base, i); !taken[c] {
			return c
		}
	}
}

// dirty lists the entries with unsaved changes.
func (s *session) dirty() []*entry {
	var out []*entry
	for _, e := range s.entries {
		if e.dirty && e.kind != kindKernel {
			out = append(out, e)
		}
	}
	return out
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultPath is where an entry without a file is saved: its name, made safe, in dir.
func defaultPath(dir, name string) string {
	base := strings.Trim(unsafeFileChars.ReplaceAllString(name, "_"), "_.")
	if base == "" {
		base = "filter"
	}
	return filepath.Join(dir, base+".json")
}

// freshPath is defaultPath, numbered so as not to overwrite a file that exists. It touches
// the file system: commands only.
func freshPath(dir, name string) string {
	p := defaultPath(dir, name)
	if _, err := os.Stat(p); err != nil {
		return p
	}
	base := strings.TrimSuffix(p, ".json")
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s-%d.json", base, i)
		if _, err := os.Stat(c); err != nil {
			return c
		}
	}
}
