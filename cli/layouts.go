package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ssmlab/ssmlab/presets"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// layoutFlags are the flags of a layer's layout and its options (layouts.OptionList), one
// --NAME each, shared by import and export.
type layoutFlags struct {
	layout string
	values map[string]*string
	pairs  []string
	flags  *pflag.FlagSet
}

// layoutUse is the command layout flags serve: each offers the options that apply to it.
type layoutUse int

const (
	forImport layoutUse = iota
	forExport
	forDistill
)

// addLayoutFlags registers --layout and the layout options (--pair for import).
func addLayoutFlags(f *pflag.FlagSet, use layoutUse) *layoutFlags {
	lf := &layoutFlags{values: map[string]*string{}, flags: f}
	export := use == forExport
	switch use {
	case forExport:
		f.StringVar(&lf.layout, "layout", "", "write filters in the layout `L`: "+layoutNames(layouts.ExportLayouts)+" (default: by the filter's form, rtf for tf, s4d for diagonal, where its tensors hold it, among the layouts that take the options given)")
	case forImport:
		f.Var(layoutValue{&lf.layout, false}, "layout", "read a layer of layout `L` ("+layoutNames(layouts.Layouts)+"), or kernels to read an array as kernels (default: the layer detected)")
		f.StringArrayVar(&lf.pairs, "pair", nil, "read the slice from input IN to output OUT of a MIMO layer (lru, s5, rotrnn; 0-based; repeatable; default: the diagonal)")
	case forDistill:
		f.Var(layoutValue{&lf.layout, true}, "layout", "read the layer (a checkpoint: the layers) of layout `L` ("+layoutNames(layouts.Layouts)+"; default auto: those detected)")
	}
	for _, o := range layouts.OptionList {
		// import's and export's own --trunc-len; export's --length is the samples of csv and
		// npy (the s4d option --length is for dss, which export does not write), distill's
		// the kernel length of layers that record none.
		if o.Name == "trunc-len" && use != forDistill || o.Name == "length" && use != forImport {
			continue
		}
		var applies []string
		for _, l := range layouts.Layouts {
			if _, ok := o.Defaults[l]; ok && (!export || isExportLayout(l)) {
				applies = append(applies, string(l))
			}
		}
		if len(applies) == 0 {
			continue
		}
		v := new(string)
		lf.values[o.Name] = v
		if export {
			// Export's help says how it writes; a setting of reading only is hidden and
			// refused (layouts.Options.CheckExport) rather than unknown, to say why.
			f.Var(optionValue{o.Name, v}, o.Name, o.Export)
			if o.Export == "" {
				_ = f.MarkHidden(o.Name)
			}
			continue
		}
		f.Var(optionValue{o.Name, v}, o.Name, fmt.Sprintf("(%s) %s", strings.Join(applies, ", "), o.Help))
	}
	return lf
}

// layoutValue is the --layout flag of import and distill: a name that is no layout (nor
// kernels, nor distill's auto; "" is the default) is a command-line mistake when parsed
// (exit 2, flagError), whatever the file holds; read with the file, it was a failure of an
// array file and passed over for a JSON file.
type layoutValue struct {
	v    *string
	auto bool // distill's: auto, every layer detected
}

func (l layoutValue) String() string {
	if l.v == nil { // pflag's zero value, for its help
		return ""
	}
	return *l.v
}

func (l layoutValue) Set(v string) error {
	if _, err := layouts.ParseLayout(v); err != nil && v != "" && v != sessions.Kernels && !(l.auto && v == "auto") {
		also := "kernels"
		if l.auto {
			also = "kernels or auto"
		}
		return fmt.Errorf("want %s, or %s", layoutNames(layouts.Layouts), also)
	}
	*l.v = v
	return nil
}

func (layoutValue) Type() string { return "string" }

// optionValue is a layout option's flag: a value the option cannot take (layouts.CheckValue)
// is a command-line mistake when parsed (exit 2, flagError), whatever the file holds.
type optionValue struct {
	name string
	v    *string
}

func (o optionValue) String() string {
	if o.v == nil { // pflag's zero value, for its help
		return ""
	}
	return *o.v
}

func (o optionValue) Set(v string) error {
	for _, opt := range layouts.OptionList {
		if opt.Name != o.name || opt.Kind != "float" {
			continue
		}
		if _, err := parseFinite(v); errors.Is(err, presets.ErrNotFinite) {
			return err // as every float flag
		}
	}
	if err := layouts.CheckValue(o.name, v); err != nil {
		return err
	}
	*o.v = v
	return nil
}

func (optionValue) Type() string { return "string" }

func isExportLayout(l layouts.Layout) bool {
	for _, e := range layouts.ExportLayouts {
		if e == l {
			return true
		}
	}
	return false
}

func layoutNames(ls []layouts.Layout) string { return layouts.JoinLayouts(ls) }

// options returns the option values given on the command line.
func (lf *layoutFlags) options() map[string]string {
	m := map[string]string{}
	for name, v := range lf.values {
		if lf.flags.Changed(name) {
			m[name] = *v
		}
	}
	return m
}

// parsePairs reads --pair OUT,IN values.
func (lf *layoutFlags) parsePairs() ([][2]int, error) {
	var out [][2]int
	for _, p := range lf.pairs {
		a, b, ok := strings.Cut(p, ",")
		o, err1 := strconv.Atoi(strings.TrimSpace(a))
		i, err2 := strconv.Atoi(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil || o < 0 || i < 0 {
			return nil, fmt.Errorf("--pair %q: want OUT,IN, two 0-based indices such as 0,3", p)
		}
		out = append(out, [2]int{o, i})
	}
	return out, nil
}

// listing is what import --list prints: the layers detected, then every array.
type listing struct {
	Format string           `json:"format"`
	Root   string           `json:"root,omitempty"`
	Layers []layouts.Layer  `json:"layers"`
	Arrays []arrayListEntry `json:"arrays"`
}

type arrayListEntry struct {
	Name      string `json:"name"`
	DType     string `json:"dtype"`
	Shape     []int  `json:"shape"`
	Supported bool   `json:"supported"`
}

func (s *streams) listFile(path string) error {
	if path == "-" {
		return fmt.Errorf("--list needs a FILE, not stdin")
	}
	if err := sessionFileError(path); err != nil {
		return err
	}
	ls, err := sessions.ListFile(path)
	if err != nil {
		return failUnlessOption(err)
	}
	l := listing{Format: string(ls.Format), Root: ls.Root, Layers: ls.Layers, Arrays: []arrayListEntry{}}
	if l.Layers == nil {
		l.Layers = []layouts.Layer{}
	}
	for _, in := range ls.Arrays {
		shape := in.Shape
		if shape == nil {
			shape = []int{}
		}
		l.Arrays = append(l.Arrays, arrayListEntry{in.Name, in.DType, shape, in.Supported})
	}
	data, err := json.Marshal(l)
	if err != nil {
		return failf("%s: %w", path, err)
	}
	return s.writeOut(data)
}

// failUnlessOption marks err, of reading or writing layers through package sessions, a failure
// of the work (exit 1), unless it is a layout option given where no layer has it
// (layouts.OptionLayoutError) or a value of one the layer read cannot take
// (layouts.ErrOptionValue: an import --length beyond a Hyena layer's positions), its message
// naming the file, the layer and the flag, or an option's value the file refuses
// (*sessions.OptionError: distill CKPT --length 1, a --trunc-len the file's metadata
// contradicts), spelled as its flag (flagMistake): a command-line mistake (exit 2). So is a
// file of several layers or arrays read without --tensor (*layouts.ChoiceError,
// *sessions.ChoiceError): a choice the command line must make and did not, as --layers
// picking none is.
func failUnlessOption(err error) error {
	if e := (*layouts.OptionLayoutError)(nil); errors.As(err, &e) || errors.Is(err, layouts.ErrOptionValue) {
		return err
	}
	if isChoice(err) {
		return err
	}
	if oe := (*sessions.OptionError)(nil); errors.As(err, &oe) {
		return flagMistake(err)
	}
	return fail(err)
}

// exportFailed says in one line why an export of src wrote nothing: the first read-back check
// beyond the limit, and how many more warnings --force would print with it.
func exportFailed(src string, out sessions.Exported) error {
	var first string
	warnings := 0
	for _, r := range out.Reports {
		warnings += len(r.Warnings)
	}
	for _, c := range out.ReadBack {
		if text, warn := readBackText(c); warn {
			warnings++
			if first == "" && c.Failed() {
				first = text
			}
		}
	}
	more := ""
	if warnings > 1 {
		more = fmt.Sprintf(", with %d more warnings", warnings-1)
	}
	return failf("%s: nothing was written: %s; the tensors do not hold the filters to the documented accuracy (a relative error of at most 1e-6 in float64, 1e-4 in float32, 3e-2 in bfloat16, and stable filters staying stable); --force writes them anyway%s", src, first, more)
}

// isChoice reports whether err asks for a choice among a file's layers or arrays that
// --tensor makes.
func isChoice(err error) bool {
	lc, ac := (*layouts.ChoiceError)(nil), (*sessions.ChoiceError)(nil)
	return errors.As(err, &lc) || errors.As(err, &ac)
}
