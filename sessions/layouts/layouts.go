package layouts

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Layout names the parameter layout of a model's layer.
type Layout string

// The layouts ssmlab reads (docs/formats.md, "Model layouts", has a section on each).
const (
	RTF          Layout = "rtf"
	S4D          Layout = "s4d"
	S4           Layout = "s4"
	StripedHyena Layout = "stripedhyena"
	Hyena        Layout = "hyena"
	LRU          Layout = "lru"
	S5           Layout = "s5"
	RotRNN       Layout = "rotrnn"
	SOS          Layout = "sos"
)

// Layouts lists the layouts import reads, in the order detection tries them.
var Layouts = []Layout{RTF, S4D, S4, StripedHyena, Hyena, LRU, S5, RotRNN, SOS}

// ExportLayouts lists the layouts export writes.
var ExportLayouts = []Layout{RTF, S4D, StripedHyena, SOS}

// ModuleLayouts lists the export layouts a model's module loads: those a distilled
// checkpoint's layers can be written in. sos is a filter's layout (scipy.signal.sosfilt's),
// no model's layer.
var ModuleLayouts = []Layout{RTF, S4D, StripedHyena}

// ParseLayout returns the layout named s.
func ParseLayout(s string) (Layout, error) {
	for _, l := range Layouts {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown layout %q (want %s)", s, JoinLayouts(Layouts))
}

// JoinLayouts lists layouts' names for messages: "rtf, s4d, stripedhyena".
func JoinLayouts(ls []Layout) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}

// PrefixName names a layer by its prefix in messages ("layer %s"): the prefix, or "(no
// prefix)" for a layer whose tensors are named as its module alone names them, which read
// "layer : 2 channels".
func PrefixName(prefix string) string {
	if prefix == "" {
		return "(no prefix)"
	}
	return prefix
}

// Errors wrapped by the package's failures.
var (
	// ErrInvalid marks tensors that do not make the layer: missing, mis-shaped or
	// inconsistent, or parameters no filter can be built from.
	ErrInvalid = errors.New("invalid layer")
	// ErrNotFound marks a request for a layer or layout the file does not hold.
	ErrNotFound = errors.New("no such layer")
	// ErrNotExported marks an option of reading a layer that Export was given, which it
	// does not use.
	ErrNotExported = errors.New("not exported")
	// ErrOptionValue marks, with ErrInvalid, a value of a layout option (--NAME) that the
	// layer read cannot take, its message naming the option: a length beyond the positions
	// a Hyena layer stores, or outside the range an S4 layer's C̃ is undone for, none where
	// an S4D layer's dss discretisation needs one. Like an *OptionLayoutError it is the
	// caller's mistake, not the file's (ssmlab exits 2 for it).
	ErrOptionValue = errors.New("option value refused")
)

// kindError is a failure of a kind (ErrInvalid, ErrNotExported, ErrOptionValue) whose message needs no
// prefix: it names the tensor and the shape expected, the parameter that makes no filter, or
// the option export does not use.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

func invalidf(format string, args ...any) error {
	return &kindError{ErrInvalid, fmt.Errorf(format, args...)}
}

// optionf is an error of kind ErrOptionValue (and ErrInvalid), its message naming the option.
func optionf(format string, args ...any) error {
	return &kindError{ErrOptionValue, invalidf(format, args...)}
}

// Source is what a layout reads: the names, dtypes and shapes of a file's arrays, and the
// arrays themselves. *arrays.File is one.
type Source interface {
	Arrays() []arrays.Info
	Read(name string) (*arrays.Array, error)
}

// Layer is a layer found in a file: its module prefix (the tensor names less their layout's
// own names, "layers.0.layer." or ""), its layout and its size. Options holds what detection
// found or assumed (the defaults of options the checkpoint does not record).
type Layer struct {
	Prefix   string `json:"prefix"`
	Layout   Layout `json:"layout"`
	Channels int    `json:"channels"`
	// Order is a channel's real state count, at most (a complex mode held with its
	// conjugate counts 2): the order it imports as, and the order distill's --order counts,
	// in every layout. ComplexModes is the layout's own count where it stores complex modes
	// (or poles) each standing for a conjugate pair: S4D's and S4's N/2, StripedHyena's
	// state_size, LRU's d_hidden, S5's P; 0 elsewhere.
	Order        int `json:"order,omitempty"`
	ComplexModes int `json:"complex_modes,omitempty"`

	Length  int               `json:"length,omitempty"` // samples of a kernel (hyena)
	DType   string            `json:"dtype"`
	Options map[string]string `json:"options"`
	// Problem is why the layer, detected by its other tensors, cannot be read (the tensor
	// that bears its channels missing or mis-shaped, Channels 0 then), as Import says it;
	// empty where none was found. Detect leaves it empty; a listing that has the file sets
	// it (sessions.ListFile).
	Problem string `json:"problem,omitempty"`
}

// Size says a layer's size as import --list gives it: "order 8 (4 complex poles)", "order
// 6", "length 64".
func (l Layer) Size() string {
	switch {
	case l.Length > 0:
		return fmt.Sprintf("length %d", l.Length)
	case l.ComplexModes > 0:
		what := "mode"
		if l.Layout == StripedHyena {
			what = "pole"
		}
		return fmt.Sprintf("order %d (%s)", l.Order, plural.Count(l.ComplexModes, "complex "+what))
	}
	return fmt.Sprintf("order %d", l.Order)
}

// layout is one layout's implementation.
type layout interface {
	// detect finds the layer at prefix p, given the file's arrays by name, or reports
	// false. It reads shapes only.
	detect(infos map[string]arrays.Info, p string) (Layer, bool)
	// read builds the layer's filters (or kernels) from its tensors.
	read(t *tensors, l Layer, o Options) (Result, error)
	// params are the names (after the prefix) the layout's tensors may have.
	params() []string
}

var impls = map[Layout]layout{}

// Result is what a layer reads as: a bank of filters, or kernels (channels, length).
type Result struct {
	Bank    *filters.Bank
	Kernels *arrays.Array
	// Note says what was read and how, in one line; Warnings are said on stderr (a MIMO
	// layer's slices, a part of the layer left out).
	Note     string
	Warnings []string
	// Pairs are the warnings about the bank alone (among Warnings): which pairs of a MIMO
	// layer it holds, and the part of a bidirectional S5 layer it leaves out, which do not
	// apply where the layer is taken whole (MIMO).
	Pairs []string
	// Single says that the layer holds one filter, not a bank (an sos tensor of shape
	// (sections, 6)): Bank has its one channel.
	Single bool
	// Tensors are the full names of the file's tensors the layer was read from (and the
	// kernel's buffers), in the order read: what a layer written in their place replaces.
	Tensors []string
	// Shared are the modes of an S4D layer that SharesModes (without residues), for a fit
	// that keeps them shared; nil for any other layer.
	Shared *SharedModes
	// MIMO is the whole layer of an lru or s5 layer, of which Bank holds the pairs: what
	// ExportMIMO writes back; nil for others. A bidirectional S5 layer's has 2H outputs, the
	// forward ones then the backward (anti-causal) ones, whose pairs the bank leaves out.
	MIMO *filters.MIMO
}

// Unrecognised returns, for the arrays of a file where no layer was detected, what their
// names are where they are a known model's in a naming ssmlab does not read: state-spaces/s4's
// v3 names (kernel.kernel.log_dt, log_w_real or inv_w_real, w_imag; safari's and H3's
// kernels), which that repository's checkpoints/convert_v3_to_v4.py renames to the v4 names
// of the s4d and s4 layouts; or a prefix holding some of a layout's tensors that is no layer
// of it (one that detection needs is missing or not a float tensor), which reading it as that
// layout names. "" otherwise.
func Unrecognised(infos []arrays.Info) string {
	for _, in := range infos {
		_, leaf, _ := strings.Cut(in.Name, "kernel.kernel.")
		if slices.Contains([]string{"log_dt", "log_w_real", "inv_w_real", "w_imag"}, leaf) {
			return fmt.Sprintf("%q is state-spaces/s4's v3 naming: that repository's checkpoints/convert_v3_to_v4.py renames a v3 checkpoint's tensors to the v4 names the s4d and s4 layouts read", in.Name)
		}
	}
	return partialLayer(infos)
}

// partialLayer names the prefix holding the most tensors of one layout (two or more, one of
// them named in two letters or more: B, C, D and M alone are any state-space model's), for a
// file where no layer was detected, and how to read it as that layout; "" where none does.
func partialLayer(infos []arrays.Info) string {
	names := make(map[string]bool, len(infos))
	for _, in := range infos {
		names[in.Name] = true
	}
	var best []string
	var bestLayout Layout
	bestPrefix := ""
	for _, lay := range Layouts {
		for _, p := range prefixes(infos, impls[lay].params()) {
			var held []string
			named := false
			for _, q := range impls[lay].params() {
				if names[p+q] {
					held = append(held, q)
					named = named || len(q) >= 2
				}
			}
			if named && len(held) >= 2 && len(held) > len(best) {
				best, bestLayout, bestPrefix = held, lay, p
			}
		}
	}
	if best == nil {
		return ""
	}
	where, how := strconv.Quote(bestPrefix), fmt.Sprintf("--layout %s --tensor %s", bestLayout, bestPrefix)
	if bestPrefix == "" {
		where, how = "the file", "--layout "+string(bestLayout)
	}
	return fmt.Sprintf("%s holds tensors of a %s layer (%s) but is none: %s names what it lacks", where, bestLayout, plural.First(best, 4, ", "), how)
}

// Detect lists the layers among a file's arrays, by prefix then layout.
func Detect(infos []arrays.Info) []Layer {
	byName := make(map[string]arrays.Info, len(infos))
	for _, in := range infos {
		byName[in.Name] = in
	}
	var out []Layer
	seen := map[string]bool{}
	for _, lay := range Layouts {
		impl := impls[lay]
		for _, p := range prefixes(infos, impl.params()) {
			if seen[string(lay)+"\x00"+p] {
				continue
			}
			seen[string(lay)+"\x00"+p] = true
			if l, ok := impl.detect(byName, p); ok {
				l.Layout, l.Prefix = lay, p
				if l.Options == nil {
					l.Options = map[string]string{}
				}
				out = append(out, l)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Prefix != out[j].Prefix {
			return prefixLess(out[i].Prefix, out[j].Prefix)
		}
		return slices.Index(Layouts, out[i].Layout) < slices.Index(Layouts, out[j].Layout)
	})
	return dropShadowed(out)
}

// dropShadowed keeps one layer per prefix where layouts overlap: an S4 (DPLR) layer has
// every tensor of an S4D one, and P.
func dropShadowed(ls []Layer) []Layer {
	var out []Layer
	for _, l := range ls {
		if l.Layout == S4D && slices.ContainsFunc(ls, func(o Layer) bool { return o.Layout == S4 && o.Prefix == l.Prefix }) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// prefixLess orders prefixes with their numbers as numbers: layers.2. before layers.10.
func prefixLess(a, b string) bool {
	fa, fb := strings.FieldsFunc(a, isSep), strings.FieldsFunc(b, isSep)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if fa[i] == fb[i] {
			continue
		}
		na, ea := strconv.Atoi(fa[i])
		nb, eb := strconv.Atoi(fb[i])
		if ea == nil && eb == nil {
			return na < nb
		}
		return fa[i] < fb[i]
	}
	return len(fa) < len(fb)
}

func isSep(r rune) bool { return r == '.' || r == '/' }

// prefixes returns the prefixes P (empty, or ending in "." or "/") such that P+param is an
// array name for some param.
func prefixes(infos []arrays.Info, params []string) []string {
	var out []string
	for _, in := range infos {
		for _, param := range params {
			p, ok := strings.CutSuffix(in.Name, param)
			if ok && (p == "" || strings.HasSuffix(p, ".") || strings.HasSuffix(p, "/")) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Find returns the layer to read: of the given layout (any when empty), at the given prefix
// (any when empty; "layers.0" matches "layers.0."; a tensor name of the layer matches too).
// With nothing asked and one layer detected, it is that one. A layout asked for at a prefix
// where it is not detected is still returned when the prefix holds some of its tensors, so
// that reading it names what is missing or mis-shaped.
func Find(infos []arrays.Info, lay Layout, prefix string) (Layer, error) {
	all := Detect(infos)
	var match []Layer
	for _, l := range all {
		if (lay == "" || l.Layout == lay) && (prefix == "" || matchesPrefix(l, prefix)) {
			match = append(match, l)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		return Layer{}, &ChoiceError{Layers: match}
	}
	if lay != "" {
		var distinct []string // a lone "D" or "C" says nothing of the layout
		for _, p := range impls[lay].params() {
			if len(p) > 1 {
				distinct = append(distinct, p)
			}
		}
		for _, p := range prefixes(infos, distinct) {
			if prefix == "" || p == prefix || p == prefix+"." || p == prefix+"/" {
				return Layer{Prefix: p, Layout: lay, Options: map[string]string{}}, nil
			}
		}
	}
	return Layer{}, &NotFoundError{Layout: lay, Prefix: prefix, Detected: all}
}

func matchesPrefix(l Layer, want string) bool {
	if l.Prefix == want || l.Prefix == want+"." || l.Prefix == want+"/" {
		return true
	}
	rest, ok := strings.CutPrefix(want, l.Prefix)
	return ok && slices.Contains(impls[l.Layout].params(), rest)
}

// ChoiceError says that several layers match and lists them.
type ChoiceError struct{ Layers []Layer }

// List names the layers: `s4d "layers.0.layer.", s4d "layers.1.layer."`.
func (e *ChoiceError) List() string { return describe(e.Layers) }

func (e *ChoiceError) Error() string {
	return fmt.Sprintf("the file holds %d layers; choose one with --tensor PREFIX: %s", len(e.Layers), describe(e.Layers))
}

// NotFoundError says that no layer matches, and what was detected.
type NotFoundError struct {
	Layout   Layout
	Prefix   string
	Detected []Layer
}

func (e *NotFoundError) Error() string {
	what := "a layer"
	if e.Layout != "" {
		what = "a layer of layout " + string(e.Layout)
	}
	if e.Prefix != "" {
		what += fmt.Sprintf(" at %q", e.Prefix)
	}
	if len(e.Detected) == 0 {
		return fmt.Sprintf("no %s: the file holds no layer of a known layout (%s)", strings.TrimPrefix(what, "a "), JoinLayouts(Layouts))
	}
	return fmt.Sprintf("no %s; detected: %s", strings.TrimPrefix(what, "a "), describe(e.Detected))
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

func describe(ls []Layer) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%s %q", l.Layout, l.Prefix)
	}
	return plural.First(parts, 10, ", ")
}

// Import reads a layer (found by Detect or Find) from src.
func Import(src Source, l Layer, o Options) (Result, error) {
	impl, ok := impls[l.Layout]
	if !ok {
		return Result{}, fmt.Errorf("%w: unknown layout %q", ErrNotFound, l.Layout)
	}
	if err := o.check(l.Layout); err != nil {
		// Named as the layer's own refusals are (HyenaLength, S4Length): a file of several
		// layers says which one the option was given for.
		return Result{}, layerError(l, err)
	}
	t := newTensors(src, l)
	if l.Options == nil {
		l.Options = map[string]string{}
	}
	r, err := impl.read(t, l, o)
	if err != nil {
		return Result{}, layerError(l, err)
	}
	r.Tensors = t.names
	return r, nil
}

// layerError names layer l in err, as Import's errors name it.
func layerError(l Layer, err error) error {
	if l.Prefix == "" { // tensors named as the module alone names them
		return fmt.Errorf("%s layer: %w", l.Layout, err)
	}
	return fmt.Errorf("%s layer %q: %w", l.Layout, l.Prefix, err)
}

// ParameterOf reports the layout whose parameter a tensor name ends with (after a prefix
// ending in "." or "/"), for the warning that a parameter is not kernels.
func ParameterOf(name string) (Layout, string, bool) {
	for _, lay := range Layouts {
		for _, p := range impls[lay].params() {
			if rest, ok := strings.CutSuffix(name, p); ok && (rest == "" || strings.HasSuffix(rest, ".") || strings.HasSuffix(rest, "/")) {
				return lay, p, true
			}
		}
	}
	return "", "", false
}

// NamedSource is a Source over arrays held in memory (what Export wrote, for reading back).
type NamedSource []arrays.Named

// Arrays lists the arrays.
func (s NamedSource) Arrays() []arrays.Info {
	out := make([]arrays.Info, len(s))
	for i, a := range s {
		out[i] = arrays.Info{Name: a.Name, DType: "float64", Shape: append([]int{}, a.Array.Shape...), Supported: true}
	}
	return out
}

// Read returns the named array.
func (s NamedSource) Read(name string) (*arrays.Array, error) {
	for _, a := range s {
		if a.Name == name {
			return a.Array, nil
		}
	}
	return nil, fmt.Errorf("%w %q", arrays.ErrNotFound, name)
}
