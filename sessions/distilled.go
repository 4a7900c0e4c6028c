package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/userfile"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
	"github.com/ssmlab/ssmlab/train/plan"
)

// ManifestKey is the safetensors metadata key of a distilled checkpoint's manifest (without
// the times: plan.Manifest.Stable).
const ManifestKey = "ssmlab_manifest"

// DistilledOptions choose how Assemble writes a distilled checkpoint.
type DistilledOptions struct {
	// Format is the container written: safetensors, torch or npz.
	Format arrays.Format
	// Options are the job's, recorded in the manifest as its fits applied them
	// (plan.Options.Applied); their ToLayout is the layout every distilled layer is written
	// in, or (empty) rtf where its tensors read back within their limit (each channel within
	// its dtype's ReadBackLimit or distilledReadBackShare of its fit error, whichever is
	// larger), else the modal layout of its family (s4d for S4 and S4D layers, stripedhyena
	// for the others) where they do, else the other one.
	Options plan.Options
	// Force writes a layer whose tensors do not read back within the limit in any layout
	// tried (in the last one tried), with a note, where Assemble would fail. The options'
	// DType is the element type of the tensors written (each layer's own when empty).
	Force bool
	// Merged says that the units come from shards' parts (ssmlab merge), which has no
	// --to-layout or --dtype: the advice for a layer no layout holds is then to run the
	// shards again with them.
	Merged bool
}

// otherWays is the advice, beside --force, for a layer that cannot be written: another
// layout (layout) or element type (dtype), given to distill, or to the shards of a merge.
func (o DistilledOptions) otherWays(layout, dtype bool) string {
	var ways []string
	if o.Merged {
		if layout {
			ways = append(ways, "--to-layout for another layout")
		}
		if dtype {
			ways = append(ways, "--dtype for another element type")
		}
		return "run the shards again with " + strings.Join(ways, " or ") + ": they keep their fitted units"
	}
	if layout {
		ways = append(ways, "--to-layout picks another layout")
	}
	if dtype {
		ways = append(ways, "--dtype another element type")
	}
	return strings.Join(ways, ", ")
}

// Assembly is a distilled checkpoint ready to write: every tensor of the input, bit for bit,
// except each distilled layer's, which are replaced by the tensors of the layout written
// under the same prefix; and its manifest.
type Assembly struct {
	Manifest plan.Manifest
	// Notes say, one line each, what the user should know: the layers not written in the
	// rtf layout and why, what of the input was not copied.
	Notes []string
	// Warnings say, one line each, what the user must not miss: the layers written with
	// Force whose tensors do not read back within their limit.
	Warnings []string

	c      *Checkpoint
	format arrays.Format
	infos  []arrays.RawInfo
	fresh  map[int][]byte // the data of the tensors written new, by index in infos
	meta   map[string]string
}

// exportLayers writes each layer of c from its units' results in the layouts that hold them;
// where none holds some layers' fits, its error names every such layer.
func exportLayers(c *Checkpoint, results []*plan.UnitResult, o DistilledOptions) ([]exported, error) {
	byLayer := map[string][]*plan.UnitResult{}
	for _, r := range results {
		byLayer[r.Unit.Prefix] = append(byLayer[r.Unit.Prefix], r)
	}
	var layers []exported
	var unwritten []unheld // layers no layout holds: one error names them all
	for _, l := range c.Layers {
		rs := byLayer[l.Prefix]
		if isMIMO(l.Layer) {
			if len(rs) != 1 || rs[0].MIMO == nil {
				return nil, inputf("layer %q: a MIMO layer comes as one reduced unit, not %d units", l.Prefix, len(rs))
			}
			tensors, rec, says, err := exportMIMOLayer(c, l, rs[0], o, 0)
			if u := (unheld{}); errors.As(err, &u) {
				unwritten = append(unwritten, u)
				continue
			}
			if err != nil {
				return nil, err
			}
			rec.Method = rs[0].Method()
			layers = append(layers, exported{l: l, mimo: rs[0], tensors: tensors, rec: rec, says: says})
			continue
		}
		fs, recs, shared, err := layerFits(l, rs)
		if err != nil {
			return nil, err
		}
		tensors, rec, says, err := exportLayer(l, fs, shared, recs, o, 0)
		if u := (unheld{}); errors.As(err, &u) {
			unwritten = append(unwritten, u)
			continue
		}
		if err != nil {
			return nil, err
		}
		rec.Warnings = l.Warnings
		rec.Method = plan.MethodFit
		if len(rs) > 0 {
			rec.Method = rs[0].Method()             // a layer's units are all of one kind (layerFits)
			rec.AutoMaxRadius = rs[0].AutoMaxRadius // and of one length
			if rec.Method == plan.MethodFit {       // and of one layer's poles (plan.Layer)
				if rec.Spec, err = plan.SpecChanges(o.Options.Spec, rs[0].Unit); err != nil {
					return nil, fmt.Errorf("layer %q: %w", l.Prefix, err)
				}
			}
		}
		layers = append(layers, exported{l: l, fs: fs, shared: shared, tensors: tensors, rec: rec, says: says})
	}
	if len(unwritten) > 0 {
		return nil, unheldError(unwritten)
	}
	return layers, nil
}

// Assemble makes the distilled checkpoint of c from its units' results (every unit of the
// plan, in order). Where no layout tried holds some layers' fits (and o.Force is not set),
// its error names every such layer.
func Assemble(c *Checkpoint, results []*plan.UnitResult, o DistilledOptions) (*Assembly, error) {
	a := &Assembly{c: c, format: o.Format, fresh: map[int][]byte{}}
	lengthUsed := slices.ContainsFunc(c.Layers, func(l ModelLayer) bool { return l.LengthFrom == "" })
	a.Manifest = plan.Manifest{Format: plan.ManifestFormat, Input: c.Input, Options: o.Options.Applied(lengthUsed), Skipped: c.Skipped}
	layers, err := exportLayers(c, results, o)
	if err != nil {
		return nil, err
	}
	padToWidest(c, layers, o)
	replaced := map[string]string{} // tensor → prefix of the layer replacing it
	written := map[string][]arrays.Named{}
	outType := map[string]string{}
	keptType := map[string]string{} // the tensors written in their input's type (keptTypes)
	truncLens := map[int]bool{}
	var s4dWritten []layouts.Options // the options each s4d layer was written with
	modal := map[string][]exported{} // by layout: the layers the rtf layout does not hold
	for _, e := range layers {
		if e.says.modal {
			modal[e.rec.ToLayout] = append(modal[e.rec.ToLayout], e)
		}
	}
	for _, e := range layers {
		l, tensors, rec := e.l, e.tensors, e.rec
		a.Manifest.Layers = append(a.Manifest.Layers, rec)
		if same := modal[rec.ToLayout]; e.says.modal && same[0].l.Prefix == l.Prefix {
			a.Notes = append(a.Notes, fallbackNote(same))
		}
		if e.says.note != "" {
			a.Notes = append(a.Notes, e.says.note)
		}
		if e.says.warning != "" {
			a.Warnings = append(a.Warnings, e.says.warning)
		}
		for _, name := range c.readFrom[l.Prefix] {
			replaced[name] = l.Prefix
		}
		written[l.Prefix], outType[l.Prefix] = tensors, rec.DType
		maps.Copy(keptType, rec.TensorDTypes)
		if rec.ToLayout == string(layouts.RTF) {
			truncLens[l.Length] = true
		}
		if rec.ToLayout == string(layouts.S4D) {
			opts, _ := writeOptions(l, layouts.S4D)
			s4dWritten = append(s4dWritten, layouts.Options{Values: opts})
		}
	}
	// Every tensor in the input's order, a layer's new tensors where its first one was.
	done := map[string]bool{}
	seen := map[string]bool{}
	add := func(in arrays.RawInfo, data []byte) error {
		if seen[in.Name] {
			return inputf("the distilled checkpoint would hold two tensors named %q (a layer's new tensor and one of the input's)", in.Name)
		}
		seen[in.Name] = true
		if data != nil {
			a.fresh[len(a.infos)] = data
		}
		a.infos = append(a.infos, in)
		return nil
	}
	for _, in := range c.infos {
		prefix, ok := replaced[in.Name]
		if !ok {
			if _, gone := replaced[in.Tied]; gone {
				in.Tied = "" // what it is tied to is a distilled layer's: its own storage
			}
			if err := add(in, nil); err != nil {
				return nil, err
			}
			continue
		}
		if done[prefix] {
			continue
		}
		done[prefix] = true
		for _, t := range written[prefix] {
			typ := outType[prefix]
			if k, ok := keptType[t.Name]; ok {
				typ = k
			}
			data, err := arrays.EncodeRaw(t.Array.Data, typ)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
			if err := add(arrays.RawInfo{Name: t.Name, DType: typ, Shape: t.Array.Shape}, data); err != nil {
				return nil, err
			}
		}
	}
	if c.Root != "" {
		a.Notes = append(a.Notes, fmt.Sprintf("the input is a checkpoint whose model is under %q: the output holds that state_dict, without the checkpoint's other entries (optimiser states, hyperparameters)", c.Root))
	}
	if note := flattenedNote(c.file); note != "" {
		a.Notes = append(a.Notes, note)
	}
	// The metadata import reads an RTF layer's trunc_len and an S4D layer's dt transform
	// from (recorded): a safetensors OUT's own, with the input's and the manifest; for a .pt
	// or .npz OUT, which hold none, these two in the manifest beside it (WriteFile names OUT
	// in it).
	in, _ := recorded(c.file)
	meta := maps.Clone(in)
	if meta == nil {
		meta = map[string]string{}
	}
	// Record the trunc_len the distilled rtf layers share, where the input's layers did not
	// record another.
	if len(truncLens) == 1 {
		for n := range truncLens {
			if old, ok := meta["trunc_len"]; !ok || old == strconv.Itoa(n) || !keeps(c, layouts.RTF) {
				meta["trunc_len"] = strconv.Itoa(n)
			}
		}
	}
	// The dt transform the s4d layers kept were read with stays among them.
	if old, ok := meta[DtTransformKey]; ok && keeps(c, layouts.S4D) {
		s4dWritten = append(s4dWritten, layouts.Options{Values: map[string]string{"dt-transform": old}})
	}
	recordDtTransform(meta, s4dWritten)
	if o.Format != arrays.FormatSafetensors {
		for _, k := range []string{"trunc_len", DtTransformKey} {
			if v, ok := meta[k]; ok {
				if a.Manifest.Metadata == nil {
					a.Manifest.Metadata = map[string]string{}
				}
				a.Manifest.Metadata[k] = v
			}
		}
		return a, nil
	}
	a.meta = meta
	stable, err := json.Marshal(a.Manifest.Stable())
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	a.meta[ManifestKey] = string(stable)
	return a, nil
}

// layerFits joins the results rs of a layer's units (a layer of one filter a channel) into
// its channels' filters and records, and its shared modes where it was fitted with them.
func layerFits(l ModelLayer, rs []*plan.UnitResult) (fs []filters.Filter, recs []plan.ChannelRecord, shared *layouts.SharedModes, err error) {
	for _, r := range rs {
		if r.Unit.Lo != len(fs) {
			return nil, nil, nil, inputf("layer %q: channels %d to %d are missing from the results", l.Prefix, len(fs), r.Unit.Lo-1)
		}
		fs = append(fs, r.Filters...)
		recs = append(recs, r.Channels...)
		if r.Shared != nil {
			if len(rs) != 1 {
				return nil, nil, nil, inputf("layer %q: its shared modes come in %d units, not one", l.Prefix, len(rs))
			}
			a, res := r.Shared.Complex()
			shared = &layouts.SharedModes{Group: r.Shared.Group, A: a, Dt: r.Shared.Dt, Residues: res}
		}
	}
	if len(fs) != l.Channels {
		return nil, nil, nil, inputf("layer %q: %d of its %s fitted", l.Prefix, len(fs), plural.Count(l.Channels, "channel"))
	}
	return fs, recs, shared, nil
}

// exported is a layer as Assemble writes it: its fitted filters (or shared modes, or a MIMO
// layer's reduced unit), its tensors, its record and what it says of it.
type exported struct {
	l       ModelLayer
	fs      []filters.Filter
	shared  *layouts.SharedModes
	mimo    *plan.UnitResult // a MIMO layer's reduced unit
	tensors []arrays.Named
	rec     plan.LayerRecord
	says    layerNotes
}

// fallbackNote says that the layers es were written in their layout (one modal layout)
// because the rtf layout does not hold their fits, and why, for the first of them.
func fallbackNote(es []exported) string {
	first := es[0]
	lay, name := first.rec.ToLayout, layouts.PrefixName(first.l.Prefix)
	if len(es) == 1 {
		return fmt.Sprintf("layer %s: written in the %s layout: the rtf layout does not hold the fit (%s)", name, lay, first.says.why)
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = layouts.PrefixName(e.l.Prefix)
	}
	return fmt.Sprintf("%d layers (%s) written in the %s layout: the rtf layout does not hold their fits (layer %s: %s; the manifest's \"why\" gives each layer's reason)", len(es), plural.First(names, 3, " "), lay, name, first.says.why)
}

// layerNotes are what Assemble says of a layer written: a note (Assembly.Notes), and a
// warning (Assembly.Warnings) where Force wrote it above its read-back limit.
type layerNotes struct {
	note, warning string
	// modal and why: the layer went to a modal layout as the rtf layout does not hold its
	// fit, and why not, which Assemble words once for all such layers of one layout
	// (fallbackNote): a model's layers all went to stripedhyena for the same reason, and each
	// said so in a line of 600 characters.
	modal bool
	why   string
}

// padToWidest writes the layers of one modal layout again with its widest layer's state
// size, the others' extra modes with no residue, so that one module (one d_state) loads every
// layer: a fit's real poles take a mode each, and an S4D model distilled at order 8 came back
// with layers of 5 and 6 modes (and LRU layers reduced under --order auto, of 23 and 24). A
// layer that cannot be padded keeps its modes, and its note says so.
func padToWidest(c *Checkpoint, layers []exported, o DistilledOptions) {
	widest := map[layouts.Layout]int{}
	for _, e := range layers {
		lay := layouts.Layout(e.rec.ToLayout)
		widest[lay] = max(widest[lay], layouts.ModalStateSize(lay, e.tensors))
	}
	for i := range layers {
		e := &layers[i]
		lay := layouts.Layout(e.rec.ToLayout)
		if w := layouts.ModalStateSize(lay, e.tensors); w == 0 || w == widest[lay] {
			continue
		}
		po := o
		po.Options.ToLayout = string(lay)
		var tensors []arrays.Named
		var rec plan.LayerRecord
		var err error
		if e.mimo != nil {
			var says layerNotes
			if tensors, rec, says, err = exportMIMOLayer(c, e.l, e.mimo, o, widest[lay]); err == nil {
				e.says, e.rec.Module = says, rec.Module // the state size written
			}
		} else {
			tensors, rec, _, err = exportLayer(e.l, e.fs, e.shared, e.rec.Channels, po, widest[lay])
		}
		if err != nil {
			e.says.note = strings.TrimPrefix(fmt.Sprintf("%s; layer %s: kept its %d modes (padded to %d: %v)", e.says.note, layouts.PrefixName(e.l.Prefix), layouts.ModalStateSize(lay, e.tensors), widest[lay], oneLineErr(err)), "; ")
			continue
		}
		e.tensors, e.rec.ReadBackError, e.rec.Tensors, e.rec.Channels = tensors, rec.ReadBackError, rec.Tensors, rec.Channels
	}
}

// keeps reports whether the checkpoint keeps a layer of layout lay it does not distil.
func keeps(c *Checkpoint, lay layouts.Layout) bool {
	for _, s := range c.Skipped {
		if s.Layout == string(lay) {
			return true
		}
	}
	return false
}

// layoutsTried returns the layouts a layer of layout l may be written in, in the order
// exportLayer tries them: to alone where it is given, else rtf, the modal layout of the
// layer's family (s4d for S4 and S4D layers, stripedhyena for the others), then the other
// one. PlanLayers asks it before the fit, which must suit every layout that may be written.
func layoutsTried(l, to layouts.Layout) []layouts.Layout {
	if to != "" {
		return []layouts.Layout{to}
	}
	modal := layouts.StripedHyena
	if l == layouts.S4 || l == layouts.S4D {
		modal = layouts.S4D
	}
	// The other modal layout last: s4d stores a pole near the unit circle by its logarithm,
	// stripedhyena by its real and imaginary parts, and each rounds some fits better.
	return []layouts.Layout{layouts.RTF, modal, otherModal(modal)}
}

// otherModal is the modal layout that is not lay.
func otherModal(lay layouts.Layout) layouts.Layout {
	if lay == layouts.S4D {
		return layouts.StripedHyena
	}
	return layouts.S4D
}

// readBackError is a manifest's read-back error: nil where the tensors cannot be read back
// (err), so that no number stands for "unknown".
func readBackError(rel float64, err error) *float64 {
	if err != nil {
		return nil
	}
	return &rel
}

// moduleSettings are the options of a layout that its module's constructor sets and its
// tensors do not record. A layer written back in its own layout keeps them, so that its
// module reads the new tensors as they were written: tensors written for zoh read as another
// filter in an S4D module built with disc bilinear, and models/s4/s4d.py loads other names.
var moduleSettings = map[layouts.Layout][]string{
	layouts.S4D: {"variant", "disc", "dt-transform", "real-transform", "imag-transform", "is-real"},
	layouts.RTF: {"h0"},
	layouts.S5:  {"disc", "conj-sym", "step-rescale", "clip-eigs", "c-init"},
}

// fitErrors are the fit errors of a layer's n channels on their targets, or nil where the
// records are not one a channel.
func fitErrors(recs []plan.ChannelRecord, n int) []float64 {
	if len(recs) != n {
		return nil
	}
	errs := make([]float64, n)
	for i, r := range recs {
		errs[i] = r.RelError
	}
	return errs
}

// exportLayer writes a layer's fitted filters in the layout asked for, or in rtf if its
// tensors read back within their limit, else in the modal layout of its family, else in the
// other modal layout. A channel's limit is its dtype's (ReadBackLimit) or
// distilledReadBackShare of its fit error (recs), whichever is larger; the record's channels
// are recs with the read-back errors of the tensors written. Filters fitted with shared modes
// (shared, not nil) are written in the layer's own layout as such.
func exportLayer(l ModelLayer, fs []filters.Filter, shared *layouts.SharedModes, recs []plan.ChannelRecord, o DistilledOptions, stateSize int) ([]arrays.Named, plan.LayerRecord, layerNotes, error) {
	rec := plan.LayerRecord{Prefix: l.Prefix, Layout: string(l.Layout), Length: l.Length, Channels: recs}
	fitErrs := fitErrors(recs, len(fs))
	raw, dt, why := writtenType(l, o)
	rec.DType = raw
	if o.Options.ToLayout != "" {
		lay, err := layouts.ParseLayout(o.Options.ToLayout)
		if err != nil {
			return nil, rec, layerNotes{}, inputError{err}
		}
		if !slices.Contains(layouts.ModuleLayouts, lay) {
			return nil, rec, layerNotes{}, inputf("layout %s: a checkpoint's layers are written in a layout their model's module loads (%s); the fitted filters go to %s with ssmlab export", lay, layouts.JoinLayouts(layouts.ModuleLayouts), lay)
		}
	}
	tries := layoutsTried(l.Layout, layouts.Layout(o.Options.ToLayout))
	forms := map[filters.Form]bool{}
	for _, f := range fs {
		forms[f.Form()] = true
	}
	bank := &filters.Bank{Channels: fs}
	if len(forms) > 1 { // orders fitted apart may come in different forms: one for the layout
		var err error
		if bank, _, err = filters.ConvertBank(bank, filters.FormDiagonal); err != nil {
			return nil, rec, layerNotes{}, fmt.Errorf("layer %q: %w", l.Prefix, err)
		}
	}
	doc := filters.Document{Bank: bank}
	var failures []string
	var last []arrays.Named
	for _, lay := range tries {
		own := shared != nil && lay == layouts.S4D // fitted so for no other layout (Checkpoint.sharesModes)
		if lay == l.Layout && !own {
			if v, _ := layouts.WriteBackVariant(l.Layer); v != "" {
				failures = append(failures, fmt.Sprintf("%s: the layer's module is of a variant the %s layout is not written in (%s)", lay, lay, v))
				continue
			}
		}
		if why := layouts.NotHeldBy(l.Layer, lay); why != "" {
			failures = append(failures, fmt.Sprintf("%s: %s", lay, why))
			continue
		}
		opts, truncLen := writeOptions(l, lay)
		lo := layouts.Options{Values: opts, StateSize: stateSize}
		if own {
			lo.Shared = shared
		}
		tensors, _, err := layouts.Export(doc, lay, lo, l.Prefix)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", lay, oneLineErr(err)))
			continue
		}
		kept := keptTypes(l, lay, tensors, raw, o)
		var checkDT arrays.DType
		lo.TensorTypes, checkDT = readBackTypes(kept, dt, o.Format)
		rb, err := layouts.ReadBackOver(doc, tensors, dt, lay, lo, l.Prefix, l.Length)
		check := readBackCheck(rb, err, lay, checkDT)
		check.Item, check.TruncLen, check.FitErrors = l.Prefix, truncLen, fitErrs
		rec.TensorDTypes = kept
		last = tensors
		rec.ToLayout, rec.ReadBackError = string(lay), readBackError(rb.RelError, err)
		rec.Channels = channelReadBacks(recs, rb.Errors, err)
		if check.Failed() {
			text, _ := check.Summary("") // the advice follows the list of failures
			failures = append(failures, fmt.Sprintf("%s: %s", lay, text))
			continue
		}
		for _, t := range tensors {
			rec.Tensors = append(rec.Tensors, t.Name)
		}
		if len(failures) > 0 {
			rec.Why = strings.Join(failures, "; ")
		}
		// Written in a modal layout for want of rtf: Assemble says so once per layout.
		fallback := lay != layouts.RTF && o.Options.ToLayout == ""
		note := ""
		if why != "" {
			note = fmt.Sprintf("layer %s: %s", layouts.PrefixName(l.Prefix), why)
		}
		if !(check.RelError <= ReadBackLimit(check.DType)) { // held to its channels' fit errors
			text, _ := check.Summary("")
			note = strings.TrimPrefix(note+"; "+fmt.Sprintf("layer %s: %s", layouts.PrefixName(l.Prefix), text), "; ")
		}
		if k := keptNote(l, kept, raw, check.RelError); k != "" {
			note = strings.TrimPrefix(note+"; "+k, "; ")
		}
		if c := complexNote(l, lay, tensors); c != "" {
			note = strings.TrimPrefix(note+"; "+c, "; ")
		}
		if own {
			text := sharedModesNote(l.Prefix, len(shared.A), len(fs), len(shared.A[0]))
			if l.Layout == layouts.S4 {
				rec.Module = s4DiagModule(l, tensors, len(shared.A))
				text += "; its module loads it " + rec.Module
			}
			note = strings.TrimPrefix(note+"; "+text, "; ")
		} else if l.Layout == layouts.S4 && lay == layouts.S4D {
			rec.Module = s4DiagModule(l, tensors, 0)
			note = strings.TrimPrefix(note+"; "+fmt.Sprintf("layer %s: written for SSMKernelDiag: its module loads it %s", layouts.PrefixName(l.Prefix), rec.Module), "; ")
		}
		if b := layouts.BidirectionalRTF(l.Layer); b != "" && lay == layouts.RTF {
			note = strings.TrimPrefix(note+"; "+fmt.Sprintf("layer %s: %s", layouts.PrefixName(l.Prefix), b), "; ")
			rec.Module = b
		}
		return tensors, rec, layerNotes{note: note, modal: fallback, why: rec.Why}, nil
	}
	u := unheld{prefix: l.Prefix, what: "no layout tried holds the fit: " + strings.Join(failures, "; "), force: last != nil, other: o.otherWays(true, true)}
	if last == nil {
		// No layout could represent the fit at all: there are no tensors to force.
		u.other = o.otherWays(true, false)
	}
	if !u.force || !o.Force {
		return nil, rec, layerNotes{}, u
	}
	for _, t := range last {
		rec.Tensors = append(rec.Tensors, t.Name)
	}
	rec.Why = strings.Join(failures, "; ")
	return last, rec, layerNotes{warning: "written anyway (--force): " + u.message()}, nil
}

// channelReadBacks returns recs with each channel's read-back error (errs, from a
// layouts.Check; none where the tensors cannot be read back, err, or a channel's error is
// not a number), or recs itself where errs are not one a channel.
func channelReadBacks(recs []plan.ChannelRecord, errs []float64, err error) []plan.ChannelRecord {
	if len(errs) != len(recs) {
		return recs
	}
	out := slices.Clone(recs)
	for i, e := range errs {
		out[i].ReadBackError = nil
		if err == nil && !math.IsNaN(e) && !math.IsInf(e, 0) {
			out[i].ReadBackError = &e
		}
	}
	return out
}

// unheld is a layer whose tensors no layout tried writes within their limit (exportLayer,
// exportMIMOLayer), as an error: Assemble goes on to the other layers and names every
// such layer in one error (unheldError), so that a run of a model with several does not
// stop at the first and name the next only when that one is fixed.
type unheld struct {
	prefix, what string
	force        bool   // tensors were made, which --force writes
	other        string // the other ways out: "--to-layout picks another layout, …"
}

func (u unheld) Error() string   { return u.message() + u.hint("it") }
func (u unheld) Unwrap() []error { return []error{ErrInvalid} }

// message is what went wrong, without the advice: layer "P": no layout tried holds the fit: ….
func (u unheld) message() string { return fmt.Sprintf("layer %q: %s", u.prefix, u.what) }

// hint is the advice, for one layer (it) or several (them).
func (u unheld) hint(pronoun string) string {
	if u.force {
		return fmt.Sprintf(" (--force writes %s anyway; %s)", pronoun, u.other)
	}
	return fmt.Sprintf(" (%s)", u.other)
}

// unheldError is the error naming every layer of us: the advice once where it is the same
// for all of them, else each layer's own.
func unheldError(us []unheld) error {
	if len(us) == 1 {
		return us[0]
	}
	same := true
	for _, u := range us {
		same = same && u.force == us[0].force && u.other == us[0].other
	}
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.message()
		if !same {
			parts[i] += u.hint("it")
		}
	}
	msg := fmt.Sprintf("%d layers cannot be written: %s", len(us), strings.Join(parts, "; "))
	if same {
		msg += us[0].hint("them")
	}
	return inputf("%s", msg)
}

// CheckCopied returns an error where a tensor that the distilled checkpoint copies from the
// input as it is (one that no layer to distil replaces) is of a type a file of format f cannot
// hold (complex in safetensors, bfloat16 in NumPy files), so that distill refuses it before its
// fits, not after them as it writes.
func (c *Checkpoint) CheckCopied(f arrays.Format) error {
	replaced := map[string]bool{}
	for _, names := range c.readFrom {
		for _, n := range names {
			replaced[n] = true
		}
	}
	for _, in := range c.infos {
		if replaced[in.Name] {
			continue
		}
		if err := arrays.CheckHeld(f, in); err != nil {
			hint := ""
			if arrays.CheckHeld(arrays.FormatTorch, in) == nil {
				hint = "; a .pt OUT holds it"
			}
			return inputf("%v (the input's tensor, copied as it is)%s", err, hint)
		}
	}
	return nil
}

// writtenType is the element type a layer's tensors are written in: the one asked for, else
// the layer's own, where the container holds it (else F32, with why, naming the types as
// listings do: float32).
func writtenType(l ModelLayer, o DistilledOptions) (raw string, dt arrays.DType, why string) {
	raw = l.RawType
	if o.Options.DType != "" {
		raw = o.Options.DType
	}
	dt, ok := floatType(raw, o.Format)
	switch {
	case ok:
	case raw == "BF16":
		raw, why = "F32", "written as float32: NumPy files cannot hold bfloat16"
	default:
		raw, why = "F32", fmt.Sprintf("written as float32: ssmlab writes %s, not %s", arrays.WrittenNames(), arrays.RawTypeName(raw))
	}
	return raw, dt, why
}

// floatType is the element type ssmlab writes a raw type as in a container of format f
// (arrays.WrittenRawType), and false where it writes none (float16, integers; bfloat16 in
// NumPy files): float32 then.
func floatType(raw string, f arrays.Format) (arrays.DType, bool) {
	if d, ok := arrays.WrittenRawType(raw, f); ok {
		return d, true
	}
	return arrays.Float32, false
}

// flattenedNote says what of a torch.save input the output, a flat state_dict of tensors,
// does not keep as it was: tensors in nested containers (a checkpoint's model under a key no
// convention names, {"model_state": …, "epoch": 3}) come out named by their paths, and values
// that are no tensors are left out; "" for a flat state_dict.
func flattenedNote(f *arrays.File) string {
	nested, others, n := f.Flattened()
	var says []string
	if nested {
		says = append(says, "the input's tensors sit in nested containers: the output holds them as one flat state_dict, each named by its path in the input (a module's load_state_dict wants the path's leading keys taken off)")
	}
	if n > 0 {
		what := strings.Join(others, ", ")
		if n > len(others) {
			what += fmt.Sprintf(" and %d more", n-len(others))
		}
		verb, not := "are", "not tensors"
		if n == 1 {
			verb, not = "is", "not a tensor"
		}
		says = append(says, fmt.Sprintf("the input's %s that %s %s (%s) %s not copied", plural.Count(n, "value"), verb, not, what, verb))
	}
	return strings.Join(says, "; ")
}

// keptTypes are the tensors of a layer written back in its own layout, without --dtype, that
// keep their input's element type where it is not the layer's (raw), by name: a layer's
// tensors may come in several (StripedHyena's to_bfloat16_except_poles_residues keeps poles
// and residues float32 and makes D bfloat16), and its module's parameters keep theirs, so
// each is written, and read back, in its own. D written as float32 and checked so read back
// within 8.9e-6 where the module, rounding it to bfloat16, was 3.0e-3 from the fit.
func keptTypes(l ModelLayer, lay layouts.Layout, tensors []arrays.Named, raw string, o DistilledOptions) map[string]string {
	if lay != l.Layout || o.Options.DType != "" {
		return nil
	}
	var kept map[string]string
	for _, t := range tensors {
		in, ok := l.TensorTypes[t.Name]
		if _, writes := floatType(in, o.Format); !ok || in == raw || !writes {
			continue
		}
		if kept == nil {
			kept = map[string]string{}
		}
		kept[t.Name] = in
	}
	return kept
}

// sharedModesNote says that the layer of prefix was fitted with its SSMs' modes shared: ssms
// SSMs over its channels, of modes each.
func sharedModesNote(prefix string, ssms, channels, modes int) string {
	return fmt.Sprintf("layer %s: fitted with its SSMs' modes shared, as its module shares them (n_ssm %d over %s, %s each)", layouts.PrefixName(prefix), ssms, plural.Count(channels, "channel"), plural.Count(modes, "mode"))
}

// keptNote says which of a layer's tensors kept their input's element type (keptTypes), and
// what the read-back that rounds each to its own found; "" where none did.
func keptNote(l ModelLayer, kept map[string]string, raw string, rel float64) string {
	if len(kept) == 0 {
		return ""
	}
	var each []string
	for _, name := range slices.Sorted(maps.Keys(kept)) {
		each = append(each, fmt.Sprintf("%s as %s", strings.TrimPrefix(name, l.Prefix), kept[name]))
	}
	return fmt.Sprintf("layer %s: written in the input's types where they differ from %s (%s); read back so, each rounded to its own type, to %s", layouts.PrefixName(l.Prefix), raw, strings.Join(each, ", "), filters.RelErrorText(rel))
}

// complexNote says which of a layer's tensors, written back in its own layout, the input held
// as complex tensors (a module with complex parameters): ssmlab writes them as the real pairs
// (…, 2) the reference modules hold (torch.view_as_real), which such a module's strict
// load_state_dict refuses; "" where none was.
func complexNote(l ModelLayer, lay layouts.Layout, tensors []arrays.Named) string {
	if lay != l.Layout {
		return ""
	}
	var names []string
	for _, t := range tensors {
		if in := l.TensorTypes[t.Name]; in == "C64" || in == "C128" {
			names = append(names, fmt.Sprintf("%s as %s", strings.TrimPrefix(t.Name, l.Prefix), arrays.RawTypeName(in)))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("layer %s: the input held %s; written as real pairs (…, 2), as torch.view_as_real gives them and the reference module holds them (a module with complex parameters loads them through torch.view_as_complex)", layouts.PrefixName(l.Prefix), strings.Join(names, ", "))
}

// readBackTypes are keptTypes as the read-back rounds them, and the type whose limit the
// layer is held to: the least precise of them and dt, since its module holds such a tensor
// in that type.
func readBackTypes(kept map[string]string, dt arrays.DType, f arrays.Format) (map[string]arrays.DType, arrays.DType) {
	if len(kept) == 0 {
		return nil, dt
	}
	types := map[string]arrays.DType{}
	limit := dt
	for name, raw := range kept {
		types[name], _ = floatType(raw, f)
		if ReadBackLimit(types[name]) > ReadBackLimit(limit) {
			limit = types[name]
		}
	}
	return types, limit
}

// exportMIMOLayer writes a reduced MIMO layer (the unit r) back in its own layout, with its
// module's settings (an S5 layer every state at --log-step, else the mean of its log_step),
// and checks that the tensors, rounded to their dtype, read back within their limit of the
// reduced layer, and stable where it is (readBackCheck, as every layer written). A
// bidirectional S5 layer's 2H outputs (Result.MIMO's) are written as C1 and C2 by
// ExportMIMO from their number (one C of (H, 2P, 2) where the layer was read so, c-init
// complex_normal); the note says which channels are which.
func exportMIMOLayer(c *Checkpoint, l ModelLayer, r *plan.UnitResult, o DistilledOptions, stateSize int) ([]arrays.Named, plan.LayerRecord, layerNotes, error) {
	rec := plan.LayerRecord{Prefix: l.Prefix, Layout: string(l.Layout), ToLayout: string(l.Layout), Length: l.Length, Channels: r.Channels, Warnings: l.Warnings}
	raw, dt, why := writtenType(l, o)
	rec.DType = raw
	m, err := r.MIMO.System()
	if err != nil {
		return nil, rec, layerNotes{}, inputf("layer %q: the reduced layer: %v", l.Prefix, err)
	}
	opts := map[string]string{}
	for _, name := range moduleSettings[l.Layout] {
		if v, ok := l.Options[name]; ok {
			opts[name] = v
		}
	}
	if _, given := c.options["log-step"]; l.Layout == layouts.S5 && !given {
		step, err := c.file.Read(l.Prefix + "log_step")
		if err != nil {
			return nil, rec, layerNotes{}, fmt.Errorf("%s: %w", c.Path, err)
		}
		opts["log-step"] = strconv.FormatFloat(floats.Sum(step.Data)/float64(len(step.Data)), 'g', -1, 64)
	} else if given {
		opts["log-step"] = c.options["log-step"]
	}
	lo := layouts.Options{Values: opts, StateSize: stateSize}
	tensors, err := layouts.ExportMIMO(m, l.Layout, lo, l.Prefix)
	if err != nil {
		return nil, rec, layerNotes{}, inputf("layer %q: %v", l.Prefix, oneLineErr(err))
	}
	rec.TensorDTypes = keptTypes(l, l.Layout, tensors, raw, o)
	var checkDT arrays.DType
	lo.TensorTypes, checkDT = readBackTypes(rec.TensorDTypes, dt, o.Format)
	rb, err := layouts.ReadBackMIMO(m, tensors, dt, l.Layout, lo, l.Prefix, l.Length)
	check := readBackCheck(rb, err, l.Layout, checkDT)
	check.Item, check.FitErrors = l.Prefix, fitErrors(r.Channels, m.Outputs)
	rec.ReadBackError = readBackError(rb.RelError, err)
	rec.Channels = channelReadBacks(r.Channels, rb.Errors, err)
	for _, t := range tensors {
		rec.Tensors = append(rec.Tensors, t.Name)
	}
	states := max(len(m.Poles), stateSize) // padded with idle modes to the model's widest layer
	size := fmt.Sprintf("d_hidden %d", states)
	switch l.Layout {
	case layouts.RotRNN:
		size = fmt.Sprintf("%s of 2 states (k = 2, state size %d)", plural.Count(states, "head"), 2*states)
	case layouts.S5:
		size = fmt.Sprintf("P = %d (ssm_size_base %d)", states, states)
		if l.Options["conj-sym"] != "false" {
			size = fmt.Sprintf("P = %d (ssm_size_base %d under conj_sym)", states, 2*states)
		}
	}
	if states > len(m.Poles) {
		size += fmt.Sprintf(" (its %s and idle ones up to the model's widest layer)", plural.Count(len(m.Poles), "mode"))
	}
	if l.Options["bidirectional"] == "true" {
		// ExportMIMO writes the 2H outputs as C1 and C2 (Result.MIMO's order).
		h := m.Outputs / 2
		size += fmt.Sprintf(", bidirectional=True: channels 0–%d its forward outputs, %d–%d its backward ones", h-1, h, 2*h-1)
	}
	rec.Module = "build it with " + size
	note := fmt.Sprintf("layer %s: reduced by balanced truncation to order %d and refitted by least squares (%s; the truncation's H∞ error bound %.3g): its module loads it built with %s", layouts.PrefixName(l.Prefix), r.MIMO.Order, plural.Count(len(m.Poles), "mode"), r.MIMO.Bound, size)
	if why != "" {
		note += "; " + why
	}
	if k := keptNote(l, rec.TensorDTypes, raw, rb.RelError); k != "" {
		note += "; " + k
	}
	if cn := complexNote(l, l.Layout, tensors); cn != "" {
		note += "; " + cn
	}
	says := layerNotes{note: note}
	if check.Failed() {
		text, _ := check.Summary("")
		u := unheld{prefix: l.Prefix, what: "the reduced layer " + text, force: true, other: o.otherWays(false, true)}
		if !o.Force {
			return nil, rec, layerNotes{}, u
		}
		rec.Why = text
		says.warning = "written anyway (--force): " + u.message()
	}
	return tensors, rec, says, nil
}

// writeOptions are the settings a layer is written in layout lay with (and the rtf layout's
// trunc_len, else 0): a layer written back in its own layout keeps its module's settings
// (moduleSettings), and an S4 layer written as s4d (from shared modes or not) the disc,
// bilinear, and the transforms its module, built with mode diag (s4DiagModule), reads them
// with: those its config gives. Written for s4d's defaults (zoh, exp), the layer of a model
// trained with state-spaces/s4's configs (dt_transform softplus) read 1.3 from its fit in
// the module built from the same config with mode diag.
func writeOptions(l ModelLayer, lay layouts.Layout) (map[string]string, int) {
	opts := map[string]string{}
	truncLen := 0
	if lay == layouts.RTF {
		truncLen = l.Length
		opts["trunc-len"] = strconv.Itoa(truncLen)
		opts["h0"] = "once"
		if layouts.SafariHyenaRTF(l.Prefix) {
			opts["h0"] = "twice"
		}
	}
	keep := moduleSettings[lay]
	switch {
	case lay == l.Layout:
	case lay == layouts.S4D && l.Layout == layouts.S4:
		keep = []string{"disc", "dt-transform", "real-transform", "imag-transform"}
	default:
		keep = nil
	}
	for _, name := range keep {
		if v, ok := l.Options[name]; ok {
			opts[name] = v
		}
	}
	return opts, truncLen
}

// s4DiagModule says how to build the module that loads an S4 (DPLR) layer written as s4d
// (tensors): its SSMKernelDPLR does not (no P, no l_kernel), SSMKernelDiag does, with the
// layer's disc and transforms (writeOptions), n_ssm SSMs (0: one a channel, n_ssm None) and
// the d_state the written A_real holds.
func s4DiagModule(l ModelLayer, tensors []arrays.Named, nSSM int) string {
	dState := 2 * layouts.ModalStateSize(layouts.S4D, tensors)
	ssm := "n_ssm None (one SSM a channel)"
	if nSSM > 0 {
		ssm = fmt.Sprintf("n_ssm %d", nSSM)
	}
	return fmt.Sprintf("built with mode diag (SSMKernelDiag), disc %s, dt_transform %s, real_transform %s, imag_transform %s, %s and d_state %d",
		l.Options["disc"], l.Options["dt-transform"], l.Options["real-transform"], l.Options["imag-transform"], ssm, dState)
}

func oneLineErr(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// WriteFile writes the distilled checkpoint to path atomically, one tensor at a time: the
// input's tensors are read as they are written.
func (a *Assembly) WriteFile(path string) error { return a.WriteFileBefore(path, nil) }

// WriteFileBefore is WriteFile that calls before (atomicfile.WriteWithBefore) once the
// checkpoint is complete, just before it replaces path: an error from it leaves path as it
// was. By then a .pt or .npz checkpoint's manifest names it (Output: its size and SHA-256,
// hashed as it is written), for the metadata it holds for that file alone (recorded checks
// it), so that before can write the manifest.
func (a *Assembly) WriteFileBefore(path string, before func() error) error {
	var h *inputHash
	err := atomicfile.WriteWithBefore(path, func(w io.Writer) error {
		h = newInputHash()
		return arrays.WriteRaw(io.MultiWriter(w, h), a.format, a.infos, arrays.RawOptions{Metadata: a.meta}, func(i int) ([]byte, error) {
			if b, ok := a.fresh[i]; ok {
				return b, nil
			}
			b, err := a.c.file.ReadRaw(a.infos[i].Name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a.c.Path, err)
			}
			return b, nil
		})
	}, func() error {
		if a.Manifest.Metadata != nil {
			out := h.input(path)
			a.Manifest.Output = &out
		}
		if before == nil {
			return nil
		}
		return before()
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, userfile.PathErr(err))
	}
	return nil
}

// Tensors lists the tensors the checkpoint holds, in order.
func (a *Assembly) Tensors() []arrays.RawInfo { return slices.Clone(a.infos) }

// MarshalManifest returns a manifest as the JSON of OUT.manifest.json.
func MarshalManifest(m plan.Manifest) ([]byte, error) {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return append(b, '\n'), nil
}
