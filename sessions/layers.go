package sessions

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// Kernels, as ImportOptions.Layout, reads an array as kernels even where it belongs to a
// layer.
const Kernels = "kernels"

// findLayer returns the layer to import from a file's arrays, or false when the arrays are
// to be read as kernels: no layout asked for and either no layer detected, or a tensor asked
// for that is no layer's.
func findLayer(infos []arrays.Info, o ImportOptions) (layouts.Layer, bool, error) {
	if o.Layout == Kernels {
		return layouts.Layer{}, false, nil
	}
	var lay layouts.Layout
	if o.Layout != "" {
		var err error
		if lay, err = layouts.ParseLayout(o.Layout); err != nil {
			detected := "no layer of a known layout"
			if ls := layouts.Detect(infos); len(ls) > 0 {
				detected = (&layouts.ChoiceError{Layers: ls}).List()
			} else if h := layouts.Unrecognised(infos); h != "" {
				detected += " (" + h + ")"
			}
			return layouts.Layer{}, false, inputf("%v (or kernels); the file holds %s", err, detected)
		}
	}
	l, err := layouts.Find(infos, lay, o.Tensor)
	switch nf := (*layouts.NotFoundError)(nil); {
	case err == nil:
		return l, true, nil
	case errors.As(err, &nf) && lay == "" && (o.Tensor != "" || len(nf.Detected) == 0):
		return layouts.Layer{}, false, nil
	case errors.As(err, &nf) && o.Tensor != "" && slices.ContainsFunc(nf.Detected, func(l layouts.Layer) bool { return l.Layout == lay }):
		// The file has layers of the layout, at other prefixes: --tensor is at fault.
		return layouts.Layer{}, false, notHeldError{&OptionError{"tensor", strconv.Quote(o.Tensor), fmt.Sprintf(" is no %s layer's prefix: the file's layers are %s", lay, (&layouts.ChoiceError{Layers: nf.Detected}).List())}, layouts.ErrNotFound}
	}
	return layouts.Layer{}, false, inputError{err}
}

// inputError marks an error of package layouts as one of ErrInvalid without adding to its
// message, which names the tensor or option at fault.
type inputError struct{ err error }

func (e inputError) Error() string   { return e.err.Error() }
func (e inputError) Unwrap() []error { return []error{ErrInvalid, e.err} }

func inputf(format string, args ...any) error { return inputError{fmt.Errorf(format, args...)} }

// importLayer reads a model's layer (package layouts) as a bank, or as kernels (hyena,
// StripedHyena's short filters). An RTF layer's trunc_len comes from the file's metadata
// when export wrote it there; a different one given (ImportOptions.TruncLen, or the option
// trunc-len as distill gives it) is an error (layerTruncLen).
func importLayer(af *arrays.File, l layouts.Layer, stem string, o ImportOptions) (Item, error) {
	lo := layouts.Options{Values: maps.Clone(o.Options), Pairs: o.Pairs}
	if lo.Values == nil {
		lo.Values = map[string]string{}
	}
	var notes []string
	if o.TruncLen > 0 && l.Layout != layouts.RTF {
		return Item{}, truncLenNotRTF(o.TruncLen, l.Layout) // an *OptionError, as export's
	}
	if l.Layout == layouts.RTF {
		n, from, err := layerTruncLen(af, lo.Values, o.TruncLen)
		if err != nil {
			return Item{}, err
		}
		if n > 0 {
			lo.Values["trunc-len"] = strconv.Itoa(n)
		}
		switch {
		case from != "" && from != "--trunc-len":
			notes = append(notes, fmt.Sprintf("trunc_len %d from %s", n, from))
		case from == "" && af.Format != arrays.FormatSafetensors:
			// A .pt or .npz file holds no metadata: say what 0 is read as.
			notes = append(notes, fmt.Sprintf("trunc_len 0: a %s file records none, and no manifest of distill's beside it (FILE.manifest.json) does, so the numerators were read as stored, as a module built without trunc_len holds them; --trunc-len L reads those of a module built with trunc_len L", af.Format))
		}
	}
	if from, err := s4dDtTransform(af, l, lo.Values); err != nil {
		return Item{}, err
	} else if from != "" {
		notes = append(notes, fmt.Sprintf("dt_transform %s from %s", lo.Values["dt-transform"], from))
	}
	r, err := layouts.Import(af, l, lo)
	if err != nil {
		return Item{}, inputError{err}
	}
	name := o.Name
	if name == "" {
		name = stem
		if p := strings.TrimRight(l.Prefix, "./"); p != "" {
			name += ":" + p
		}
	}
	note := fmt.Sprintf("%s layer: %s", l.Layout, r.Note)
	if p := strings.TrimRight(l.Prefix, "./"); p != "" {
		note = fmt.Sprintf("%s layer %s: %s", l.Layout, p, r.Note)
	}
	if len(notes) > 0 {
		note += "; " + strings.Join(notes, "; ")
	}
	if root := af.Root(); root != "" {
		note += fmt.Sprintf(" (from the checkpoint's %q)", root)
	}
	it := Item{Note: note, Warnings: r.Warnings}
	if r.Bank != nil && r.Single {
		it.Entry = &Entry{Name: name, Filter: r.Bank.Channels[0]}
		return it, nil
	}
	if r.Bank != nil {
		it.Entry = &Entry{Name: name, Bank: r.Bank}
		return it, nil
	}
	if err := checkKernels(r.Kernels); err != nil {
		return Item{}, err
	}
	it.Target = &Target{Name: name, Kernels: r.Kernels}
	return it, nil
}

// layerTruncLen is the trunc_len an RTF layer of af is read with, by import and distill
// alike (a single layer: importLayer; a checkpoint's: Checkpoint.truncLen), and where it
// comes from: "--trunc-len" where it is given, where the file records it (recorded), or ""
// for neither. It is given
// as import gives it (given, ImportOptions.TruncLen; 0: none) or as distill does, as the
// layout option trunc-len (options["trunc-len"]), and then checked against the file's
// metadata by rtfTruncLen; an option that is no integer, or that differs from given, is an
// *OptionError. Single-layer distill read the file's value over the option's.
func layerTruncLen(af *arrays.File, options map[string]string, given int) (n int, from string, err error) {
	v, flag := options["trunc-len"]
	if flag {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", &OptionError{"trunc-len", strconv.Quote(v), " is not an integer"}
		}
		if given > 0 && n != given {
			return 0, "", &OptionError{"trunc-len", v, fmt.Sprintf(" conflicts with TruncLen %d: give one", given)}
		}
		given = n
	}
	n, fromFile, err := rtfTruncLen(af, given)
	switch {
	case err != nil:
		return 0, "", err
	case fromFile != "":
		return n, fromFile, nil
	case flag || given > 0:
		return n, "--trunc-len", nil
	}
	return n, "", nil
}

// rtfTruncLen is the one reader of the trunc_len an RTF layer of af is read with, which
// import, import --list and distill CKPT's planner share: given (0: none), else the one
// export or distill recorded for the file (recorded; fromFile says where, "" for none). A
// given value or metadata outside
// [0, MaxTruncLen] (the metadata: or not an integer), or the two differing, is an error: an
// *OptionError where the value given is at fault.
func rtfTruncLen(af *arrays.File, given int) (n int, fromFile string, err error) {
	if err := checkTruncLen(given); err != nil {
		return 0, "", err
	}
	all, from := recorded(af)
	meta, ok := all["trunc_len"]
	if !ok {
		return given, "", nil
	}
	m, err := strconv.Atoi(meta)
	if err != nil || m < 0 || m > MaxTruncLen {
		return 0, "", inputf("%s says trunc_len %q: want an integer in [0, %d]", from, meta, MaxTruncLen)
	}
	switch {
	case given == 0:
		return m, from, nil
	case given != m:
		return 0, "", &OptionError{"trunc-len", strconv.Itoa(given), fmt.Sprintf(" conflicts with trunc_len %d in %s (written with its numerators corrected for %d): drop it", m, from, m)}
	}
	return given, "", nil
}

// DtTransformKey is the safetensors metadata key under which export records the dt transform
// an s4d layer's inv_dt were written for (layouts.DtTransform), which the tensors cannot tell.
const DtTransformKey = "dt_transform"

// recordDtTransform records under DtTransformKey in a safetensors file's metadata the dt
// transform its s4d layers' inv_dt were written for (layouts.DtTransform of each one's
// options, written), which import reads them with (s4dDtTransform): export's and distill's
// files alike. Layers written for different ones leave none recorded (import warns, as for a
// file without it); no layer that stores inv_dt leaves meta as it is.
func recordDtTransform(meta map[string]string, written []layouts.Options) {
	seen := map[string]bool{}
	for _, o := range written {
		if t := layouts.DtTransform(o); t != "" {
			seen[t] = true
		}
	}
	switch len(seen) {
	case 0:
	case 1:
		for t := range seen {
			meta[DtTransformKey] = t
		}
	default:
		delete(meta, DtTransformKey)
	}
}

// s4dDtTransform sets the option dt-transform in values, for l, an S4D layer of af, to the
// one export recorded in the file's metadata (fromFile) where none is given, so that the
// layer is read as it was written and without the warning that the file does not say.
// Metadata that is no dt transform, or a value given that differs from it, is an error (an
// *OptionError for the value given), as for an RTF layer's trunc_len (rtfTruncLen). A file
// without the key, and a layer of another layout or of the minimal variant (log_dt, which no
// transform maps), leave values as they are.
func s4dDtTransform(af *arrays.File, l layouts.Layer, values map[string]string) (fromFile string, err error) {
	if l.Layout != layouts.S4D || l.Options["variant"] == "minimal" {
		return "", nil
	}
	all, from := recorded(af)
	meta, ok := all[DtTransformKey]
	if !ok {
		return "", nil
	}
	if err := layouts.CheckValue("dt-transform", meta); err != nil {
		return "", inputf("%s says dt_transform %q: %v", from, meta, err)
	}
	if v, given := values["dt-transform"]; given {
		if v != meta {
			return "", &OptionError{"dt-transform", v, fmt.Sprintf(" conflicts with dt_transform %s in %s (written with inv_dt for it): drop it", meta, from)}
		}
		return "", nil
	}
	values["dt-transform"] = meta
	return from, nil
}

// parameterWarning says that an array read as kernels is a layout's parameter, and why it
// was read so: asked for by name, or the file's one array that reads as kernels (its layer's
// other tensors missing; the file may hold others, complex or of no number type).
func parameterWarning(name string, byName bool) string {
	lay, param, ok := layouts.ParameterOf(name)
	if !ok || len(param) < 2 {
		return ""
	}
	if !byName {
		return fmt.Sprintf("%q is named as the %s parameter of a %s layer, not kernels; it was read as kernels, being the file's one array that can be (--layout %s reads the layer, naming the tensors it lacks)", name, param, lay, lay)
	}
	return fmt.Sprintf("%q is named as the %s parameter of a %s layer, not kernels; it was read as kernels because it was asked for by name (--layout %s reads the layer)", name, param, lay, lay)
}

// Listing is what a model file holds: its format, the checkpoint key its tensors were read
// from (Root, for a Lightning checkpoint "state_dict"), the layers detected and every array.
type Listing struct {
	Format arrays.Format
	Root   string
	Layers []layouts.Layer
	Arrays []arrays.Info
}

// ListFile lists the layers and arrays of an array file (the workbench offers them to pick
// one; ssmlab import --list prints them). Errors are prefixed with the path; an S4 layer's
// l_kernel that import would refuse (layouts.S4KernelLength) is one, and so is an RTF
// layer's trunc_len metadata that it would refuse (rtfTruncLen).
func ListFile(path string) (Listing, error) {
	af, err := arrays.Open(path)
	if err != nil {
		if ierr := asShardIndex(path, err); ierr != nil {
			return Listing{}, ierr
		}
		if errors.Is(err, arrays.ErrUnsupported) && isJSONFile(path) {
			// Not "not an array file ssmlab knows", which names every format but this one.
			return Listing{}, fmt.Errorf("%s: %w", path, &OptionError{"list", "", " lists the layers and arrays of an array file (.npy, .npz, .safetensors, .pt, CSV); a JSON file holds none (import reads it whole)"})
		}
		return Listing{}, err
	}
	defer af.Close()
	infos := af.Arrays()
	ls := layouts.Detect(infos)
	// An RTF layer is read with the trunc_len export recorded (importLayer): list that one,
	// and refuse metadata import and distill refuse.
	if slices.ContainsFunc(ls, func(l layouts.Layer) bool { return l.Layout == layouts.RTF }) {
		n, fromFile, err := rtfTruncLen(af, 0)
		if err != nil {
			return Listing{}, fmt.Errorf("%s: %w", path, err)
		}
		for _, l := range ls {
			if l.Layout == layouts.RTF && fromFile != "" {
				l.Options["trunc-len"] = strconv.Itoa(n)
			}
		}
	}
	// An S4D layer's inv_dt are read with the dt transform export recorded: list that one.
	for _, l := range ls {
		v := map[string]string{} // detection's default is no value given
		fromFile, err := s4dDtTransform(af, l, v)
		if err != nil {
			return Listing{}, fmt.Errorf("%s: %w", path, err)
		}
		if fromFile != "" {
			l.Options["dt-transform"] = v["dt-transform"]
		}
	}
	// An S4 layer's C̃ is undone for the l_kernel its buffer holds (import's --length): list
	// it, and refuse a buffer import and distill refuse.
	for _, l := range ls {
		if l.Layout == layouts.S4 {
			n, _, err := layouts.S4KernelLength(af, l)
			if err != nil {
				return Listing{}, fmt.Errorf("%s: %w", path, err)
			}
			if n > 0 {
				l.Options["length"] = strconv.Itoa(n)
			}
		}
	}
	// A layer detected by its other tensors whose channels no tensor gives cannot be read:
	// list why in import's own words, not a silent 0 channels.
	for i, l := range ls {
		if l.Channels == 0 {
			if _, err := layouts.Import(af, l, layouts.Options{Values: map[string]string{}}); err != nil {
				ls[i].Problem = err.Error()
			}
		}
	}
	return Listing{Format: af.Format, Root: af.Root(), Layers: ls, Arrays: infos}, nil
}

// tensorNotHeld is the error of a Tensor that names no array of the file and no layer's
// prefix: an *OptionError, for a name the file does not hold is a mistake of the option as
// much as --layers picking none is, and one of arrays.ErrNotFound. A mistyped layer prefix
// names the layers, which the first names of the arrays' list may not reach.
func tensorNotHeld(tensor string, infos []arrays.Info) error {
	why := " is no array of the file, which holds " + arrays.ListNames(infos)
	if ls := layouts.Detect(infos); len(ls) > 0 {
		why = " is no array of the file and no layer's prefix: the file's layers are " + (&layouts.ChoiceError{Layers: ls}).List() + " (--tensor takes a layer's prefix or an array's name)"
	}
	return notHeldError{&OptionError{"tensor", strconv.Quote(tensor), why}, arrays.ErrNotFound}
}

// notHeldError is an *OptionError naming something the input does not hold, and of the kind
// (arrays.ErrNotFound, ErrNotFound) such a request is, without adding to its message.
type notHeldError struct {
	oe   *OptionError
	kind error
}

func (e notHeldError) Error() string   { return e.oe.Error() }
func (e notHeldError) Unwrap() []error { return []error{e.oe, e.kind} }
