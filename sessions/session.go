package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Errors wrapped by the package's failures.
var (
	// ErrInvalid marks a malformed session file or a bad argument to a Session method.
	ErrInvalid = errors.New("invalid session")
	// ErrNotFound marks an ID the session does not hold.
	ErrNotFound = errors.New("no such item")
)

// invalidError is a failure of kind ErrInvalid: "invalid session: msg".
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return ErrInvalid.Error() + ": " + e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

// within places an error in an item ("target "t1""), as a failure of kind ErrInvalid:
// "invalid session: target "t1": problem".
func within(where string, err error) error {
	var ie *invalidError
	if errors.As(err, &ie) && err == error(ie) {
		return &invalidError{where + ": " + ie.msg}
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalid, where, err)
}

// Entry is a filter or a bank of the session. Exactly one of Filter and Bank is set.
// Filters and banks are treated as values: replace them (ReplaceFilter) rather than change
// them in place, so that snapshots (Clone) and background saves stay consistent.
type Entry struct {
	ID     string
	Name   string
	Filter filters.Filter
	Bank   *filters.Bank
	Origin Origin

	changed uint64 // the session's generation at its last change
}

// Document returns the entry as a filter document.
func (e Entry) Document() filters.Document {
	return filters.Document{Name: e.Name, Filter: e.Filter, Bank: e.Bank}
}

// Describe returns a short description: "tf filter of order 4", "bank of 8 tf channels of
// order 64" (the largest order, for a bank whose channels differ).
func (e Entry) Describe() string {
	if e.Bank != nil {
		order := 0
		for _, c := range e.Bank.Channels {
			order = max(order, c.Order())
		}
		return fmt.Sprintf("bank of %d %s channels of order %d", len(e.Bank.Channels), e.Bank.Form(), order)
	}
	if e.Filter == nil {
		return "empty entry"
	}
	return fmt.Sprintf("%s filter of order %d", e.Filter.Form(), e.Filter.Order())
}

// checkName is the rule for the names a session keeps: an item's, and the file and tensor a
// target came from. A name is UTF-8 text: a session file is JSON, whose encoder would replace
// other bytes, renaming the item. Its error is of kind ErrInvalid but says nothing of a
// session, since the name may be one an import is about to give.
func checkName(what, name string) error {
	if !utf8.ValidString(name) {
		return inputf("%s %q is not valid UTF-8", what, name)
	}
	return nil
}

func (e Entry) validate() error {
	if err := checkName("the name", e.Name); err != nil {
		return err
	}
	if err := e.Origin.validate(); err != nil {
		return err
	}
	switch {
	case (e.Filter == nil) == (e.Bank == nil):
		return invalidf("an entry holds a Filter or a Bank, not both or neither")
	case e.Filter != nil:
		if err := e.Filter.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	default:
		if err := e.Bank.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return nil
}

// Source says where a target's kernels came from.
type Source struct {
	// Path is the file; a relative path is relative to the session file's directory.
	Path string
	// Tensor names the array in the file ("" for the only array of an .npy or CSV file).
	Tensor string
}

// Relative returns the source with its path made relative to dir, the directory of the
// session file it will be saved in (absolute when no relative path leads there), so that
// it names the same file when the session is loaded. src.Path is taken as the current
// directory sees it.
func (src Source) Relative(dir string) Source {
	abs, err := filepath.Abs(src.Path)
	if err != nil {
		return src
	}
	src.Path = abs
	if d, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(d, abs); err == nil {
			src.Path = rel
		}
	}
	return src
}

// Target is a set of kernels to distil filters from: a (channels, length) array, or a
// (length) array for one kernel.
type Target struct {
	ID      string
	Name    string
	Kernels *arrays.Array
	Source  *Source // where the kernels came from, when known
	// Linked targets keep only Source in the session file; Load reads the kernels from it.
	Linked bool
	// Err is set by Load when a linked target's source could not be read; Kernels is then
	// nil. It is not saved.
	Err    error
	Origin Origin

	changed uint64 // the session's generation at its last change
}

// Origin says where an item came from: a line for the user and, for a distilled filter, the
// item it was fitted to and the job that fitted it. Links to items that are removed are
// cleared.
type Origin struct {
	// Note says it in a few words: "preset butter order=4", "file p.json", "copy of x".
	Note string
	// File is the filter file the item was read from or last written to; "" for none.
	File string
	// Target is the ID of the item a distilled filter approximates; "" for none.
	Target string
	// Job is the ID of the job that made the item; "" for none.
	Job string
}

func (o Origin) validate() error {
	for _, v := range []string{o.Note, o.File, o.Target, o.Job} {
		if !utf8.ValidString(v) {
			return invalidf("the origin is not valid UTF-8")
		}
	}
	return nil
}

// Describe returns a short description: "4 kernels of length 2048", "1 kernel of length 100".
func (t Target) Describe() string {
	if t.Kernels == nil {
		return "kernels not loaded"
	}
	c, l := kernelShape(t.Kernels)
	if c == 1 {
		return fmt.Sprintf("1 kernel of length %d", l)
	}
	return fmt.Sprintf("%d kernels of length %d", c, l)
}

// kernelShape returns the channels and length of a 1-D or 2-D kernel array.
func kernelShape(a *arrays.Array) (channels, length int) {
	if len(a.Shape) == 1 {
		return 1, a.Shape[0]
	}
	return a.Shape[0], a.Shape[1]
}

func (t Target) validate() error {
	if err := checkName("the name", t.Name); err != nil {
		return err
	}
	if t.Source != nil {
		if err := checkName("the source file", t.Source.Path); err != nil {
			return err
		}
		if err := checkName("the source tensor", t.Source.Tensor); err != nil {
			return err
		}
	}
	if err := t.Origin.validate(); err != nil {
		return err
	}
	if t.Linked && (t.Source == nil || t.Source.Path == "") {
		return invalidf("a linked target needs a source path")
	}
	if t.Kernels == nil {
		if t.Linked {
			return nil // its source may be missing; Err says why
		}
		return invalidf("a target needs kernels")
	}
	return checkKernels(t.Kernels)
}

// checkKernels checks that a is a 1-D or 2-D array of finite values with samples. Its errors
// are of kind ErrInvalid but say nothing of a session: the kernels may come from an imported
// .npy or CSV file (a session's target adds "invalid session: target ...": within).
func checkKernels(a *arrays.Array) error {
	if err := a.Validate(); err != nil {
		return inputf("kernels: %w", err)
	}
	if len(a.Shape) != 1 && len(a.Shape) != 2 {
		return inputf("kernels of shape %s: want (length) or (channels, length)", arrays.ShapeString(a.Shape))
	}
	if c, l := kernelShape(a); c == 0 || l == 0 {
		return inputf("kernels of shape %s hold no samples", arrays.ShapeString(a.Shape))
	}
	return nil
}

// Session is the work of one ssmlab session: filters and banks, distillation targets, jobs
// and the UI's state. Items have IDs that stay the same for their lifetime in the session,
// across saves and loads, and are never reused. Filters and targets are listed in an order
// of their own (Order): the order they were added in, kept by saving.
//
// Change the session through its methods; each change advances Generation, and the session
// is Dirty until it is saved; ItemDirty says which items changed. The fields may be read
// freely; after changing them directly, call Touch. UI changes (SetUI) do not make the
// session dirty: they are saved with the next save, and autosaved. Filters, banks, kernel
// arrays and job JSON are values: replace them, never change them in place. A Session is not
// safe for concurrent use; to save in the background, Clone it first (cheap: it shares those
// values) and report back with MarkSaved.
type Session struct {
	Filters []Entry
	Targets []Target
	Jobs    []Job
	UI      UIState

	// Path is the file the session was loaded from or last saved to; "" for a new session.
	Path string

	nextID   int      // the next ID's number
	gen      uint64   // advances on every change
	savedGen uint64   // gen when last saved or loaded
	uiGen    uint64   // advances on every change of UI
	order    []string // IDs of filters and targets as listed; Order reconciles it
	version  int      // the format version the session's file was read at; 0: CurrentVersion
	// deleted are the filters and targets removed since the session was loaded or saved:
	// unsaved work, as the items ItemDirty reports are (Deleted)
	deleted []deletion
	// auto is the session's autosave file; Clone shares it, so that an autosave or a save
	// of a clone is known to the session it was cloned from.
	auto *autosaveState
	// disk is the version of the session's file it was loaded from or saved as; Clone
	// shares it, so that a save of a clone is known to the session it was cloned from.
	disk *diskVersion
}

// New returns an empty session.
func New() *Session {
	return &Session{nextID: 1, disk: &diskVersion{}, auto: &autosaveState{}}
}

// Generation returns a counter that advances on every change.
func (s *Session) Generation() uint64 { return s.gen }

// Dirty reports whether the session changed since it was loaded or saved.
func (s *Session) Dirty() bool { return s.gen != s.savedGen }

// Touch records a change made directly to the fields.
func (s *Session) Touch() { s.gen++ }

// change records a change and returns its generation.
func (s *Session) change() uint64 {
	s.gen++
	return s.gen
}

// MarkSaved records that a snapshot of generation gen was saved to path (by a Clone, in the
// background): the session is clean unless it changed since.
func (s *Session) MarkSaved(path string, gen uint64) {
	s.Path = path
	s.savedGen = gen
	// a removal after the snapshot that was saved is still unsaved
	s.deleted = slices.DeleteFunc(s.deleted, func(d deletion) bool { return d.gen <= gen })
	s.version = CurrentVersion // what Marshal writes
}

// FileVersion returns the version of the session format that the session's file is written
// in: the version it was read at (an older file is migrated as it is read, and its file stays
// as it was), CurrentVersion once the session is saved (saving writes the current version)
// and for a session that was never read from a file.
func (s *Session) FileVersion() int {
	if s.version == 0 {
		return CurrentVersion
	}
	return s.version
}

// Changed returns the generation of the last change of a filter or target (0: unchanged
// since the session was loaded); a UI may key what it computed from an item by it.
func (s *Session) Changed(id string) uint64 {
	switch k, i := s.Lookup(id); k {
	case KindFilter:
		return s.Filters[i].changed
	case KindTarget:
		return s.Targets[i].changed
	}
	return 0
}

// ItemDirty reports whether a filter or target changed since the session was loaded or
// saved.
func (s *Session) ItemDirty(id string) bool { return s.Changed(id) > s.savedGen }

// deletion is a filter or target removed from the session: its name, and the generation of
// its removal.
type deletion struct {
	name string
	gen  uint64
}

// Deleted names the filters and targets removed since the session was loaded or saved, in
// the order of their removal: unsaved work, like the items ItemDirty reports. An autosave
// keeps them, and RecoverAutosave brings them back.
func (s *Session) Deleted() []string {
	names := make([]string, len(s.deleted))
	for i, d := range s.deleted {
		names[i] = d.name
	}
	return names
}

// Kind is the kind of an item.
type Kind int

// The kinds of items.
const (
	KindNone Kind = iota
	KindFilter
	KindTarget
	KindJob
)

func (k Kind) String() string {
	return [...]string{"none", "filter", "target", "job"}[k]
}

// Lookup returns the kind of the item with the given ID and its index in Filters, Targets
// or Jobs; KindNone and -1 if there is none.
func (s *Session) Lookup(id string) (Kind, int) {
	for i := range s.Filters {
		if s.Filters[i].ID == id {
			return KindFilter, i
		}
	}
	for i := range s.Targets {
		if s.Targets[i].ID == id {
			return KindTarget, i
		}
	}
	for i := range s.Jobs {
		if s.Jobs[i].ID == id {
			return KindJob, i
		}
	}
	return KindNone, -1
}

// Filter returns the filter entry with the given ID.
func (s *Session) Filter(id string) (Entry, bool) {
	if k, i := s.Lookup(id); k == KindFilter {
		return s.Filters[i], true
	}
	return Entry{}, false
}

// Target returns the target with the given ID.
func (s *Session) Target(id string) (Target, bool) {
	if k, i := s.Lookup(id); k == KindTarget {
		return s.Targets[i], true
	}
	return Target{}, false
}

// newID returns an unused ID: the prefix ('f', 't' or 'j') and the next number.
func (s *Session) newID(prefix byte) string {
	for {
		if s.nextID < 1 {
			s.nextID = 1
		}
		id := string(prefix) + strconv.Itoa(s.nextID)
		s.nextID++
		if k, _ := s.Lookup(id); k == KindNone {
			return id
		}
	}
}

func notFound(id string) error { return fmt.Errorf("%w: %q", ErrNotFound, id) }

// AddFilter adds a filter or bank under the document's name and returns its new ID.
func (s *Session) AddFilter(doc filters.Document) (string, error) {
	return s.AddEntry(Entry{Name: doc.Name, Filter: doc.Filter, Bank: doc.Bank})
}

// AddEntry adds a filter or bank entry, with its origin, at the end of the order and returns
// its new ID (e.ID is ignored).
func (s *Session) AddEntry(e Entry) (string, error) {
	e.ID = ""
	if err := e.validate(); err != nil {
		return "", err
	}
	e.ID, e.changed = s.placeLast('f')
	s.Filters = append(s.Filters, e)
	return e.ID, nil
}

// placeLast gives a new item an unused ID with the prefix, puts it last in the order and
// records the change, returning the ID and the change's generation; the caller appends the
// item to its list.
func (s *Session) placeLast(prefix byte) (string, uint64) {
	order := s.Order()
	id := s.newID(prefix)
	s.order = append(order, id)
	return id, s.change()
}

// ReplaceFilter replaces the filter or bank of an entry (after a conversion, say), keeping
// its ID and origin; the entry takes the document's name unless the document has none.
func (s *Session) ReplaceFilter(id string, doc filters.Document) error {
	k, i := s.Lookup(id)
	if k != KindFilter {
		return notFound(id)
	}
	e := s.Filters[i]
	e.Filter, e.Bank = doc.Filter, doc.Bank
	if doc.Name != "" {
		e.Name = doc.Name
	}
	if err := e.validate(); err != nil {
		return err
	}
	e.changed = s.change()
	s.Filters[i] = e
	return nil
}

// SetOrigin records where a filter or target came from. Like the UI's state, it does not
// make the session dirty; it is saved with the next save.
func (s *Session) SetOrigin(id string, o Origin) error {
	if err := o.validate(); err != nil {
		return err
	}
	switch k, i := s.Lookup(id); k {
	case KindFilter:
		s.Filters[i].Origin = o
	case KindTarget:
		s.Targets[i].Origin = o
	default:
		return notFound(id)
	}
	s.uiGen++
	return nil
}

// AddTarget adds a target at the end of the order and returns its new ID (t.ID is ignored).
// The kernels are shared, not copied.
func (s *Session) AddTarget(t Target) (string, error) {
	t.ID, t.Err = "", nil
	if err := t.validate(); err != nil {
		return "", err
	}
	if t.Source != nil {
		src := *t.Source
		t.Source = &src
	}
	t.ID, t.changed = s.placeLast('t')
	s.Targets = append(s.Targets, t)
	return t.ID, nil
}

// Rename gives an item a new name (a job's name is its Kind).
func (s *Session) Rename(id, name string) error {
	if err := checkName("the new name", name); err != nil {
		return err
	}
	switch k, i := s.Lookup(id); k {
	case KindFilter:
		s.Filters[i].Name = name
		s.Filters[i].changed = s.change()
	case KindTarget:
		s.Targets[i].Name = name
		s.Targets[i].changed = s.change()
	case KindJob:
		s.Jobs[i].Kind = name
		s.change()
	default:
		return notFound(id)
	}
	return nil
}

// Remove deletes an item; the UI's selection and overlay, and the links of other items to
// it, are cleared.
func (s *Session) Remove(id string) error {
	name := ""
	switch k, i := s.Lookup(id); k {
	case KindFilter:
		name = s.Filters[i].Name
		s.Filters = slices.Delete(s.Filters, i, i+1)
	case KindTarget:
		name = s.Targets[i].Name
		s.Targets = slices.Delete(s.Targets, i, i+1)
	case KindJob:
		s.Jobs = slices.Delete(s.Jobs, i, i+1)
	default:
		return notFound(id)
	}
	s.order = slices.DeleteFunc(s.order, func(o string) bool { return o == id })
	s.unlink(id)
	gen := s.change()
	if name != "" {
		s.deleted = append(s.deleted, deletion{name: name, gen: gen})
	}
	return nil
}

// unlink clears every link to id: origins, jobs' targets and results, the UI's selection and
// overlay.
func (s *Session) unlink(id string) {
	clear := func(o *Origin) {
		if o.Target == id {
			o.Target = ""
		}
		if o.Job == id {
			o.Job = ""
		}
	}
	for i := range s.Filters {
		clear(&s.Filters[i].Origin)
	}
	for i := range s.Targets {
		clear(&s.Targets[i].Origin)
	}
	for i := range s.Jobs {
		if s.Jobs[i].Target == id {
			s.Jobs[i].Target = ""
		}
		if s.Jobs[i].Result == id {
			s.Jobs[i].Result = ""
		}
	}
	if s.UI.Selected == id {
		s.UI.Selected = ""
	}
	if s.UI.Overlay == id {
		s.UI.Overlay = ""
	}
}

// Duplicate inserts a deep copy of an item after it, named "NAME (copy)", and returns the
// copy's ID. A copy of a filter or target keeps its link to a target, not to its job.
func (s *Session) Duplicate(id string) (string, error) {
	var cp string
	switch k, i := s.Lookup(id); k {
	case KindFilter:
		e, err := copyEntry(s.Filters[i])
		if err != nil {
			return "", err
		}
		e.ID = s.newID('f')
		e.Name, e.Origin = copyNamed(e.Name, e.Origin)
		e.changed = s.gen + 1
		s.Filters = slices.Insert(s.Filters, i+1, e)
		cp = e.ID
	case KindTarget:
		t := copyTarget(s.Targets[i])
		t.ID = s.newID('t')
		t.Name, t.Origin = copyNamed(t.Name, t.Origin)
		t.changed = s.gen + 1
		s.Targets = slices.Insert(s.Targets, i+1, t)
		cp = t.ID
	case KindJob:
		j := copyJob(s.Jobs[i])
		j.ID = s.newID('j')
		s.Jobs = slices.Insert(s.Jobs, i+1, j)
		s.change()
		return j.ID, nil
	default:
		return "", notFound(id)
	}
	order := s.Order()
	at := slices.Index(order, id) + 1
	s.order = slices.Insert(order, at, cp)
	s.change()
	return cp, nil
}

// copyNamed returns the name and origin of a copy of the item named name: "NAME (copy)", and
// "copy of NAME" keeping the origin's link to a target, not to its job.
func copyNamed(name string, o Origin) (string, Origin) {
	return name + " (copy)", Origin{Note: "copy of " + name, Target: o.Target}
}

// copyEntry deep-copies a filter through its file format, which reads back bit-identical
// numbers.
func copyEntry(e Entry) (Entry, error) {
	b, err := filterfile.Marshal(e.Document())
	if err != nil {
		return Entry{}, err
	}
	doc, err := filterfile.Unmarshal(b)
	if err != nil {
		return Entry{}, err
	}
	e.Filter, e.Bank = doc.Filter, doc.Bank
	return e, nil
}

func copyTarget(t Target) Target {
	if t.Kernels != nil {
		t.Kernels = t.Kernels.Clone()
	}
	if t.Source != nil {
		src := *t.Source
		t.Source = &src
	}
	return t
}

// Clone returns a copy of the session, with the same IDs, generations and path, for saving
// or autosaving in the background. The item lists are copied; filters, banks, kernels and
// job JSON are shared, as the values they are treated as (see Entry).
func (s *Session) Clone() *Session {
	c := *s
	c.Filters = slices.Clone(s.Filters)
	c.Targets = slices.Clone(s.Targets)
	c.Jobs = slices.Clone(s.Jobs)
	for i := range c.Jobs {
		c.Jobs[i].Log = slices.Clone(c.Jobs[i].Log)
	}
	c.order = slices.Clone(s.order)
	c.deleted = slices.Clone(s.deleted)
	c.UI = s.UI.clone()
	return &c
}

// compactJSON returns raw without insignificant space (nil stays nil).
func compactJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	n, err := parseTree(raw)
	if err != nil {
		return slices.Clone(raw)
	}
	return n.compact(nil)
}
