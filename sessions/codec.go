package sessions

import (
	"crypto/sha256"
	"encoding/hex"
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

// The session file format is described in docs/formats.md ("Session files"). This file
// writes it; decode.go reads it.

// FormatName is the value of a session file's "format" key.
const FormatName = "ssmlab-session"

// CurrentVersion is the version of the session format this package writes. It reads every
// version up to it, migrating older ones forward.
const CurrentVersion = 2

// VersionError is the error for a session file written by a newer ssmlab.
type VersionError struct {
	Version, Supported int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("session version %d is newer than this ssmlab supports (%d)", e.Version, e.Supported)
}

// migrations[v] rewrites the tree of a version-v file into version v+1; see docs/formats.md
// for how one is added.
var migrations = map[int]func(root *jnode) error{
	// Version 2 adds keys a version-1 file lacks and may do without: "order", items'
	// "origin", jobs' "status", "target", "result" and "log", the UI's "overlay".
	1: func(*jnode) error { return nil },
}

// maxIDNumber bounds the numbers of IDs: larger ones in a file are not counted when the
// next ID is chosen.
const maxIDNumber = 1 << 50

// idPattern is what an item's ID may look like.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// autosaveInfo is the "autosave" member of an autosave file.
type autosaveInfo struct {
	Origin string    // the session's file, absolute; "" for an untitled session
	Saved  time.Time // when the autosave was written
	Dirty  []string  // the items with unsaved changes
	// Deleted names the filters and targets removed since the session was saved
	// (Session.Deleted)
	Deleted []string
	// Base is the SHA-256 sum of the content of Origin that the work follows (the version
	// the session was loaded from or last saved as); nil when not known. A recovered session
	// saved over Origin asks first when the file holds anything else: another program saved
	// it meanwhile, whenever that was.
	Base *[sha256.Size]byte
}

// uiKeys are the UI's own keys in the "ui" object; other keys are UIState.Extra.
var uiKeys = []string{"selected", "form_tab", "plots", "overlay"}

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
		a.set("dirty", strList(auto.Dirty))
		if len(auto.Deleted) > 0 {
			a.set("deleted", strList(auto.Deleted))
		}
		if auto.Base != nil {
			a.set("origin_sha256", strNode(hex.EncodeToString(auto.Base[:])))
		}
		root.set("autosave", a)
	}
	root.set("next_id", intNode(max(s.nextID, 1)))
	for _, part := range []struct {
		key    string
		encode func(*Session) (*jnode, error)
	}{{"filters", encodeFilters}, {"targets", encodeTargets}, {"jobs", encodeJobs}, {"ui", encodeUI}} {
		n, err := part.encode(s)
		if err != nil {
			return nil, err
		}
		if part.key == "ui" {
			root.set("order", strList(s.Order()))
		}
		root.set(part.key, n)
	}
	b := append(root.indent(nil, ""), '\n')
	if len(b) > userfile.MaxSize {
		return nil, invalidf("the session takes %d MiB, more than the %d MiB limit of a file; link large targets instead of embedding them", len(b)>>20, userfile.MaxSize>>20)
	}
	return b, nil
}

func encodeFilters(s *Session) (*jnode, error) {
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
		setOrigin(o, e.Origin)
		o.set("filter", doc)
		fl.kids = append(fl.kids, o)
	}
	return fl, nil
}

func encodeTargets(s *Session) (*jnode, error) {
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
		setOrigin(o, t.Origin)
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
	return tl, nil
}

// setOrigin sets an item's "origin", with the members that are not empty, unless all are.
func setOrigin(o *jnode, or Origin) {
	if or == (Origin{}) {
		return
	}
	n := objNode()
	for _, m := range []struct{ key, val string }{{"note", or.Note}, {"file", or.File}, {"target", or.Target}, {"job", or.Job}} {
		if m.val != "" {
			n.set(m.key, strNode(m.val))
		}
	}
	o.set("origin", n)
}

func encodeJobs(s *Session) (*jnode, error) {
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
		for _, m := range []struct{ key, val string }{{"status", string(j.Status)}, {"target", j.Target}, {"result", j.Result}} {
			if m.val != "" {
				o.set(m.key, strNode(m.val))
			}
		}
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
		if len(j.Log) > 0 {
			o.set("log", strList(j.Log))
		}
		jl.kids = append(jl.kids, o)
	}
	return jl, nil
}

func encodeUI(s *Session) (*jnode, error) {
	ui := objNode()
	ui.set("selected", strNode(s.UI.Selected))
	ui.set("form_tab", strNode(s.UI.FormTab))
	ui.set("plots", strList(s.UI.Plots))
	ui.set("overlay", strNode(s.UI.Overlay))
	for _, k := range sortedKeys(s.UI.Extra) {
		if slices.Contains(uiKeys, k) {
			return nil, invalidf("UI extra key %q shadows a UI field", k)
		}
		n, err := rawNode(s.UI.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("UI key %q: %w", k, err)
		}
		ui.set(k, n)
	}
	return ui, nil
}

// strList returns an array of strings.
func strList(ss []string) *jnode {
	n := arrNode()
	for _, s := range ss {
		n.kids = append(n.kids, strNode(s))
	}
	return n
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

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
