package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Unmarshal decodes a session file. Older versions are migrated (FileVersion keeps the
// version read); a newer version gives a *VersionError. Linked targets are left unloaded (Kernels nil); Load reads them. The
// session is clean, with no Path. It may share memory with data (strings of a megabyte or
// more are not copied): data must not change afterwards.
func Unmarshal(data []byte) (*Session, error) {
	s, _, err := unmarshal(data)
	return s, err
}

// ArrayFileKind describes data, the contents of the file name, when it is an array file's,
// for the error of a reader of a JSON file given one in its place (a checkpoint as a filter,
// a session or a part), where the JSON decoder said "invalid character 'P' looking for
// beginning of value". A CSV file, which has no magic, is known by name (arrays.Sniff) only
// where data does not begin a JSON object: a filter file named .txt with a syntax error is
// none. name may be "" (a session's or a part's reader knows none).
func ArrayFileKind(data []byte, name string) (string, bool) {
	if looksJSON(data) {
		name = ""
	}
	f, ok := arrays.Sniff(data, name)
	return f.Describe(), ok
}

func unmarshal(data []byte) (*Session, *autosaveInfo, error) {
	if len(data) > userfile.MaxSize {
		return nil, nil, tooLarge()
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	root, err := parseLarge(data)
	if err != nil {
		if kind, ok := ArrayFileKind(data, ""); ok {
			return nil, nil, invalidf("this is an array file (%s), not a session: ssmlab import reads it (--session FILE adds what it holds to one)", kind)
		}
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
	s, auto, err := decodeCurrent(root)
	if err != nil {
		return nil, nil, err
	}
	s.version = version
	return s, auto, nil
}

// decodeCurrent reads the tree of a file of the current version (migrated, if older).
func decodeCurrent(root *jnode) (*Session, *autosaveInfo, error) {
	if err := root.objectKeys("the session", "format", "version", "autosave", "next_id", "filters", "targets", "jobs", "order", "ui"); err != nil {
		return nil, nil, err
	}
	d := &decoder{s: New(), ids: map[string]bool{}}
	for _, step := range []func(*jnode) error{d.nextID, d.filters, d.targets, d.jobs, d.order, d.ui, d.links} {
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

// decoder fills a session from the parts of a tree.
type decoder struct {
	s      *Session
	ids    map[string]bool // in use
	maxNum int             // the largest number of an ID in use
}

// useID reads the "id" of an item and checks that it is new.
func (d *decoder) useID(n *jnode, what string) (string, error) {
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
func (d *decoder) items(root *jnode, key string, keys []string, item func(n *jnode, id string) error) error {
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

func (d *decoder) nextID(root *jnode) error {
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

func (d *decoder) filters(root *jnode) error {
	return d.items(root, "filters", []string{"id", "origin", "filter"}, func(n *jnode, id string) error {
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
		o, err := decodeOrigin(n, "entry "+strconv.Quote(id))
		if err != nil {
			return err
		}
		d.s.Filters = append(d.s.Filters, Entry{ID: id, Name: doc.Name, Filter: doc.Filter, Bank: doc.Bank, Origin: o})
		return nil
	})
}

func (d *decoder) targets(root *jnode) error {
	return d.items(root, "targets", []string{"id", "name", "origin", "kernels", "source", "linked"}, func(n *jnode, id string) error {
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
	if t.Origin, err = decodeOrigin(n, "target "+strconv.Quote(id)); err != nil {
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

func (d *decoder) jobs(root *jnode) error {
	return d.items(root, "jobs", []string{"id", "kind", "status", "target", "result", "spec", "report", "log"}, func(n *jnode, id string) error {
		j := Job{ID: id}
		what := "job " + strconv.Quote(id)
		var err error
		if j.Kind, err = n.str(what, "kind"); err != nil {
			return err
		}
		if j.Target, err = n.str(what, "target"); err != nil {
			return err
		}
		if j.Result, err = n.str(what, "result"); err != nil {
			return err
		}
		status, err := n.str(what, "status")
		if err != nil {
			return err
		}
		if j.Status, err = ParseJobStatus(status); err != nil {
			return within(what, err)
		}
		if j.Status == JobRunning {
			// the program that ran it saved while it ran, and runs it no more (or not for
			// this reader): jobs are not resumed
			j.Status = JobInterrupted
		}
		if j.Log, err = stringList(n, what, "log"); err != nil {
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

// order reads the order of the filters and targets: IDs of items in the file, each once.
func (d *decoder) order(root *jnode) error {
	ids, err := stringList(root, "the session", "order")
	if err != nil {
		return err
	}
	for i, id := range ids {
		if k, _ := d.s.Lookup(id); k != KindFilter && k != KindTarget {
			return invalidf("\"order\" names %q, which is not a filter or target of the session", id)
		}
		if slices.Contains(ids[:i], id) {
			return invalidf("\"order\" names %q twice", id)
		}
	}
	d.s.order = ids
	return nil
}

// links drops the links to items the file does not hold (a hand-edited file): a selection,
// an overlay, an origin's target or job, a job's target or result.
func (d *decoder) links(*jnode) error {
	s := d.s
	gone := func(id *string) {
		if k, _ := s.Lookup(*id); k == KindNone {
			*id = ""
		}
	}
	for _, o := range s.origins() {
		gone(&o.Target)
		gone(&o.Job)
	}
	for i := range s.Jobs {
		gone(&s.Jobs[i].Target)
		gone(&s.Jobs[i].Result)
	}
	gone(&s.UI.Selected)
	gone(&s.UI.Overlay)
	return nil
}

// decodeOrigin reads the "origin" of an item (the zero Origin when absent).
func decodeOrigin(n *jnode, what string) (Origin, error) {
	var o Origin
	on := n.get("origin")
	if on == nil {
		return o, nil
	}
	what = "the origin of " + what
	if err := on.objectKeys(what, "note", "file", "target", "job"); err != nil {
		return o, err
	}
	for _, m := range []struct {
		key string
		dst *string
	}{{"note", &o.Note}, {"file", &o.File}, {"target", &o.Target}, {"job", &o.Job}} {
		v, err := on.str(what, m.key)
		if err != nil {
			return o, err
		}
		*m.dst = v
	}
	return o, nil
}

// stringList reads the array of strings under key (nil when absent).
func stringList(n *jnode, what, key string) ([]string, error) {
	a := n.get(key)
	if a == nil {
		return nil, nil
	}
	if a.kind != jArray {
		return nil, invalidf("%q of %s is %s, want an array of strings", key, what, a.describe())
	}
	out := make([]string, 0, len(a.kids))
	for _, k := range a.kids {
		if k.kind != jString {
			return nil, invalidf("%q of %s holds %s, want strings", key, what, k.describe())
		}
		out = append(out, k.text)
	}
	return out, nil
}

func (d *decoder) ui(root *jnode) error {
	ui := root.get("ui")
	if ui == nil {
		return nil
	}
	if ui.kind != jObject {
		return invalidf("\"ui\" is %s, want an object", ui.describe())
	}
	s := d.s
	var err error
	for _, m := range []struct {
		key string
		dst *string
	}{{"selected", &s.UI.Selected}, {"form_tab", &s.UI.FormTab}, {"overlay", &s.UI.Overlay}} {
		if *m.dst, err = ui.str(`"ui"`, m.key); err != nil {
			return err
		}
	}
	if s.UI.Plots, err = stringList(ui, `"ui"`, "plots"); err != nil {
		return err
	}
	for i, k := range ui.keys {
		if slices.Contains(uiKeys, k) {
			continue
		}
		if s.UI.Extra == nil {
			s.UI.Extra = map[string]json.RawMessage{}
		}
		s.UI.Extra[k] = ui.kids[i].compact(nil)
	}
	return nil
}

// decodeAutosave reads the "autosave" member of an autosave file (nil when absent).
func decodeAutosave(an *jnode) (*autosaveInfo, error) {
	if an == nil {
		return nil, nil
	}
	if err := an.objectKeys(`"autosave"`, "origin", "saved", "dirty", "deleted", "origin_sha256"); err != nil {
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
	if auto.Dirty, err = stringList(an, `"autosave"`, "dirty"); err != nil {
		return nil, err
	}
	if auto.Deleted, err = stringList(an, `"autosave"`, "deleted"); err != nil {
		return nil, err
	}
	if an.get("origin_sha256") != nil {
		text, err := an.str(`"autosave"`, "origin_sha256")
		if err != nil {
			return nil, err
		}
		b, err := hex.DecodeString(text)
		if err != nil || len(b) != sha256.Size {
			return nil, invalidf("\"origin_sha256\" of \"autosave\" is not a SHA-256 sum in hexadecimal: %q", text)
		}
		auto.Base = (*[sha256.Size]byte)(b)
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
