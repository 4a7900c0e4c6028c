package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
	"github.com/ssmlab/ssmlab/train"
	"github.com/ssmlab/ssmlab/train/plan"
)

// Checkpoint is a model checkpoint opened for whole-model distillation: its identity (name,
// size, SHA-256), the long-filter layers to distil, the layers left as they are, and its
// tensors, which a distilled checkpoint copies (WriteDistilled).
type Checkpoint struct {
	Path   string
	Input  plan.Input
	Format arrays.Format
	// Root is the key of a torch checkpoint's dict the tensors come from ("state_dict"),
	// or "".
	Root    string
	Layers  []ModelLayer
	Skipped []plan.Skipped

	file     *arrays.File
	infos    []arrays.RawInfo
	options  map[string]string
	toLayout layouts.Layout // CheckpointOptions.ToLayout

	cached   string // the prefix of the layer last read, and what it read as
	result   layouts.Result
	readFrom map[string][]string // the tensors each layer was read from
}

// ModelLayer is a layer a Checkpoint distils: as detected, with the kernel length its
// filters are distilled at and the element type of its tensors. Its Options are its
// settings: those detected, with the options given over them.
type ModelLayer struct {
	layouts.Layer
	// Length is the number of kernel samples fitted: a Hyena layer's stored length, an RTF
	// layer's trunc_len, an S4 layer's l_kernel, else CheckpointOptions.Length.
	Length int
	// LengthFrom says where a layer that records its kernel length records it ("trunc_len
	// 512, from --trunc-len", "l_kernel 2048, its kernel.l_kernel buffer"); "" where Length
	// is CheckpointOptions.Length.
	LengthFrom string
	// RawType is the element type of its tensors (arrays.RawTypes): its first one's.
	RawType string
	// TensorTypes are the element types of each of its tensors, by name: a layer's tensors
	// may come in several (StripedHyena's to_bfloat16_except_poles_residues).
	TensorTypes map[string]string
	// Warnings are what reading it warned of (layouts.Result.Warnings), as import says them.
	Warnings []string
}

// CheckpointOptions choose what OpenCheckpoint distils.
type CheckpointOptions struct {
	// Layout limits the layers to one layout (layouts.ParseLayout); "" or "auto": every
	// layer detected whose filters ssmlab distils.
	Layout string
	// Options are the layers' settings the checkpoint does not record (layouts.OptionList),
	// by name; each applies to the layers of the layouts it belongs to.
	Options map[string]string
	// Layers picks layers by prefix (plan.ParsePattern); nil: all.
	Layers plan.Pattern
	// Length is the kernel length of the layers that record none (s4d, stripedhyena, an
	// rtf layer without trunc_len).
	Length int
	// ToLayout is the layout every layer is to be written in, or "" (Assemble chooses): a
	// layer whose module is a variant that layout is not written in, in its own layout, is
	// refused before any work (layouts.WriteBackVariant).
	ToLayout string
}

// distilled are the layouts of single-input single-output long filters, whose channels a
// whole model's distillation fits, and reduced those of multi-input multi-output layers of
// modes, each reduced whole (analysis.ReduceMIMO) and written back in its own layout (a
// RotRNN layer as heads of two states, one mode each).
var (
	distilled = []layouts.Layout{layouts.Hyena, layouts.S4D, layouts.S4, layouts.StripedHyena, layouts.RTF}
	reduced   = []layouts.Layout{layouts.LRU, layouts.S5, layouts.RotRNN}
)

// notDistilled says why layers of layout lay (sos) are left as they are.
func notDistilled(lay layouts.Layout) string {
	return fmt.Sprintf("a filter's second-order sections (%s), not a model's layer", lay)
}

// distils reports whether a whole model's distillation takes layers of layout lay.
func distils(lay layouts.Layout) bool {
	return slices.Contains(distilled, lay) || slices.Contains(reduced, lay)
}

// isMIMO reports whether a layer is reduced whole (a layer of a reduced layout).
func isMIMO(l layouts.Layer) bool { return slices.Contains(reduced, l.Layout) }

// IsMIMO reports whether layer l of the checkpoint is a multi-input multi-output layer,
// reduced whole (plan.Layer.MIMO), not fitted channel by channel.
func (c *Checkpoint) IsMIMO(l ModelLayer) bool { return isMIMO(l.Layer) }

// OpenCheckpoint opens a model checkpoint (safetensors, torch.save or .npz), hashes it, and
// finds the layers to distil. Its errors start with the path. An option that picks no layer
// of the file (Layout, an item of Layers) is an *OptionError, as is a Length or trunc-len
// a layer cannot take: a command-line mistake, its message saying what the file holds.
func OpenCheckpoint(path string, o CheckpointOptions) (*Checkpoint, error) {
	in, err := hashFile(path)
	if err != nil {
		return nil, err
	}
	af, err := arrays.Open(path)
	if err != nil {
		if ierr := asShardIndex(path, err); ierr != nil {
			return nil, ierr
		}
		return nil, err
	}
	c := &Checkpoint{Path: path, Input: in, Format: af.Format, Root: af.Root(), file: af, readFrom: map[string][]string{}}
	if err := c.find(o); err != nil {
		af.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func hashFile(path string) (plan.Input, error) {
	f, _, err := userfile.Open(path)
	if err != nil {
		return plan.Input{}, err
	}
	defer f.Close()
	h := newInputHash()
	if _, err := io.Copy(h, f); err != nil {
		return plan.Input{}, fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return h.input(path), nil
}

// inputHash is the one making of a file's identity (plan.Input) from its bytes, written
// through it: a file read (hashFile) or being written (Assembly.WriteFileBefore).
type inputHash struct {
	h    hash.Hash
	size int64
}

func newInputHash() *inputHash { return &inputHash{h: sha256.New()} }

func (h *inputHash) Write(p []byte) (int, error) {
	h.h.Write(p)
	h.size += int64(len(p))
	return len(p), nil
}

// input is the identity of the file at path of the bytes written so far.
func (h *inputHash) input(path string) plan.Input {
	return plan.Input{Name: filepath.Base(path), Size: h.size, SHA256: hex.EncodeToString(h.h.Sum(nil))}
}

func (c *Checkpoint) find(o CheckpointOptions) error {
	var err error
	if c.infos, err = c.file.RawInfos(); err != nil {
		return inputError{err}
	}
	var only layouts.Layout
	if o.Layout != "" && o.Layout != "auto" {
		if only, err = layouts.ParseLayout(o.Layout); err != nil {
			return inputError{err}
		}
		if !distils(only) {
			return &OptionError{"layout", string(only), fmt.Sprintf(": ssmlab distils the filters of %s layers and reduces %s layers, not %s layers (%s)", joinLayouts(distilled), joinLayouts(reduced), only, notDistilled(only))}
		}
	}
	c.options, c.toLayout = maps.Clone(o.Options), layouts.Layout(o.ToLayout)
	raw := map[string]string{}
	for _, in := range c.infos {
		raw[in.Name] = in.DType
	}
	detected := layouts.Detect(c.file.Arrays())
	var candidates []layouts.Layer // what --layers picks from
	for _, l := range detected {
		if distils(l.Layout) && (only == "" || l.Layout == only) {
			candidates = append(candidates, l)
		}
	}
	if only != "" && len(candidates) == 0 && len(detected) > 0 {
		return fmt.Errorf("no layer to distil: %w", &OptionError{"layout", string(only), " picks none; the file holds " + (&layouts.ChoiceError{Layers: detected}).List()})
	}
	if miss := o.Layers.Unmatched(prefixes(candidates)); len(miss) > 0 && len(candidates) > 0 {
		what := (&layouts.ChoiceError{Layers: candidates}).List()
		if len(miss) == len(o.Layers) {
			return fmt.Errorf("no layer to distil: %w", &OptionError{"layers", strconv.Quote(strings.Join(o.Layers, ",")), fmt.Sprintf(" picks none of the file's (%s layers): %s", joinLayouts(slices.Concat(distilled, reduced)), what)})
		}
		return &OptionError{"layers", strconv.Quote(strings.Join(o.Layers, ",")), fmt.Sprintf(": %q picks none of the file's layers to distil (%s layers): %s", strings.Join(miss, ","), joinLayouts(slices.Concat(distilled, reduced)), what)}
	}
	for _, l := range detected {
		skip := func(why string) {
			c.Skipped = append(c.Skipped, plan.Skipped{Prefix: l.Prefix, Layout: string(l.Layout), Why: why})
		}
		switch {
		case !distils(l.Layout):
			skip(notDistilled(l.Layout))
			continue
		case only != "" && l.Layout != only:
			skip("not of the layout asked for (" + string(only) + ")")
			continue
		case !o.Layers.Match(l.Prefix):
			skip("not picked by the layer pattern")
			continue
		}
		ml := ModelLayer{Layer: l, Length: o.Length}
		opts, err := c.layerOptions(l)
		if err != nil {
			return err
		}
		ml.Options = maps.Clone(l.Options)
		if ml.Options == nil {
			ml.Options = map[string]string{}
		}
		maps.Copy(ml.Options, opts)
		if ml.Length, ml.LengthFrom, err = c.layerLength(l, opts, o.Length); err != nil {
			return inputError{err}
		}
		if ml.Length < 2 {
			return c.tooShort(ml)
		}
		if err := checkWriteBack(ml, layouts.Layout(o.ToLayout)); err != nil {
			return err
		}
		c.Layers = append(c.Layers, ml)
	}
	if len(c.Layers) == 0 {
		what := "no layer of a known layout"
		if len(detected) > 0 {
			what = (&layouts.ChoiceError{Layers: detected}).List()
		} else if h := layouts.Unrecognised(c.file.Arrays()); h != "" {
			what += " (" + h + ")"
		}
		return inputf("no layer to distil (%s layers); the file holds %s", joinLayouts(slices.Concat(distilled, reduced)), what)
	}
	// An option is given for every layer and each takes those of its layout (layerOptions):
	// one that no layer to distil has would change nothing.
	var lays []layouts.Layout
	for _, l := range c.Layers {
		if !slices.Contains(lays, l.Layout) {
			lays = append(lays, l.Layout)
		}
	}
	if err := layouts.CheckApplies(o.Options, lays...); err != nil {
		return err
	}
	// The element type of each layer's tensors: read each once, which also checks that it
	// reads, before any work starts.
	for i, l := range c.Layers {
		r, err := c.read(l)
		if err != nil {
			return err
		}
		c.Layers[i].Channels = channels(r)
		c.Layers[i].Warnings = r.Warnings
		if isMIMO(l.Layer) {
			// Reduced whole: its units' channels are its outputs, whatever --pair reads.
			c.Layers[i].Channels = r.MIMO.Outputs
			c.Layers[i].Warnings = slices.DeleteFunc(slices.Clone(r.Warnings), func(w string) bool { return slices.Contains(r.Pairs, w) })
		}
		c.Layers[i].RawType = raw[c.readFrom[l.Prefix][0]]
		c.Layers[i].TensorTypes = map[string]string{}
		for _, name := range c.readFrom[l.Prefix] {
			c.Layers[i].TensorTypes[name] = raw[name]
		}
		if c.sharesModes(l) && r.Shared == nil {
			return inputf("%s layer %q: its %s SSMs are shared by channels of several C rows, which the s4d layout is not written back with; --to-layout rtf or stripedhyena writes it for another module", l.Layout, l.Prefix, l.Options["n_ssm"])
		}
	}
	return nil
}

// layerLength is the kernel length a layer is distilled at: a Hyena layer's stored length
// (or the length given), an RTF layer's trunc_len, an S4 layer's option length or l_kernel
// (where not 0), else given; and where the layer records it ("" for given, ModelLayer.LengthFrom). An
// S4 layer's l_kernel or option length import refuses is refused (layouts.S4KernelLength,
// layouts.S4Length), and so is a Hyena layer's option length (layouts.HyenaLength).
func (c *Checkpoint) layerLength(l layouts.Layer, opts map[string]string, given int) (int, string, error) {
	switch {
	case l.Layout == layouts.Hyena:
		n, err := layouts.HyenaLength(layouts.Options{Values: opts}, l)
		if err != nil {
			return 0, "", err
		}
		if v := opts["length"]; v != "" && v != "0" {
			return n, fmt.Sprintf("length %d, the layout option given", n), nil
		}
		return n, fmt.Sprintf("the %d positions it stores", n), nil
	case l.Layout == layouts.RTF:
		n, from, err := c.truncLen()
		if err != nil {
			return 0, "", err
		}
		if n > 0 {
			return n, fmt.Sprintf("trunc_len %d, from %s", n, from), nil
		}
	case l.Layout == layouts.S4:
		n, err := layouts.S4Length(layouts.Options{Values: opts}, l)
		if err != nil {
			return 0, "", err
		}
		if n > 0 {
			return n, fmt.Sprintf("length %d, the layout option given", n), nil
		}
		n, _, err = layouts.S4KernelLength(c.file, l)
		if err != nil {
			return 0, "", err
		}
		if n > 0 {
			return n, fmt.Sprintf("l_kernel %d, its kernel.l_kernel buffer", n), nil
		}
	}
	return given, "", nil
}

// tooShort refuses a layer whose kernel length is below the 2 samples a fit needs
// (train.Spec), saying where the length comes from and what to do: --length where it is
// the length given, else the layer's own, which --length does not change (an RTF layer's
// trunc_len is valid for its module, and import reads it). Where the length is an option's
// value alone (CheckpointOptions.Length, a trunc-len the file does not record), it is an
// *OptionError naming the option and the layer.
func (c *Checkpoint) tooShort(ml ModelLayer) error {
	const fits = "a fit needs at least 2 samples, and --length does not change it"
	l := ml.Layer
	switch {
	case ml.LengthFrom == "":
		return &OptionError{"length", strconv.Itoa(ml.Length), fmt.Sprintf(" is below the 2 samples a fit needs: %s layer %q records no kernel length, and is distilled at it", l.Layout, l.Prefix)}
	case l.Layout == layouts.RTF:
		_, from, err := c.truncLen()
		if err != nil {
			return err
		}
		if meta, _ := recorded(c.file); meta["trunc_len"] == "" {
			return &OptionError{"trunc-len", strconv.Itoa(ml.Length), fmt.Sprintf(": %s layer %q is distilled at its trunc_len; %s; give --trunc-len 2 or more, or none to distil it at --length", l.Layout, l.Prefix, fits)}
		}
		return inputf("%s layer %q: trunc_len %d (%s): an RTF layer is distilled at its trunc_len; %s; --layers leaves the layer out", l.Layout, l.Prefix, ml.Length, from, fits)
	}
	return inputf("%s layer %q: kernel length %d (%s): %s; --layers leaves the layer out", l.Layout, l.Prefix, ml.Length, ml.LengthFrom, fits)
}

// sharesModes reports whether layer l is fitted with its SSMs' modes shared (train.FitShared)
// and written back so: an S4D layer of n_ssm SSMs below its channels (layouts.SharesModes)
// written in its own layout (--to-layout s4d; any other layout holds independent fits).
func (c *Checkpoint) sharesModes(l ModelLayer) bool {
	return layouts.SharesModes(l.Layer) && c.toLayout == layouts.S4D
}

// SharedStart returns the modes and steps of a unit's layer as it is (plan.SharedSource):
// where a fit of shared modes starts from.
func (c *Checkpoint) SharedStart(u plan.Unit) (train.SharedModes, error) {
	i := slices.IndexFunc(c.Layers, func(l ModelLayer) bool { return l.Prefix == u.Prefix })
	if i < 0 {
		return train.SharedModes{}, fmt.Errorf("%s: no layer %q", c.Path, u.Prefix)
	}
	r, err := c.read(c.Layers[i])
	if err != nil {
		return train.SharedModes{}, fmt.Errorf("%s: %w", c.Path, err)
	}
	if r.Shared == nil || u.Lo != 0 || u.Hi != len(r.Shared.Group) {
		return train.SharedModes{}, fmt.Errorf("%s: unit %s: layer %q has no shared modes for its channels", c.Path, u.ID(), u.Prefix)
	}
	l := c.Layers[i]
	bilinear := l.Layout == layouts.S4 || l.Options["disc"] == "bilinear" // as the layer discretises
	return train.SharedModes{Group: slices.Clone(r.Shared.Group), A: r.Shared.A, Dt: slices.Clone(r.Shared.Dt), Bilinear: bilinear}, nil
}

// MIMO returns the layer of a MIMO unit as it is (plan.MIMOSource): what the unit reduces.
func (c *Checkpoint) MIMO(u plan.Unit) (*filters.MIMO, error) {
	i := slices.IndexFunc(c.Layers, func(l ModelLayer) bool { return l.Prefix == u.Prefix })
	if i < 0 {
		return nil, fmt.Errorf("%s: no layer %q", c.Path, u.Prefix)
	}
	r, err := c.read(c.Layers[i])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	if r.MIMO == nil || u.Lo != 0 || u.Hi != r.MIMO.Outputs || u.Length != c.Layers[i].Length {
		return nil, fmt.Errorf("%s: unit %s does not fit layer %q (a MIMO layer whose outputs are one unit)", c.Path, u.ID(), u.Prefix)
	}
	return r.MIMO, nil
}

// checkWriteBack refuses, before any work, a layer that --to-layout would write for a module
// that does not load it: its own layout, where its module is a variant that layout is not
// written in (but for shared modes, which it is: layouts.SharesModes), or a layout that does
// not hold its filters (layouts.NotHeldBy).
func checkWriteBack(ml ModelLayer, to layouts.Layout) error {
	l := ml.Layer
	if isMIMO(l) {
		if to != "" && to != l.Layout {
			return inputf("%s layer %q: a multi-input multi-output layer is reduced and written back in its own layout, not %s; --layers leaves it out", l.Layout, l.Prefix, to)
		}
		if v, _ := layouts.WriteBackVariant(l); v != "" {
			return inputf("%s layer %q: its module is of a variant that the %s layout is not written in: %s; --layers leaves it out", l.Layout, l.Prefix, l.Layout, v)
		}
		return nil
	}
	if v, others := layouts.WriteBackVariant(l); v != "" && to == l.Layout && !layouts.SharesModes(l) {
		return inputf("%s layer %q: its module is of a variant that the %s layout is not written in: %s; --to-layout %s writes it for another module, --layers leaves it out", l.Layout, l.Prefix, l.Layout, v, joinLayoutsOr(others))
	}
	if why := layouts.NotHeldBy(l, to); why != "" {
		_, others := layouts.WriteBackVariant(l)
		return inputf("%s layer %q: %s; --to-layout %s writes it for another module, --layers leaves it out", l.Layout, l.Prefix, why, joinLayoutsOr(others))
	}
	return nil
}

func prefixes(ls []layouts.Layer) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Prefix
	}
	return out
}

// joinLayoutsOr lists layouts as choices: "rtf or stripedhyena".
func joinLayoutsOr(ls []layouts.Layout) string {
	s := strings.Split(joinLayouts(ls), ", ")
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func joinLayouts(ls []layouts.Layout) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}

// layerOptions are the options that apply to a layout, with an RTF layer's trunc_len and an
// S4D layer's dt transform taken from the file's metadata (written by export) unless given,
// as import takes them (truncLen, s4dDtTransform).
func (c *Checkpoint) layerOptions(l layouts.Layer) (map[string]string, error) {
	lay := l.Layout
	out := map[string]string{}
	for _, spec := range layouts.OptionList {
		if _, applies := spec.Defaults[lay]; applies {
			if v, ok := c.options[spec.Name]; ok {
				out[spec.Name] = v
			}
		}
	}
	if _, err := s4dDtTransform(c.file, l, out); err != nil {
		return nil, err
	}
	if lay == layouts.RTF {
		n, from, err := c.truncLen()
		if err != nil {
			return nil, err
		}
		if from != "" {
			out["trunc-len"] = strconv.Itoa(n)
		}
	}
	return out, nil
}

// truncLen is the trunc_len the checkpoint's RTF layers are read with, as import reads it
// (layerTruncLen): the option trunc-len, else the file's metadata; and where it comes from
// ("--trunc-len", "the file's metadata", or "" for neither).
func (c *Checkpoint) truncLen() (int, string, error) {
	return layerTruncLen(c.file, c.options, 0)
}

// read imports a layer; the last layer read is kept.
func (c *Checkpoint) read(l ModelLayer) (layouts.Result, error) {
	if c.cached == l.Prefix && c.result.Tensors != nil {
		return c.result, nil
	}
	opts, err := c.layerOptions(l.Layer)
	if err != nil {
		return layouts.Result{}, err
	}
	// A layer whose kernel depends on a length it does not record is read at the length it
	// is distilled at, the l_max its model runs with: an S4D layer's dss discretisation
	// normalises by it, and an S4 layer stored without its l_kernel buffer had its C̃ made
	// for it (with the buffer, the buffer says; import asks for --length in both cases).
	if _, given := opts["length"]; !given {
		switch l.Layout {
		case layouts.S4D:
			opts["length"] = strconv.Itoa(l.Length)
		case layouts.S4:
			if _, ok, _ := layouts.S4KernelLength(c.file, l.Layer); !ok {
				opts["length"] = strconv.Itoa(l.Length)
			}
		}
	}
	r, err := layouts.Import(c.file, l.Layer, layouts.Options{Values: opts})
	if err != nil {
		return r, inputError{err}
	}
	if r.Bank == nil && (r.Kernels == nil || len(r.Kernels.Shape) != 2 || r.Kernels.Shape[1] < l.Length) {
		return r, inputf("%s layer %q: read as kernels of shape %v, not (channels, %d)", l.Layout, l.Prefix, r.Kernels.Shape, l.Length)
	}
	c.readFrom[l.Prefix] = r.Tensors
	c.cached, c.result = l.Prefix, r
	return r, nil
}

// channels returns the number of channels a layer reads as.
func channels(r layouts.Result) int {
	if r.Bank != nil {
		return len(r.Bank.Channels)
	}
	return r.Kernels.Shape[0]
}

// PlanLayers returns the layers as plan.Layers, in order, each with the poles its fit must
// place: those its module holds where the layer may be written back in its own layout.
func (c *Checkpoint) PlanLayers() []plan.Layer {
	out := make([]plan.Layer, len(c.Layers))
	for i, l := range c.Layers {
		out[i] = plan.Layer{Prefix: l.Prefix, Channels: l.Channels, Length: l.Length, Shared: c.sharesModes(l), MIMO: isMIMO(l.Layer)}
		if l.Layout == layouts.S4D && l.Options["is-real"] == "true" && slices.Contains(layoutsTried(l.Layout, c.toLayout), layouts.S4D) {
			// The module's poles are e^{Δ·A} with A real and negative (layouts.Export). A
			// layer written in another layout (ToLayout) is fitted with the job's poles.
			out[i].Poles = train.PolesPositive
		}
	}
	return out
}

// Kernels returns the kernels of a unit's channels (plan.Source): a bank's impulse
// responses of the layer's length, or a Hyena layer's evaluated filter.
func (c *Checkpoint) Kernels(u plan.Unit) ([][]float64, error) {
	i := slices.IndexFunc(c.Layers, func(l ModelLayer) bool { return l.Prefix == u.Prefix })
	if i < 0 {
		return nil, fmt.Errorf("%s: no layer %q", c.Path, u.Prefix)
	}
	l := c.Layers[i]
	r, err := c.read(l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	if u.Lo < 0 || u.Hi > channels(r) || u.Length != l.Length {
		return nil, fmt.Errorf("%s: unit %s does not fit layer %q (%s of %s)", c.Path, u.ID(), u.Prefix, plural.Count(channels(r), "channel"), plural.Count(l.Length, "sample"))
	}
	ks := make([][]float64, 0, u.Channels())
	for ch := u.Lo; ch < u.Hi; ch++ {
		var k []float64
		if r.Bank != nil {
			k = r.Bank.Channels[ch].Impulse(l.Length)
		} else {
			k = slices.Clone(r.Kernels.Data[ch*r.Kernels.Shape[1] : ch*r.Kernels.Shape[1]+l.Length])
		}
		a := arrays.Array{Shape: []int{len(k)}, Data: k}
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %s layer %q, channel %d: the kernel is not finite: %w", c.Path, l.Layout, l.Prefix, ch, err)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// Close closes the checkpoint's file.
func (c *Checkpoint) Close() error { return c.file.Close() }
