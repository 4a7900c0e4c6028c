package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/filterfile"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// KernelsTensor is the tensor name of a target's kernels in .npz and .safetensors exports.
const KernelsTensor = "kernels"

// Item is a filter entry or a target, read from a file or taken from a session, ready to add
// to a session or to export. Exactly one of Entry and Target is set.
type Item struct {
	Entry  *Entry
	Target *Target
	// Note says how a file was read, in one line ("RTF layer "layers.0.": ab (6, 4) F32,
	// h_0 (3,) F32 → bank of 3 tf channels of order 4"); empty for a session's items.
	Note string
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
	// Tensor picks the array, or the RTF layer (by prefix or tensor name), to read from a
	// file holding several.
	Tensor string
	// Columns reads the kernels of a 2-D array from its columns instead of its rows.
	Columns bool
	// TruncLen undoes the truncation correction of an RTF layer's numerators; see
	// RTFOptions.
	TruncLen int
}

// Import reads a filter, a bank or kernels from a file:
//
//   - a filter or bank file (docs/formats.md) gives a filter entry;
//   - a target file ({"name": …, "kernels": …}) gives a target;
//   - an .npy, .npz, .safetensors or CSV file holding an RTF layer (tensors ab and h_0,
//     see ImportRTF) gives a bank of transfer functions;
//   - any other array file gives a target: a 1-D array is one kernel, a 2-D array one
//     kernel per row (per column with Columns; a single column is one kernel).
//
// A file holding several arrays or layers needs Tensor to pick one, unless only one can be
// meant; otherwise the error is a *ChoiceError listing them. Errors are prefixed with the
// path.
func Import(path string, o ImportOptions) (Item, error) {
	f, size, err := userfile.Open(path)
	if err != nil {
		return Item{}, err
	}
	defer f.Close()
	it, err := importFrom(f, size, path, o)
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
	it, err := importFrom(bytes.NewReader(data), int64(len(data)), name, o)
	if err != nil {
		return Item{}, fmt.Errorf("%s: %w", name, err)
	}
	if it.Target != nil {
		it.Target.Source = nil
	}
	return it, nil
}

func importFrom(r io.ReaderAt, size int64, name string, o ImportOptions) (Item, error) {
	head := make([]byte, 512)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return Item{}, userfile.PathErr(err)
	}
	head = head[:n]
	stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if _, ok := arrays.Sniff(head, name); ok {
		af, err := arrays.OpenReader(r, size, name)
		if err != nil {
			return Item{}, err
		}
		return importArrays(af, stem, o)
	}
	if t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if size > userfile.MaxSize {
			return Item{}, tooLarge()
		}
		data := make([]byte, size)
		if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
			return Item{}, userfile.PathErr(err)
		}
		return importJSON(data, stem, o)
	}
	return Item{}, fmt.Errorf("%w: not a file ssmlab imports: want a filter or target JSON file, or an .npy, .npz, .safetensors or CSV (.csv, .tsv, .txt) file", arrays.ErrUnsupported)
}

func importJSON(data []byte, stem string, o ImportOptions) (Item, error) {
	if sniffSession(data) {
		return Item{}, invalidf("this is a session file; open it, or export its items")
	}
	if o.Tensor != "" {
		return Item{}, invalidf("a JSON file holds no tensors to choose from")
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) == nil {
		if _, ok := top["kernels"]; ok {
			t, err := UnmarshalTarget(data)
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
	prefix, ok, err := FindRTF(names, o.Tensor)
	if err != nil {
		return Item{}, err
	}
	if ok {
		return importRTFLayer(af, infos, prefix, stem, o)
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
			_, err := af.Read(o.Tensor) // for its message, listing the names
			return Item{}, err
		}
	} else {
		var supported []string
		for _, in := range infos {
			if in.Supported && !in.Complex {
				supported = append(supported, in.Name)
			}
		}
		if len(supported) != 1 {
			return Item{}, &ChoiceError{What: "arrays", Names: names}
		}
		for i := range infos {
			if infos[i].Name == supported[0] {
				pick = &infos[i]
			}
		}
	}
	if pick.Complex {
		return Item{}, invalidf("%q is a complex array of shape %s: kernels are real (a layout reads complex parameters; --layout names one)", pick.Name, arrays.ShapeString(pick.Shape))
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
	return Item{Target: t, Note: note}, nil
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
		return nil, invalidf("columns of an array of shape %s: want a 2-D array", arrays.ShapeString(a.Shape))
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

func importRTFLayer(af *arrays.File, infos []arrays.Info, prefix, stem string, o ImportOptions) (Item, error) {
	read := func(name string) (*arrays.Array, string, error) {
		for _, in := range infos {
			if in.Name == name {
				a, err := af.Read(name)
				return a, fmt.Sprintf("%s %s %s", name, arrays.ShapeString(in.Shape), in.DType), err
			}
		}
		return nil, "", nil
	}
	ab, abNote, err := read(prefix + RTFCoefficients)
	if err != nil {
		return Item{}, err
	}
	h0, h0Note, err := read(prefix + RTFDirect)
	if err != nil {
		return Item{}, err
	}
	scalar, scNote, err := read(prefix + RTFScalar)
	if err != nil {
		return Item{}, err
	}
	bank, err := ImportRTF(ab, h0, scalar, RTFOptions{TruncLen: o.TruncLen})
	if err != nil {
		return Item{}, err
	}
	e := &Entry{Name: o.Name, Bank: bank}
	if e.Name == "" {
		e.Name = stem
		if p := strings.TrimSuffix(prefix, "."); p != "" {
			e.Name += ":" + p
		}
	}
	parts := []string{abNote, h0Note}
	if scalar != nil {
		parts = append(parts, scNote+" (l1_montel constraint applied)")
	}
	if o.TruncLen > 0 {
		parts = append(parts, fmt.Sprintf("truncation correction for trunc_len %d undone", o.TruncLen))
	}
	note := fmt.Sprintf("RTF layer %q: %s → %s", prefix, strings.Join(parts, ", "), e.Describe())
	return Item{Entry: e, Note: note}, nil
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
	n, err := parseTree(bytes.TrimPrefix(data, []byte("\ufeff")))
	if err != nil {
		return nil, err
	}
	if err := n.objectKeys("a target file", "name", "kernels"); err != nil {
		return nil, err
	}
	t := &Target{}
	if t.Name, err = n.str("a target file", "name"); err != nil {
		return nil, err
	}
	kn := n.get("kernels")
	if kn == nil {
		return nil, invalidf("a target file needs \"kernels\"")
	}
	if t.Kernels, err = kn.toArray(); err != nil {
		return nil, fmt.Errorf("%w: \"kernels\": %w", ErrInvalid, err)
	}
	if err := checkKernels(t.Kernels); err != nil {
		return nil, err
	}
	return t, nil
}

// Add adds an imported item to the session and returns its ID.
func (s *Session) Add(it Item) (string, error) {
	switch {
	case it.Entry != nil && it.Target == nil:
		return s.AddFilter(it.Entry.Document())
	case it.Target != nil && it.Entry == nil:
		return s.AddTarget(*it.Target)
	}
	return "", invalidf("an Item holds an Entry or a Target")
}

// Find returns the ID of the item whose ID, or else whose name, is key; a name shared by
// several items is an error.
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
		return "", notFound(key)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%w: %d items are named %q (%s); use an ID", ErrNotFound, len(ids), key, strings.Join(ids, ", "))
}

// Items returns the session's items with the given IDs, or all its filters and targets when
// none are given. Jobs are not items.
func (s *Session) Items(ids ...string) ([]Item, error) {
	var out []Item
	if len(ids) == 0 {
		for i := range s.Filters {
			e := s.Filters[i]
			out = append(out, Item{Entry: &e})
		}
		for i := range s.Targets {
			t := s.Targets[i]
			out = append(out, Item{Target: &t})
		}
		return out, nil
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

// ExportFormat names a format Export writes.
type ExportFormat string

// The export formats.
const (
	ExportJSON        ExportFormat = "json"
	ExportNPZ         ExportFormat = "npz"
	ExportSafetensors ExportFormat = "safetensors"
	ExportNPY         ExportFormat = "npy"
	ExportCSV         ExportFormat = "csv"
)

// ExportFormats lists the export formats.
var ExportFormats = []ExportFormat{ExportNPZ, ExportSafetensors, ExportJSON, ExportCSV, ExportNPY}

// DefaultLength is the number of impulse-response samples a filter exports to CSV or .npy.
const DefaultLength = 1024

// MaxLength is the largest ExportOptions.Length.
const MaxLength = 1 << 20

// ExportOptions choose how Export writes.
type ExportOptions struct {
	Format ExportFormat
	// DType is the element type of .npy, .npz and .safetensors files: arrays.Float64 (the
	// zero value) or arrays.Float32.
	DType arrays.DType
	// Prefix is put before every tensor name in .npz and .safetensors files.
	Prefix string
	// TruncLen stores RTF numerators with the truncation correction; see RTFOptions.
	TruncLen int
	// Length is the number of impulse-response samples of a filter exported to CSV or
	// .npy (DefaultLength when 0).
	Length int
	// Compress deflates an .npz file.
	Compress bool
}

// Exported is what Export wrote and what it measured.
type Exported struct {
	Data []byte
	// Reports are those of the conversions to the tf form that the RTF layout needed.
	Reports []filters.Report
	// ReadBack has, for each filter or bank written in the RTF layout, how closely the
	// tensors as written (rounded to the dtype, the truncation correction undone) give its
	// impulse responses (see ReadBack).
	ReadBack []ReadBackCheck
}

// ReadBackCheck is ReadBack's measure for one item: the worst channel's relative L2 error
// over Length samples, or Err when the tensors cannot be read back, for tensors of DType
// written with TruncLen.
type ReadBackCheck struct {
	Item     string
	RelError float64
	Channel  int
	Length   int
	Err      error
	DType    arrays.DType
	TruncLen int
}

// Summary says how closely the tensors read back, in the words the CLI and the workbench
// both print; warn is true when they lose more than filters.MaxRelError or cannot be read
// back. float64Option is how the caller's user asks for float64 tensors ("--dtype float64"),
// offered when float32 is what lost the digits.
func (c ReadBackCheck) Summary(float64Option string) (text string, warn bool) {
	how := "as " + c.DType.String()
	if c.TruncLen > 0 {
		how += fmt.Sprintf(" (trunc_len %d)", c.TruncLen)
	}
	advice := ""
	if c.DType == arrays.Float32 {
		advice = "; " + float64Option + " may hold it"
	}
	rel := fmt.Sprintf("%.2g", c.RelError)
	if c.RelError >= math.MaxFloat64 {
		rel = "overflow"
	}
	switch {
	case c.Err != nil:
		msg := strings.TrimPrefix(c.Err.Error(), ErrInvalid.Error()+": ")
		msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
		return fmt.Sprintf("cannot be read back %s: %s%s", how, msg, advice), true
	case c.RelError > filters.MaxRelError:
		return fmt.Sprintf("reads back %s to relative error %s over %d samples (channel %d)%s", how, rel, c.Length, c.Channel, advice), true
	}
	return fmt.Sprintf("reads back %s to relative error %s over %d samples", how, rel, c.Length), false
}

// Export encodes items in a format:
//
//   - json: one item, as a filter file (docs/formats.md) or a target file;
//   - npz, safetensors: every item; a filter or bank in the RTF layout (ExportRTF: tensors
//     ab and h_0), a target as its kernels (tensor "kernels"). With several items, each
//     item's tensor names start with its ID and a dot ("f1.ab", "t2.kernels");
//   - csv, npy: one item: a target's kernels, or a filter's impulse response (Length
//     samples, one row per channel of a bank).
//
// For filters in the RTF layout it also reads the tensors back (ReadBack) and reports how
// closely they give the filters' impulse responses.
func Export(items []Item, o ExportOptions) (Exported, error) {
	if len(items) == 0 {
		return Exported{}, invalidf("nothing to export")
	}
	for _, it := range items {
		if (it.Entry == nil) == (it.Target == nil) {
			return Exported{}, invalidf("an Item holds an Entry or a Target")
		}
	}
	if o.Length == 0 {
		o.Length = DefaultLength
	}
	if o.Length < 1 || o.Length > MaxLength {
		return Exported{}, invalidf("length %d is outside [1, %d]", o.Length, MaxLength)
	}
	one := func() error {
		if len(items) != 1 {
			return invalidf("%s holds one item, not %d: choose one", o.Format, len(items))
		}
		return nil
	}
	switch o.Format {
	case ExportJSON:
		if err := one(); err != nil {
			return Exported{}, err
		}
		if e := items[0].Entry; e != nil {
			b, err := filterfile.Marshal(e.Document())
			return Exported{Data: b}, err
		}
		b, err := MarshalTarget(items[0].Target)
		return Exported{Data: b}, err
	case ExportCSV, ExportNPY:
		if err := one(); err != nil {
			return Exported{}, err
		}
		a, err := itemArray(items[0], o.Length)
		if err != nil {
			return Exported{}, err
		}
		if o.Format == ExportCSV {
			b, err := arrays.EncodeCSV(a)
			return Exported{Data: b}, err
		}
		b, err := arrays.EncodeNPY(a, o.DType)
		return Exported{Data: b}, err
	case ExportNPZ, ExportSafetensors:
		var (
			named   []arrays.Named
			reports []filters.Report
			checks  []ReadBackCheck
		)
		for i, it := range items {
			prefix := o.Prefix
			if len(items) > 1 {
				key := strconv.Itoa(i)
				if it.Entry != nil && it.Entry.ID != "" {
					key = it.Entry.ID
				} else if it.Target != nil && it.Target.ID != "" {
					key = it.Target.ID
				}
				prefix += key + "."
			}
			if it.Entry != nil {
				ro := RTFOptions{Prefix: prefix, TruncLen: o.TruncLen}
				tensors, reps, err := ExportRTF(it.Entry.Document(), ro)
				if err != nil {
					return Exported{}, itemErr(it, err)
				}
				c := ReadBackCheck{Item: itemName(it), DType: o.DType, TruncLen: o.TruncLen}
				c.RelError, c.Channel, c.Length, c.Err = ReadBack(it.Entry.Document(), tensors, o.DType, ro)
				checks = append(checks, c)
				named = append(named, tensors...)
				reports = append(reports, reps...)
				continue
			}
			if it.Target.Kernels == nil {
				return Exported{}, itemErr(it, invalidf("its kernels are not loaded: %v", it.Target.Err))
			}
			named = append(named, arrays.Named{Name: prefix + KernelsTensor, Array: it.Target.Kernels})
		}
		if o.Format == ExportNPZ {
			b, err := arrays.EncodeNPZ(named, arrays.NPZOptions{DType: o.DType, Compress: o.Compress})
			return Exported{Data: b, Reports: reports, ReadBack: checks}, err
		}
		meta := map[string]string{"producer": "ssmlab"}
		if o.TruncLen > 0 {
			meta["trunc_len"] = strconv.Itoa(o.TruncLen)
		}
		b, err := arrays.EncodeSafetensors(named, arrays.SafetensorsOptions{DType: o.DType, Metadata: meta})
		return Exported{Data: b, Reports: reports, ReadBack: checks}, err
	}
	return Exported{}, invalidf("unknown export format %q (want npz, safetensors, json, csv or npy)", o.Format)
}

func itemErr(it Item, err error) error {
	return fmt.Errorf("%s: %w", itemName(it), err)
}

// itemName names an item in messages: its ID and quoted name, or its quoted name.
func itemName(it Item) string {
	name, id := "", ""
	if it.Entry != nil {
		name, id = it.Entry.Name, it.Entry.ID
	} else {
		name, id = it.Target.Name, it.Target.ID
	}
	if id != "" {
		return fmt.Sprintf("%s (%q)", id, name)
	}
	return strconv.Quote(name)
}

// itemArray returns a target's kernels, or a filter's impulse response of length samples:
// (length) for a filter, (channels, length) for a bank.
func itemArray(it Item, length int) (*arrays.Array, error) {
	if it.Target != nil {
		if it.Target.Kernels == nil {
			return nil, itemErr(it, invalidf("its kernels are not loaded: %v", it.Target.Err))
		}
		return it.Target.Kernels, nil
	}
	e := it.Entry
	chans := []filters.Filter{e.Filter}
	shape := []int{length}
	if e.Bank != nil {
		chans = e.Bank.Channels
		shape = []int{len(chans), length}
	}
	if len(chans)*length > arrays.MaxElements {
		return nil, itemErr(it, invalidf("%d channels of %d samples exceed the limit of %d values", len(chans), length, arrays.MaxElements))
	}
	data := make([]float64, 0, len(chans)*length)
	for c, f := range chans {
		h := f.Impulse(length)
		for t, x := range h {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, itemErr(it, fmt.Errorf("%w: channel %d: the impulse response is not finite at sample %d (the filter is unstable)", ErrInvalid, c, t))
			}
		}
		data = append(data, h...)
	}
	return arrays.New(shape, data)
}

// ExportFile writes Export's output to path atomically (a temporary file in the same
// directory, synced and renamed over path).
func ExportFile(path string, items []Item, o ExportOptions) (Exported, error) {
	out, err := Export(items, o)
	if err != nil {
		return out, err
	}
	if err := atomicfile.WriteFile(path, out.Data); err != nil {
		return out, fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return out, nil
}

// ParseExportFormat returns the format named s.
func ParseExportFormat(s string) (ExportFormat, error) {
	for _, f := range ExportFormats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", errors.New("unknown export format " + strconv.Quote(s) + " (want npz, safetensors, json, csv or npy)")
}
