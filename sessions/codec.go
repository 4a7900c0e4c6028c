package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The session file format is described in docs/formats.md ("Session files").

// FormatName is the value of a session file's "format" key.
const FormatName = "ssmlab-session"

// CurrentVersion is the version of the session format this package writes. It reads every
// version up to it, migrating older ones forward.
const CurrentVersion = 1

// VersionError is the error for a session file written by a newer ssmlab.
type VersionError struct {
	Version, Supported int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("session version %d is newer than this ssmlab supports (%d)", e.Version, e.Supported)
}

// migrations[v] rewrites the tree of a version-v file into version v+1. Version 1 is the
// first, so there are none yet; see docs/formats.md for how one is added.
var migrations = map[int]func(root *jnode) error{}

// maxIDNumber bounds the numbers of IDs: larger ones in a file are not counted when the
// next ID is chosen.
const maxIDNumber = 1 << 50

// idPattern is what an item's ID may look like.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// autosaveInfo is the "autosave" member of an autosave file.
type autosaveInfo struct {
	Origin string    // the session's file, absolute; "" for an untitled session
	Saved  time.Time // when the autosave was written
}

// Marshal encodes the session as a version-CurrentVersion session file. Arrays of more than
// arrays.InlineMax numbers, in filters and kernels, are written packed (base64 of
// little-endian float64); the rest is plain JSON in the layout of filter files.
func Marshal(s *Session) ([]byte, error) {
	return marshal(s, nil)
}

func marshal(s *Session, auto *autosaveInfo) ([]byte, error) {
	root := objNode()
	root.set("format", strNode(FormatName))
	root.set("version", intNode(CurrentVersion))
	if auto != nil {
		a := objNode()
		a.set("origin", strNode(auto.Origin))
		a.set("saved", strNode(auto.Saved.UTC().Format(time.RFC3339Nano)))
		root.set("autosave", a)
	}
	root.set("next_id", intNode(max(s.nextID, 1)))

	fl := arrNode()
	for _, e := range s.Filters {
		if err := checkID(e.ID); err != nil {
			return nil, err
		}
		if err := e.validate(); err != nil {
			return nil, within("entry "+strconv.Quote(e.ID), err)
		}
		text, err := filterfile.Marshal(e.Document())
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.ID, err)
		}
		doc, err := parseTree(text)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.ID, err) // a bug in filterfile.Marshal
		}
		doc.pack()
		o := objNode()
		o.set("id", strNode(e.ID))
		o.set("filter", doc)
		fl.kids = append(fl.kids, o)
	}
	root.set("filters", fl)

	tl := arrNode()
	for _, t := range s.Targets {
		if err := checkID(t.ID); err != nil {
			return nil, err
		}
		if err := t.validate(); err != nil {
			return nil, within("target "+strconv.Quote(t.ID), err)
		}
		o := objNode()
		o.set("id", strNode(t.ID))
		o.set("name", strNode(t.Name))
		if !t.Linked {
			o.set("kernels", arrayNode(t.Kernels))
		}
		if t.Source != nil {
			src := objNode()
			src.set("path", strNode(t.Source.Path))
			src.set("tensor", strNode(t.Source.Tensor))
			o.set("source", src)
		}
		if t.Linked {
			o.set("linked", boolNode(true))
		}
		tl.kids = append(tl.kids, o)
	}
	root.set("targets", tl)

	jl := arrNode()
	for _, j := range s.Jobs {
		if err := checkID(j.ID); err != nil {
			return nil, err
		}
		if err := j.validate(); err != nil {
			return nil, within("job "+strconv.Quote(j.ID), err)
		}
		o := objNode()
		o.set("id", strNode(j.ID))
		o.set("kind", strNode(j.Kind))
		for _, part := range []struct {
			key string
			raw json.RawMessage
		}{{"spec", j.Spec}, {"report", j.Report}} {
			n, err := rawNode(part.raw)
			if err != nil {
				return nil, fmt.Errorf("job %q %s: %w", j.ID, part.key, err)
			}
			o.set(part.key, n)
		}
		jl.kids = append(jl.kids, o)
	}
	root.set("jobs", jl)

	ui := objNode()
	ui.set("selected", strNode(s.UI.Selected))
	ui.set("form_tab", strNode(s.UI.FormTab))
	plots := arrNode()
	for _, p := range s.UI.Plots {
		plots.kids = append(plots.kids, strNode(p))
	}
	ui.set("plots", plots)
	for _, k := range sortedKeys(s.UI.Extra) {
		if k == "selected" || k == "form_tab" || k == "plots" {
			return nil, invalidf("UI extra key %q shadows a UI field", k)
		}
		n, err := rawNode(s.UI.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("UI key %q: %w", k, err)
		}
		ui.set(k, n)
	}
	root.set("ui", ui)

	b := append(root.indent(nil, ""), '\n')
	if len(b) > userfile.MaxSize {
		return nil, invalidf("the session takes %d MiB, more than the %d MiB limit of a file; link large targets instead of embedding them", len(b)>>20, userfile.MaxSize>>20)
	}
	return b, nil
}

// tooLarge is the error for input above userfile.MaxSize, as ErrInvalid.
func tooLarge() error {
	return fmt.Errorf("%w: %w", ErrInvalid, &userfile.TooLargeError{Limit: userfile.MaxSize})
}

// rawNode parses raw JSON into a node; nil is null.
func rawNode(raw json.RawMessage) (*jnode, error) {
	if raw == nil {
		return &jnode{kind: jNull}, nil
	}
	return parseTree(raw)
}

// arrayNode returns an array as a tree node: packed when large, nested numbers otherwise.
func arrayNode(a *arrays.Array) *jnode {
	if a.Len() > arrays.InlineMax || (a.Len() == 0 && len(a.Shape) != 1) {
		return packedNode(a)
	}
	b, _ := a.MarshalJSON() // validated by the caller
	n, _ := parseTree(b)
	return n
}

func checkID(id string) error {
	if !idPattern.MatchString(id) {
		return invalidf("ID %q: an ID is 1 to 64 letters, digits, '_', '-' or '.'", id)
	}
	return nil
}

// Unmarshal decodes a session file. Older versions are migrated; a newer version gives a
// *VersionError. Linked targets are left unloaded (Kernels nil); Load reads them. The
// session is clean, with no Path.
func Unmarshal(data []byte) (*Session, error) {
	s, _, err := unmarshal(data)
	return s, err
}

func unmarshal(data []byte) (*Session, *autosaveInfo, error) {
	if len(data) > userfile.MaxSize {
		return nil, nil, tooLarge()
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	root, err := parseTree(data)
	if err != nil {
		return nil, nil, err
	}
	if root.kind != jObject {
		return nil, nil, invalidf("a session file holds one JSON object, not %s", root.describe())
	}
	format := root.get("format")
	if format == nil || format.kind != jString || format.text != FormatName {
		if root.get("form") != nil || root.get("channels") != nil {
			return nil, nil, invalidf("this is a filter file, not a session (a session starts with \"format\": %q)", FormatName)
		}
		return nil, nil, invalidf("not an ssmlab session: no \"format\": %q", FormatName)
	}
	vn := root.get("version")
	if vn == nil {
		return nil, nil, invalidf("missing key \"version\"")
	}
	version, err := vn.integer(`"version"`)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case version > CurrentVersion:
		return nil, nil, &VersionError{Version: version, Supported: CurrentVersion}
	case version < 1:
		return nil, nil, invalidf("session version %d does not exist (versions start at 1)", version)
	}
	for v := version; v < CurrentVersion; v++ {
		if err := migrations[v](root); err != nil {
			return nil, nil, fmt.Errorf("%w: migrating version %d to %d: %w", ErrInvalid, v, v+1, err)
		}
	}
	return decodeV1(root)
}

// decodeV1 reads the tree of a version-1 file.
func decodeV1(root *jnode) (*Session, *autosaveInfo, error) {
	if err := root.objectKeys("the session", "format", "version", "autosave", "next_id", "filters", "targets", "jobs", "ui"); err != nil {
		return nil, nil, err
	}
	d := &v1Decoder{s: New(), ids: map[string]bool{}}
	for _, step := range []func(*jnode) error{d.nextID, d.filters, d.targets, d.jobs, d.ui} {
		if err := step(root); err != nil {
			return nil, nil, err
		}
	}
	auto, err := decodeAutosave(root.get("autosave"))
	if err != nil {
		return nil, nil, err
	}
	d.s.nextID = max(d.s.nextID, d.maxNum+1)
	return d.s, auto, nil
}

// v1Decoder fills a session from the parts of a version-1 tree.
type v1Decoder struct {
	s      *Session
	ids    map[string]bool // in use
	maxNum int             // the largest number of an ID in use
}

// useID reads the "id" of an item and checks that it is new.
func (d *v1Decoder) useID(n *jnode, what string) (string, error) {
	idn := n.get("id")
	if idn == nil || idn.kind != jString {
		return "", invalidf("%s has no string \"id\"", what)
	}
	id := idn.text
	if err := checkID(id); err != nil {
		return "", within(what, err)
	}
	if d.ids[id] {
		return "", invalidf("two items have the ID %q", id)
	}
	d.ids[id] = true
	if k, err := strconv.Atoi(id[1:]); err == nil && k > d.maxNum && k < maxIDNumber {
		d.maxNum = k
	}
	return id, nil
}

// items calls item for each element of the list under key, with its ID and a name for
// messages, after checking its keys.
func (d *v1Decoder) items(root *jnode, key string, keys []string, item func(n *jnode, id string) error) error {
	for i, n := range list(root, key) {
		what := fmt.Sprintf("%s[%d]", key, i)
		if err := n.objectKeys(what, keys...); err != nil {
			return err
		}
		id, err := d.useID(n, what)
		if err != nil {
			return err
		}
		if err := item(n, id); err != nil {
			return err
		}
	}
	return checkList(root, key)
}

func (d *v1Decoder) nextID(root *jnode) error {
	n := root.get("next_id")
	if n == nil {
		return nil
	}
	v, err := n.integer(`"next_id"`)
	if err != nil {
		return err
	}
	if v < 1 || v >= maxIDNumber {
		return invalidf("\"next_id\" %d is outside [1, %d)", v, maxIDNumber)
	}
	d.s.nextID = v
	return nil
}

func (d *v1Decoder) filters(root *jnode) error {
	return d.items(root, "filters", []string{"id", "filter"}, func(n *jnode, id string) error {
		fn := n.get("filter")
		if fn == nil {
			return invalidf("entry %q has no \"filter\"", id)
		}
		text, err := fn.expand(nil, userfile.MaxSize)
		if err != nil {
			return within("entry "+strconv.Quote(id), err)
		}
		doc, err := filterfile.Unmarshal(text)
		if err != nil {
			return within("entry "+strconv.Quote(id), err)
		}
		d.s.Filters = append(d.s.Filters, Entry{ID: id, Name: doc.Name, Filter: doc.Filter, Bank: doc.Bank})
		return nil
	})
}

func (d *v1Decoder) targets(root *jnode) error {
	return d.items(root, "targets", []string{"id", "name", "kernels", "source", "linked"}, func(n *jnode, id string) error {
		t, err := decodeTarget(n, id)
		if err != nil {
			return err
		}
		d.s.Targets = append(d.s.Targets, t)
		return nil
	})
}

// decodeTarget reads a target of a session file.
func decodeTarget(n *jnode, id string) (Target, error) {
	t := Target{ID: id}
	var err error
	if t.Name, err = n.str("target "+strconv.Quote(id), "name"); err != nil {
		return t, err
	}
	if ln := n.get("linked"); ln != nil {
		if ln.kind != jBool {
			return t, invalidf("\"linked\" of target %q is %s, want true or false", id, ln.describe())
		}
		t.Linked = ln.b
	}
	if src := n.get("source"); src != nil {
		what := "the source of target " + strconv.Quote(id)
		if err := src.objectKeys(what, "path", "tensor"); err != nil {
			return t, err
		}
		t.Source = &Source{}
		if t.Source.Path, err = src.str(what, "path"); err != nil {
			return t, err
		}
		if t.Source.Tensor, err = src.str(what, "tensor"); err != nil {
			return t, err
		}
	}
	kn := n.get("kernels")
	switch {
	case t.Linked && kn != nil:
		return t, invalidf("target %q is linked and also has \"kernels\"", id)
	case !t.Linked && kn == nil:
		return t, invalidf("target %q has no \"kernels\"", id)
	case kn != nil:
		if t.Kernels, err = kn.toArray(); err != nil {
			return t, within("target "+strconv.Quote(id), err)
		}
	}
	if err := t.validate(); err != nil {
		return t, within("target "+strconv.Quote(id), err)
	}
	return t, nil
}

func (d *v1Decoder) jobs(root *jnode) error {
	return d.items(root, "jobs", []string{"id", "kind", "spec", "report"}, func(n *jnode, id string) error {
		j := Job{ID: id}
		var err error
		if j.Kind, err = n.str("job "+strconv.Quote(id), "kind"); err != nil {
			return err
		}
		if sp := n.get("spec"); sp != nil && sp.kind != jNull {
			j.Spec = sp.compact(nil)
		}
		if rp := n.get("report"); rp != nil && rp.kind != jNull {
			j.Report = rp.compact(nil)
		}
		d.s.Jobs = append(d.s.Jobs, j)
		return nil
	})
}

func (d *v1Decoder) ui(root *jnode) error {
	ui := root.get("ui")
	if ui == nil {
		return nil
	}
	if ui.kind != jObject {
		return invalidf("\"ui\" is %s, want an object", ui.describe())
	}
	s := d.s
	var err error
	if s.UI.Selected, err = ui.str(`"ui"`, "selected"); err != nil {
		return err
	}
	if s.UI.FormTab, err = ui.str(`"ui"`, "form_tab"); err != nil {
		return err
	}
	if p := ui.get("plots"); p != nil {
		if p.kind != jArray {
			return invalidf("\"plots\" of \"ui\" is %s, want an array of strings", p.describe())
		}
		for _, k := range p.kids {
			if k.kind != jString {
				return invalidf("\"plots\" of \"ui\" holds %s, want strings", k.describe())
			}
			s.UI.Plots = append(s.UI.Plots, k.text)
		}
	}
	for i, k := range ui.keys {
		if k == "selected" || k == "form_tab" || k == "plots" {
			continue
		}
		if s.UI.Extra == nil {
			s.UI.Extra = map[string]json.RawMessage{}
		}
		s.UI.Extra[k] = ui.kids[i].compact(nil)
	}
	// A selection of an item that is gone (a hand-edited file) is dropped.
	if k, _ := s.Lookup(s.UI.Selected); k == KindNone {
		s.UI.Selected = ""
	}
	return nil
}

// decodeAutosave reads the "autosave" member of an autosave file (nil when absent).
func decodeAutosave(an *jnode) (*autosaveInfo, error) {
	if an == nil {
		return nil, nil
	}
	if err := an.objectKeys(`"autosave"`, "origin", "saved"); err != nil {
		return nil, err
	}
	auto := &autosaveInfo{}
	var err error
	if auto.Origin, err = an.str(`"autosave"`, "origin"); err != nil {
		return nil, err
	}
	saved, err := an.str(`"autosave"`, "saved")
	if err != nil {
		return nil, err
	}
	if auto.Saved, err = time.Parse(time.RFC3339Nano, saved); err != nil {
		return nil, invalidf("\"saved\" of \"autosave\" is not an RFC 3339 time: %q", saved)
	}
	return auto, nil
}

// list returns the elements of the array under key (nil when absent or not an array;
// checkList reports the latter).
func list(root *jnode, key string) []*jnode {
	if n := root.get(key); n != nil && n.kind == jArray {
		return n.kids
	}
	return nil
}

func checkList(root *jnode, key string) error {
	if n := root.get(key); n != nil && n.kind != jArray {
		return invalidf("%q is %s, want an array", key, n.describe())
	}
	return nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
