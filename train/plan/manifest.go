package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/cplx"
	"github.com/ssmlab/ssmlab/train"
)

// ManifestFormat names the manifest's format and version.
const ManifestFormat = "ssmlab-distill-manifest/1"

// Input identifies the checkpoint a job distils: its base name, size and SHA-256, which
// shards and merge compare to know that they work on the same file.
type Input struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Options are what a job was asked to do, beside its input: every shard of a job must have
// the same (merge checks them).
type Options struct {
	// Layout is the layout the layers were read as ("auto": detected), LayoutOptions the
	// settings given for reading them (layouts.OptionList), Layers the pattern picking
	// them (empty: every long-filter layer).
	Layout        string            `json:"layout"`
	LayoutOptions map[string]string `json:"layout_options,omitempty"`
	Layers        string            `json:"layers,omitempty"`
	// Length is the kernel length of layers whose checkpoint records none (s4d,
	// stripedhyena, rtf); 0 (absent) in a manifest where every layer recorded its own
	// (Applied).
	Length int `json:"length,omitempty"`
	// Order is the order of every channel, or 0 with OrderAuto: each channel's order is the
	// one train.SuggestOrder suggests for Tol (from the lower bound), at most MaxOrder.
	Order     int     `json:"order,omitempty"`
	OrderAuto bool    `json:"order_auto,omitempty"`
	Tol       float64 `json:"tol,omitempty"`
	MaxOrder  int     `json:"max_order,omitempty"`
	// Chunk is the largest number of channels in a unit.
	Chunk int `json:"chunk"`
	// ToLayout is the layout the distilled layers are written in; empty: rtf where the
	// tensors read back within their dtype's limit, else a modal layout.
	ToLayout string `json:"to_layout,omitempty"`
	// DType is the element type the distilled layers' tensors are written in ("F64", "F32",
	// "BF16"); empty: each layer's own.
	DType string `json:"dtype,omitempty"`
	// Spec is the fitting recipe (its Order is each unit's; its Target is unused); in a
	// manifest, as the fits ran it (Applied), without its Target (ManifestOptions). It
	// applies whole to the layers fitted channel by channel (MethodFit); of the others, only
	// its order does (LayerRecord.Method).
	Spec train.Spec `json:"spec"`
}

// ManifestOptions are a job's options as a manifest records them (Options.Applied): written
// without the spec's target, which no fit of a job uses (each unit's kernels are its
// target), so that no key of the manifest stands for nothing. Options keep it as they are:
// FitKey hashes their JSON, and a work directory is found again by it.
type ManifestOptions Options

// MarshalJSON writes o as Options, less spec.target.
func (o ManifestOptions) MarshalJSON() ([]byte, error) {
	type spec struct {
		train.Spec
		Target *struct{} `json:"target,omitempty"` // never set: hides the spec's own
	}
	return json.Marshal(struct {
		Options
		Spec spec `json:"spec"` // hides Options.Spec, in its place: the last key
	}{Options(o), spec{Spec: o.Spec}})
}

// Applied returns the options as a job's fits applied them, which its manifest records: the
// recipe every layer is fitted with (JobSpec: the diagonal form of an rtf fit by variable
// projection), as fitted (train.Spec.AsFitted: no optimiser settings for a fit by variable
// projection), and Length only where some layer was distilled at it (lengthUsed), each
// layer's own being in its record. Parts and the work directory's key keep the options as
// given: merge compares them, and a run finds the units fitted before by them.
func (o Options) Applied(lengthUsed bool) ManifestOptions {
	o.Spec = JobSpec(o.Spec).AsFitted()
	if !lengthUsed {
		o.Length = 0
	}
	return ManifestOptions(o)
}

// Manifest records what a distillation did: its input and options, and for every layer
// written, how it was written and how well each channel was fitted. A distilled checkpoint
// has it beside it (OUT.manifest.json) and, in safetensors files, in its metadata without
// the times (Stable).
type Manifest struct {
	Format string `json:"format"`
	Input  Input  `json:"input"`
	// Options are the job's as its fits applied them (Options.Applied).
	Options ManifestOptions `json:"options"`
	Layers  []LayerRecord   `json:"layers"`
	// Skipped lists the layers detected and left as they were, with the reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Metadata are, for an output whose format holds none (.pt, .npz), the values a
	// safetensors one records in its own (trunc_len, dt_transform), which import reads from
	// OUT.manifest.json for the file Output names alone (its base name, size and SHA-256).
	// Absent for safetensors, and where there are none.
	Metadata map[string]string `json:"metadata,omitempty"`
	Output   *Input            `json:"output,omitempty"`
}

// How a layer was reduced, as its record says (LayerRecord.Method).
const (
	// MethodFit: each channel fitted on its own by the options' spec.
	MethodFit = "fit"
	// MethodSharedModes: the layer's channels fitted together on the modes they share
	// (train.FitShared, Levenberg–Marquardt from the layer's own modes) at the spec's order;
	// the rest of the spec does not apply.
	MethodSharedModes = "shared modes"
	// MethodBalancedTruncation: a MIMO layer reduced whole by balanced truncation to the
	// spec's order (with OrderAuto, the smallest up to MaxOrder within Tol), its B and C
	// refitted by least squares; the rest of the spec does not apply.
	MethodBalancedTruncation = "balanced truncation"
)

// Method says how r's channels were reduced: MethodBalancedTruncation for a MIMO unit,
// MethodSharedModes for one of shared modes, else MethodFit.
func (r *UnitResult) Method() string {
	switch {
	case r.MIMO != nil:
		return MethodBalancedTruncation
	case r.Shared != nil:
		return MethodSharedModes
	}
	return MethodFit
}

// LayerRecord is one distilled layer.
type LayerRecord struct {
	Prefix string `json:"prefix"`
	// Method says how the layer was reduced (UnitResult.Method): the options' spec applies
	// whole to a layer of MethodFit alone.
	Method string `json:"method"`
	// Spec holds the keys of the recipe the layer's channels were fitted with whose values
	// differ from the options' spec (SpecChanges: the real positive poles of an S4D layer
	// built with is_real), with the layer's values; absent where none differs, the layer was
	// not fitted by the spec (Method), or the manifest is older than the key. A manifest
	// written before the options recorded the job's form (JobSpec) has "form": "diagonal"
	// here on every layer of an rtf fit by variable projection.
	Spec map[string]json.RawMessage `json:"spec,omitempty"`
	// AutoMaxRadius is the radius bound the layer's fits chose for its length where the spec
	// left it automatic, or has no radius constraint and its fits keep their poles within it
	// all the same (train.Report.AutoMaxRadius, its units'); 0 (omitted) where the spec gave
	// one, none applies, or the layer was not fitted by it (Method), and where its units were
	// kept from an ssmlab that did not record it.
	AutoMaxRadius float64 `json:"auto_max_radius,omitempty"`
	// Layout is the layout it was read in, ToLayout the one written; Why says why ToLayout
	// is not rtf when the user asked for none.
	Layout   string `json:"layout"`
	ToLayout string `json:"to_layout"`
	Why      string `json:"why,omitempty"`
	// DType is the element type of the tensors written (the layer's own).
	DType  string `json:"dtype"`
	Length int    `json:"length"`
	// ReadBackError is the worst channel's relative error of the tensors as written (rounded
	// to DType, read back as the model's code reads them) against the fitted filters; nil
	// (null) for tensors that cannot be read back (written with --force; Why says why).
	ReadBackError *float64 `json:"read_back_error"`
	// Warnings are what reading the layer warned of (import's warnings: a D taken as 0, a
	// bidirectional layer's anti-causal channels).
	Warnings []string `json:"warnings,omitempty"`
	// TensorDTypes are the tensors written in another element type than DType, their
	// input's (a StripedHyena layer's D kept in bfloat16 beside float32 poles).
	TensorDTypes map[string]string `json:"tensor_dtypes,omitempty"`
	// Module says how to build the module that loads the layer as written, where that is
	// not the layout's plain module (a bidirectional S4D layer written as rtf).
	Module   string          `json:"module,omitempty"`
	Tensors  []string        `json:"tensors"`
	Channels []ChannelRecord `json:"channels"`
}

// ChannelRecord is one fitted channel: its index in the layer, the order and model it was
// fitted at, train's report on it (rel_error, the fit's error on its target;
// max_pole_radius, stable, …), the backend that ran it and its share of the wall time of its
// fit (channels are fitted together); in a manifest, its read-back error.
type ChannelRecord struct {
	Channel int         `json:"channel"`
	Order   int         `json:"order"`
	Model   train.Model `json:"model"`
	train.ChannelReport
	Backend string  `json:"backend"`
	Seconds float64 `json:"seconds,omitempty"`
	// ReadBackError is the relative error of the channel's tensors as written (rounded to
	// the layer's dtype, read back as the model's code reads them) against its fitted
	// filter (WrittenError). Absent where the tensors cannot be read back, and in a work
	// directory's units.
	ReadBackError *float64 `json:"read_back_error,omitempty"`
}

// WrittenError bounds the relative error of the channel as written on its target:
// RelError + ReadBackError·(1 + RelError), by the triangle inequality (‖w − t‖ ≤ ‖w − f‖ +
// ‖f − t‖ for the target t, the fit f and the filter written w, with ‖f‖ ≤ (1 + RelError)‖t‖);
// false without a read-back error.
func (c ChannelRecord) WrittenError() (float64, bool) {
	if c.ReadBackError == nil {
		return 0, false
	}
	return c.RelError + *c.ReadBackError*(1+c.RelError), true
}

// Skipped is a layer left as it was.
type Skipped struct {
	Prefix string `json:"prefix"`
	Layout string `json:"layout"`
	Why    string `json:"why"`
}

// Stable returns a copy of the manifest without the times, the only part of it that
// differs between two runs of the same job on the same backend: what a distilled
// checkpoint's own bytes hold, so that they are the same however the work was divided.
func (m Manifest) Stable() Manifest {
	out := m
	out.Layers = make([]LayerRecord, len(m.Layers))
	for i, l := range m.Layers {
		l.Channels = append([]ChannelRecord(nil), l.Channels...)
		for c := range l.Channels {
			l.Channels[c].Seconds = 0
		}
		out.Layers[i] = l
	}
	return out
}

// UnitResult is a fitted unit: a filter and a record per channel, in channel order.
type UnitResult struct {
	Unit     Unit
	Filters  []filters.Filter
	Channels []ChannelRecord
	Warnings []string
	// Shared are the modes a unit of shared modes (Unit.Shared) was fitted with.
	Shared *SharedRecord
	// MIMO is the reduced layer of a MIMO unit (Unit.MIMO), which has no Filters.
	MIMO *MIMORecord
	// AutoMaxRadius is the radius bound its fits chose for the unit's length
	// (train.Report.AutoMaxRadius, the same for each order's fit), or 0 where they chose none.
	AutoMaxRadius float64
}

// MIMORecord is a reduced MIMO layer as stored (filters.MIMO, a complex number as [re, im]),
// with what its reduction reported.
type MIMORecord struct {
	Poles   [][2]float64 `json:"poles"`
	B       [][2]float64 `json:"b"`
	C       [][2]float64 `json:"c"`
	D       []float64    `json:"d"`
	Inputs  int          `json:"inputs"`
	Outputs int          `json:"outputs"`
	// Order is the number of real states kept; HSV the input's Hankel singular values and
	// Bound the balanced-truncation bound on the H∞ norm of the error (analysis.MIMOReduction).
	Order int       `json:"order"`
	HSV   []float64 `json:"hsv"`
	Bound float64   `json:"bound"`
}

// NewMIMORecord records a reduction.
func NewMIMORecord(red *analysis.MIMOReduction) *MIMORecord {
	m := red.System
	return &MIMORecord{Poles: cplx.Pairs(m.Poles), B: cplx.Pairs(m.B), C: cplx.Pairs(m.C), D: slices.Clone(m.D),
		Inputs: m.Inputs, Outputs: m.Outputs, Order: red.Order, HSV: slices.Clone(red.HSV), Bound: red.Bound}
}

// System returns the reduced layer the record holds, its shapes checked.
func (r *MIMORecord) System() (*filters.MIMO, error) {
	return filters.NewMIMO(cplx.FromPairs(r.Poles), cplx.FromPairs(r.B), cplx.FromPairs(r.C), slices.Clone(r.D), r.Inputs, r.Outputs)
}

// SharedRecord is a train.SharedFit's modes and residues as stored (a complex number as
// [re, im]).
type SharedRecord struct {
	Group    []int          `json:"group"`
	A        [][][2]float64 `json:"a"`
	Dt       []float64      `json:"dt"`
	Residues [][][2]float64 `json:"residues"`
}

// NewSharedRecord records a shared fit.
func NewSharedRecord(f *train.SharedFit) *SharedRecord {
	r := &SharedRecord{Group: slices.Clone(f.Modes.Group), Dt: slices.Clone(f.Modes.Dt)}
	for _, a := range f.Modes.A {
		r.A = append(r.A, cplx.Pairs(a))
	}
	for _, res := range f.Residues {
		r.Residues = append(r.Residues, cplx.Pairs(res))
	}
	return r
}

// Complex returns the record's modes and residues as complex numbers.
func (r *SharedRecord) Complex() (a, residues [][]complex128) {
	for _, x := range r.A {
		a = append(a, cplx.FromPairs(x))
	}
	for _, x := range r.Residues {
		residues = append(residues, cplx.FromPairs(x))
	}
	return a, residues
}

// FitKey names what a unit's fit depends on beside the unit itself: the input's content and
// the options that change a fit (not the layer pattern, the chunk size, the layout and dtype
// written nor the backend asked for), so that a unit fitted once is found again by a run with other
// such options (a work directory is keyed by it).
func FitKey(in Input, o Options) string {
	o.Layers, o.Chunk, o.ToLayout, o.DType, o.Spec.Backend = "", 0, "", "", ""
	b, err := json.Marshal(struct {
		SHA256  string  `json:"sha256"`
		Options Options `json:"options"`
	}{in.SHA256, o})
	if err != nil {
		panic("plan: FitKey: " + err.Error()) // Options holds only finite numbers and strings
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Hash names a plan: the SHA-256 of its units' IDs, lengths and orders, in order.
func Hash(units []Unit) string {
	h := sha256.New()
	for _, u := range units {
		b, _ := json.Marshal(u)
		h.Write(append(b, '\n'))
	}
	return hex.EncodeToString(h.Sum(nil))
}
