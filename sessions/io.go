package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/strictjson"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// KernelsTensor is the tensor name of a target's kernels in .npz and .safetensors exports.
const KernelsTensor = "kernels"

// Item is a filter entry or a target, read from a file or taken from a session, ready to add
// to a session or to export. Exactly one of Entry and Target is set.
type Item struct {
	Entry  *Entry
	Target *Target
	// Note says how a file was read, in one line ("rtf layer layers.0: ab (6, 4) F32,
	// h_0 (3,) F32 → bank of 3 tf channels of order 4"); empty for a session's items.
	Note string
	// Warnings say what a reader should know about how the file was read: what was taken
	// from a multi-input multi-output layer, a part left out, a parameter read as kernels.
	Warnings []string
}

// validate checks an item as a session checks what is added to it (Entry.validate,
// Target.validate), so that what Import returns can be added and saved: a name made of a
// file's name, for one, may not be UTF-8.
func (it Item) validate() error {
	if it.Entry != nil {
		return it.Entry.validate()
	}
	return it.Target.validate()
}

// Describe returns the item's description (Entry.Describe or Target.Describe).
func (it Item) Describe() string {
	if it.Entry != nil {
		return it.Entry.Describe()
	}
	return it.Target.Describe()
}

// ImportOptions choose what Import reads.
type ImportOptions struct {
	// Name names the item; by default the file's base name without its extension, followed
	// by ":" and the tensor or layer read from a multi-array file.
	Name string
	// Tensor picks the array, or the layer (by its prefix or one of its tensor names), to
	// read from a file holding several.
	Tensor string
	// Layout reads a layer of that layout (layouts.ParseLayout; Kernels reads an array as
	// kernels); by default a detected layer is read, else the arrays as kernels.
	Layout string
	// Options are a layer's settings the checkpoint does not record (layouts.OptionList),
	// by name; Pairs the (output, input) slices to read from a MIMO layer.
	Options map[string]string
	Pairs   [][2]int
	// Columns reads the kernels of a 2-D array from its columns instead of its rows.
	Columns bool
	// TruncLen undoes the truncation correction of an RTF layer's numerators for the
	// layer's trunc_len (the RTF paper, eq. 13); 0 takes the trunc_len export recorded in
	// the file's metadata, if any.
	TruncLen int
}

// Check refuses the options Import cannot take whatever the file, as an *OptionError: a
// TruncLen outside [0, MaxTruncLen] (a negative one was read as none). Import and ImportData
// call it first; a front end calls it before reading its input.
func (o ImportOptions) Check() error { return checkTruncLen(o.TruncLen) }

// Import reads a filter, a bank or kernels from a file:
//
//   - a filter or bank file (docs/formats.md) gives a filter entry;
//   - a target file ({"name": …, "kernels": …}) gives a target;
//   - an .npy, .npz, .safetensors, PyTorch or CSV file holding a model's layer (package
//     layouts: RTF, S4D, S4, StripedHyena, Hyena, LRU, S5, RotRNN), or second-order
//     sections (sos), recognised by its tensor names or named by Layout, gives a bank (or,
//     for Hyena, kernels; for an sos tensor of one filter, that filter);
//   - any other array file gives a target: a 1-D array is one kernel, a 2-D array one
//     kernel per row (per column with Columns; a single column is one kernel).
//
// A file holding several arrays or layers needs Tensor to pick one, unless only one can be
// meant; otherwise the error is a *ChoiceError (arrays) or a *layouts.ChoiceError listing
// them. The item is valid as a session checks what is added to it (Add), its name UTF-8, for
// one; its target's Source.Path is path, which Add checks. Errors are prefixed with the path,
// but for the *OptionError of an option it cannot take (Check), which it reads no file for.
func Import(path string, o ImportOptions) (Item, error) {
	if err := o.Check(); err != nil {
		return Item{}, err
	}
	f, size, err := userfile.Open(path)
	if err != nil {
		return Item{}, err
	}
	defer f.Close()
	it, err := importFrom(f, size, path, true, o)
	if err == nil {
		err = it.validate() // before the path is its source: the caller's to check (Add does)
	}
	if err != nil {
		return Item{}, fmt.Errorf("%s: %w", path, err)
	}
	if it.Target != nil && it.Target.Source != nil {
		it.Target.Source.Path = path
	}
	return it, nil
}

// ImportData is Import for a file's content held in memory; name stands for its path (in
// names, and to recognise CSV by its extension). Targets get no Source.
func ImportData(data []byte, name string, o ImportOptions) (Item, error) {
	if err := o.Check(); err != nil {
		return Item{}, err
	}
	it, err := importFrom(bytes.NewReader(data), int64(len(data)), name, false, o)
	if err == nil {
		err = it.validate()
	}
	if err != nil {
		return Item{}, fmt.Errorf("%s: %w", name, err)
	}
	if it.Target != nil {
		it.Target.Source = nil
	}
	return it, nil
}

// looksJSON reports whether head, a file's first bytes, begins a JSON object (after a byte
// order mark and white space): a filter, target or session file.
func looksJSON(head []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// isJSONFile reports whether the file at path looksJSON.
func isJSONFile(path string) bool {
	f, _, err := userfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.ReadAt(head, 0)
	return looksJSON(head[:n])
}

// importable names the files Import reads, for its errors.
const importable = "a filter or target JSON file, or an .npy, .npz, .safetensors, .pt (torch.save) or CSV (.csv, .tsv, .txt) file"

// importFrom reads the file name from r; onDisk says that name is its path, where what its
// format cannot hold is looked for beside it (recorded), not data named so.
func importFrom(r io.ReaderAt, size int64, name string, onDisk bool, o ImportOptions) (Item, error) {
	head := make([]byte, 512)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return Item{}, userfile.PathErr(err)
	}
	head = head[:n]
	if size == 0 {
		return Item{}, inputf("empty input: want %s", importable)
	}
	stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if _, ok := arrays.Sniff(head, name); ok {
		af, err := arrays.OpenReader(r, size, name)
		if err != nil {
			return Item{}, err
		}
		if onDisk {
			af = af.At(name)
		}
		return importArrays(af, stem, o)
	}
	if looksJSON(head) {
		if size > userfile.MaxSize {
			return Item{}, tooLarge()
		}
		data := make([]byte, size)
		if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
			return Item{}, userfile.PathErr(err)
		}
		it, err := importJSON(data, stem, o)
		if err != nil {
			// A sharded checkpoint's index has a key no filter or target file has, so
			// importJSON refuses it: only then is the text parsed a second time, to say so.
			if ierr := shardIndex(data); ierr != nil {
				return Item{}, ierr
			}
		}
		return it, err
	}
	return Item{}, &NotImportableError{}
}

// NotImportableError is Import's error for a file in none of the formats it reads. It wraps
// arrays.ErrUnsupported, as an array file of a format no reader has does, but does not say
// "unsupported array": the file need not be meant as one (a README). The workbench, which
// reads sessions too, says what it reads in its place.
type NotImportableError struct{}

func (*NotImportableError) Error() string { return "not a file ssmlab imports: want " + importable }
func (*NotImportableError) Unwrap() error { return arrays.ErrUnsupported }

// noLayerOptions refuses the options of reading a layer, TruncLen and Pairs, for a file,
// what, read without one: an *OptionError each.
func noLayerOptions(o ImportOptions, what string) error {
	if o.TruncLen > 0 {
		return &OptionError{"trunc-len", strconv.Itoa(o.TruncLen), " applies to an RTF layer, and " + what + " holds none"}
	}
	if len(o.Pairs) > 0 {
		return &OptionError{"pair", "", " picks slices of a MIMO layer (lru, s5, rotrnn), and " + what + " holds none"}
	}
	return nil
}

func importJSON(data []byte, stem string, o ImportOptions) (Item, error) {
	if sniffSession(data) {
		return Item{}, inputf("this is a session file; open it, or export its items")
	}
	// An option a JSON file gives nothing to apply to is a mistake of the options (an
	// *OptionError, as a layer's setting is: CheckApplies); ignoring one would hand back
	// what the user did not ask for (rows said to be columns).
	if o.Tensor != "" {
		return Item{}, &OptionError{"tensor", o.Tensor, ": a JSON file holds no tensors to choose from (it reads one array of an .npz, .safetensors or .pt file)"}
	}
	if o.Columns {
		return Item{}, &OptionError{"columns", "", " reads an array's columns (.npy, .npz, .safetensors, .pt, CSV); a JSON file's kernels are its rows"}
	}
	if err := noLayerOptions(o, "a JSON file"); err != nil {
		return Item{}, err
	}
	if err := layouts.CheckApplies(o.Options); err != nil {
		return Item{}, err // a layer's setting, and a JSON file holds none
	}
	// One pass over the text: a target file's kernels go straight into their numbers.
	if t, isTarget, err := decodeTargetFile(data); isTarget {
		if err != nil {
			return Item{}, err
		}
		if o.Name != "" {
			t.Name = o.Name
		} else if t.Name == "" {
			t.Name = stem
		}
		return Item{Target: t, Note: "target file: " + t.Describe()}, nil
	}
	doc, err := filterfile.Unmarshal(data)
	if err != nil {
		return Item{}, err
	}
	e := &Entry{Name: doc.Name, Filter: doc.Filter, Bank: doc.Bank}
	if o.Name != "" {
		e.Name = o.Name
	} else if e.Name == "" {
		e.Name = stem
	}
	return Item{Entry: e, Note: "filter file: " + e.Describe()}, nil
}

func importArrays(af *arrays.File, stem string, o ImportOptions) (Item, error) {
	infos := af.Arrays()
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	layer, ok, err := findLayer(infos, o)
	if err != nil {
		return Item{}, err
	}
	if ok {
		return importLayer(af, layer, stem, o)
	}
	if err := noLayerOptions(o, "the file"); err != nil {
		return Item{}, err
	}
	if err := layouts.CheckApplies(o.Options); err != nil {
		return Item{}, err // a layer's setting, and kernels are read
	}
	// A single array, or the one asked for.
	var pick *arrays.Info
	if o.Tensor != "" || len(infos) == 1 {
		for i := range infos {
			if infos[i].Name == o.Tensor || len(infos) == 1 && o.Tensor == "" {
				pick = &infos[i]
			}
		}
		if pick == nil {
			return Item{}, tensorNotHeld(o.Tensor, infos)
		}
	} else {
		var supported []string
		for _, in := range infos {
			if in.Supported && !in.Complex {
				supported = append(supported, in.Name)
			}
		}
		if len(supported) != 1 {
			return Item{}, &ChoiceError{What: "arrays", Names: names, Hint: layouts.Unrecognised(infos)}
		}
		for i := range infos {
			if infos[i].Name == supported[0] {
				pick = &infos[i]
			}
		}
	}
	if pick.Complex {
		what := "the array"
		if pick.Name != "" {
			what = strconv.Quote(pick.Name)
		}
		return Item{}, inputf("%s is complex, of shape %s: kernels are real (a layout reads complex parameters; --layout names one)", what, arrays.ShapeString(pick.Shape))
	}
	a, err := af.Read(pick.Name)
	if err != nil {
		return Item{}, err
	}
	k, err := toKernels(a, o.Columns)
	if err != nil {
		return Item{}, err
	}
	t := &Target{Name: o.Name, Kernels: k, Source: &Source{Tensor: pick.Name}}
	if t.Name == "" {
		t.Name = stem
		if pick.Name != "" {
			t.Name += ":" + pick.Name
		}
	}
	label := "array"
	if pick.Name != "" {
		label = strconv.Quote(pick.Name)
	}
	note := fmt.Sprintf("%s %s %s → %s", label, arrays.ShapeString(a.Shape), pick.DType, t.Describe())
	it := Item{Target: t, Note: note}
	if w := parameterWarning(pick.Name, o.Tensor != ""); w != "" && len(a.Shape) >= 2 {
		it.Warnings = append(it.Warnings, w)
	}
	return it, nil
}

// toKernels arranges an array as kernels: (length) or (channels, length). Leading
// dimensions of size 1 are dropped first, so that a (1, H, L) batch of one is H kernels.
func toKernels(a *arrays.Array, columns bool) (*arrays.Array, error) {
	if lead := leadingOnes(a.Shape); lead > 0 {
		a = &arrays.Array{Shape: a.Shape[lead:], Data: a.Data}
	}
	switch {
	case len(a.Shape) == 2 && columns:
		r, c := a.Shape[0], a.Shape[1]
		t := make([]float64, len(a.Data))
		for i := range r {
			for j := range c {
				t[j*r+i] = a.Data[i*c+j]
			}
		}
		a = &arrays.Array{Shape: []int{c, r}, Data: t}
	case len(a.Shape) == 2 && a.Shape[1] == 1 && a.Shape[0] > 1:
		a = &arrays.Array{Shape: []int{a.Shape[0]}, Data: a.Data}
	case columns:
		return nil, inputf("columns of an array of shape %s: want a 2-D array", arrays.ShapeString(a.Shape))
	}
	if err := checkKernels(a); err != nil {
		return nil, err
	}
	return a, nil
}

// leadingOnes counts the leading dimensions of size 1 of shape, keeping at least one
// dimension.
func leadingOnes(shape []int) int {
	n := 0
	for n < len(shape)-1 && shape[n] == 1 {
		n++
	}
	return n
}

// MarshalTarget encodes a target as a target file, {"name": …, "kernels": [[…], …]}: the
// kernels as rows of plain JSON numbers (a single kernel as one row), so that any JSON
// reader, and ssmlab distill, can read it. (Session files pack large arrays; a target file
// is for exchange.)
func MarshalTarget(t *Target) ([]byte, error) {
	if t.Kernels == nil {
		return nil, invalidf("the target has no kernels loaded")
	}
	if err := checkKernels(t.Kernels); err != nil {
		return nil, err
	}
	c, l := kernelShape(t.Kernels)
	b := []byte("{\n")
	if t.Name != "" {
		b = append(b, `  "name": `...)
		b = appendString(b, t.Name)
		b = append(b, ",\n"...)
	}
	b = append(b, `  "kernels": [`...)
	for i := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    ["...)
		for j, x := range t.Kernels.Data[i*l : (i+1)*l] {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = arrays.AppendNumber(b, x)
		}
		b = append(b, ']')
	}
	return append(b, "\n  ]\n}\n"...), nil
}

// UnmarshalTarget decodes a target file. Its kernels may be nested arrays of numbers, 1-D
// (one kernel) or 2-D (one kernel per row), or a packed array as in session files.
func UnmarshalTarget(data []byte) (*Target, error) {
	if len(data) > userfile.MaxSize {
		return nil, tooLarge()
	}
	t, isTarget, err := decodeTargetFile(data)
	if err == nil && !isTarget {
		err = inputf("a target file needs \"kernels\"")
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Find returns the ID of the item whose ID, or else whose name, is key. A key that names no
// item, or a name several items share, is an *OptionError of the option "id" (ssmlab export's
// --id: a command-line mistake) listing the items, and of ErrNotFound.
func (s *Session) Find(key string) (string, error) {
	if k, _ := s.Lookup(key); k != KindNone {
		return key, nil
	}
	var ids []string
	for _, e := range s.Filters {
		if e.Name == key {
			ids = append(ids, e.ID)
		}
	}
	for _, t := range s.Targets {
		if t.Name == key {
			ids = append(ids, t.ID)
		}
	}
	for _, j := range s.Jobs {
		if j.Kind == key {
			ids = append(ids, j.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", notHeldError{&OptionError{"id", strconv.Quote(key), " is no item's ID or name: the session holds " + s.listItems()}, ErrNotFound}
	case 1:
		return ids[0], nil
	}
	return "", notHeldError{&OptionError{"id", strconv.Quote(key), fmt.Sprintf(": %d items are named %q (%s); use an ID", len(ids), key, strings.Join(ids, ", "))}, ErrNotFound}
}

// listItems names the session's first ten filters and targets by ID and name, saying how many
// more there are, for a message of a key Find does not find.
func (s *Session) listItems() string {
	ids := s.Order()
	if len(ids) == 0 {
		return "no filters or targets"
	}
	parts := make([]string, len(ids))
	for j, id := range ids {
		name := ""
		switch k, i := s.Lookup(id); k {
		case KindFilter:
			name = s.Filters[i].Name
		case KindTarget:
			name = s.Targets[i].Name
		}
		parts[j] = fmt.Sprintf("%s (%q)", id, name)
	}
	return plural.First(parts, 10, ", ")
}

// Items returns the session's items with the given IDs, or all its filters and targets, in
// their order, when none are given. Jobs are not items.
func (s *Session) Items(ids ...string) ([]Item, error) {
	var out []Item
	if len(ids) == 0 {
		ids = s.Order()
	}
	for _, id := range ids {
		switch k, i := s.Lookup(id); k {
		case KindFilter:
			e := s.Filters[i]
			out = append(out, Item{Entry: &e})
		case KindTarget:
			t := s.Targets[i]
			out = append(out, Item{Target: &t})
		case KindJob:
			return nil, invalidf("%q is a job: only filters and targets can be exported", id)
		default:
			return nil, notFound(id)
		}
	}
	return out, nil
}

// decodeTargetFile reads a target file, {"name": …, "kernels": …}, as a stream, the kernels
// straight into their numbers (a tree of the text took some 35 times the memory of the
// numbers). isTarget reports whether data is a JSON object with "kernels" at its top level,
// which makes it a target file (err then says what is wrong with it); otherwise it is some
// other JSON file, such as a filter file.
func decodeTargetFile(data []byte) (t *Target, isTarget bool, err error) {
	d := strictjson.NewDecoder(data)
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false, nil
	}
	t = &Target{}
	var other, problem error
	err = d.Members(func(key string) error {
		switch key {
		case "name":
			tok, err := d.Token()
			if err != nil {
				return err
			}
			name, ok := tok.(string)
			if !ok && problem == nil {
				problem = inputf("%q of a target file is %s, want a string", key, strictjson.Describe(tok))
			}
			t.Name = name
		case "kernels":
			isTarget = true
			a, err := arrays.DecodeJSON(d)
			if err != nil {
				return inputf("\"kernels\": %w", err)
			}
			t.Kernels = a
		default:
			if other == nil {
				other = inputf("unknown key %q in a target file", key)
			}
			return d.Skip()
		}
		return nil
	})
	if err == nil {
		err = d.End()
	}
	switch {
	case !isTarget:
		return nil, false, nil
	case err != nil && !errors.Is(err, ErrInvalid):
		return nil, true, inputError{err} // bad JSON: a target file is no session
	case err != nil:
		return nil, true, err
	case problem != nil:
		return nil, true, problem
	case other != nil:
		return nil, true, other
	}
	if err := checkKernels(t.Kernels); err != nil {
		return nil, true, err
	}
	return t, true, nil
}
