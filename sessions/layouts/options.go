package layouts

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Option is a setting of a layer that its checkpoint does not record (a constructor
// argument of the model's code), with the reference code's default for each layout it
// applies to. The command line offers each as a flag --NAME.
type Option struct {
	Name     string
	Defaults map[Layout]string // the reference code's default per layout ("" when none)
	Choices  []string          // the values allowed; empty for a number
	Kind     string            // "choice", "int", "float" or "bool"
	Help     string
	// Export is the help of an option Export uses (how it writes the layer), "" for one it
	// does not (a setting of reading only, such as which of a layer's filters to read),
	// which Export refuses.
	Export string
}

var transforms = []string{"none", "exp", "relu", "sigmoid", "softplus"}

// Options lists every layout option.
var OptionList = []Option{
	{Name: "variant", Kind: "choice", Choices: []string{"ssm", "minimal"}, Defaults: map[Layout]string{S4D: "ssm"},
		Help:   "which S4D module: ssm (SSMKernelDiag in FFTConv, state-spaces/s4 src/models/sequence/kernels/ssm.py) or minimal (models/s4/s4d.py); import tells them apart by their names",
		Export: "s4d: write for ssm (SSMKernelDiag in FFTConv, state-spaces/s4 src/models/sequence/kernels/ssm.py) or minimal (models/s4/s4d.py)"},
	{Name: "disc", Kind: "choice", Choices: []string{"zoh", "bilinear", "dss"}, Defaults: map[Layout]string{S4D: "zoh", S5: "zoh"},
		Help:   "discretisation of an S4D (zoh, bilinear, dss) or S5 (zoh, bilinear) layer",
		Export: "s4d, s5: the discretisation the module is built with: zoh or bilinear (s4d's minimal variant: zoh)"},
	{Name: "dt-transform", Kind: "choice", Choices: transforms, Defaults: map[Layout]string{S4D: "exp", S4: "exp"},
		Help:   "how an S4/S4D layer maps inv_dt to Δt (its dt_transform: exp is SSMKernel's default, softplus that of state-spaces/s4's layer configs)",
		Export: "s4d: how the module maps inv_dt to Δt (its dt_transform)"},
	{Name: "real-transform", Kind: "choice", Choices: transforms, Defaults: map[Layout]string{S4D: "exp", S4: "exp"},
		Help:   "how an S4/S4D layer maps A_real to −Re A (its real_transform)",
		Export: "s4d: how the module maps A_real to −Re A (its real_transform; none holds a pole on or outside the unit circle)"},
	{Name: "imag-transform", Kind: "choice", Choices: transforms, Defaults: map[Layout]string{S4D: "none", S4: "none"},
		Help:   "how an S4/S4D layer maps A_imag to −Im A (its imag_transform)",
		Export: "s4d: how the module maps A_imag to −Im A (its imag_transform)"},
	{Name: "is-real", Kind: "bool", Defaults: map[Layout]string{S4D: "false"},
		Help:   "s4d: the module is built with is_real=True (real A_real, B and C, no A_imag); import tells it by its shapes",
		Export: "s4d: write for a module built with is_real=True: real A_real, B and C, no A_imag; every pole must be real and positive (e^{Δ·A} with A real and negative)"},
	{Name: "length", Kind: "int", Defaults: map[Layout]string{Hyena: "", S4D: "", S4: ""},
		Help: "hyena: samples to evaluate, up to the stored length (default or 0: the stored length); s4d with disc dss: the kernel length L it normalises by (required); s4: the l_kernel its C̃ was made for, in [2, 4194304] (default: the stored buffer)"},
	{Name: "trunc-len", Kind: "int", Defaults: map[Layout]string{RTF: "0"},
		Help:   "rtf: the layer's trunc_len L: its numerators are stored with the truncation correction b̃ = b(I − Aᴸ) (RTF paper, eq. 13), which import undoes and export applies; 0: stored as they are",
		Export: "rtf: store the numerators corrected for trunc_len L"},
	{Name: "h0", Kind: "choice", Choices: []string{"once", "twice"}, Defaults: map[Layout]string{RTF: "once"},
		Help:   "rtf: once (ruke1ire/RTF rtf.py), or twice for safari's Hyena-RTF wrapper, whose kernel holds h_0 and whose convolution adds it again as the bias",
		Export: "rtf: write h_0 whole (once, ruke1ire/RTF rtf.py), or halved (twice) for safari's Hyena-RTF wrapper, which counts it twice (default: twice under a prefix ending in filter_fn.)"},
	{Name: "conj-sym", Kind: "bool", Defaults: map[Layout]string{S5: "true"},
		Help:   "s5: the layer keeps one of each conjugate pair and outputs 2·Re(C x) (its conj_sym)",
		Export: "s5: write for a module that outputs 2·Re(C x) (its conj_sym): C halved"},
	{Name: "clip-eigs", Kind: "bool", Defaults: map[Layout]string{S5: "false"},
		Help:   "s5: Re Λ is clipped at −1e-4 (its clip_eigs)",
		Export: "s5: write for a module that clips Re Λ at −1e-4 (its clip_eigs): a mode with Re Λ above is refused"},
	{Name: "step-rescale", Kind: "float", Defaults: map[Layout]string{S5: "1"},
		Help:   "s5: factor on the step Δ (its step_rescale)",
		Export: "s5: the module's step_rescale: Δ = step_rescale·exp(log_step)"},
	{Name: "log-step", Kind: "float", Defaults: map[Layout]string{S5: "0"},
		Help:   "s5: the log_step export and distill write for every state (distill: the mean of the layer's unless given; import reads the file's)",
		Export: "s5: the log_step written for every state: Δ = step_rescale·exp(log_step), from which Λ and B are found (a smaller Δ puts Re Λ = log|λ|/Δ further below −1e-4, as clip_eigs wants)"},
	{Name: "c-init", Kind: "choice", Choices: []string{"trunc_standard_normal", "lecun_normal", "complex_normal"}, Defaults: map[Layout]string{S5: "trunc_standard_normal"},
		Help:   "s5: the module's C_init; a bidirectional layer built with complex_normal holds one C of (H, 2P, 2), the others C1 and C2 of (H, P, 2) (lindermanlab/S5 s5/ssm.py lines 183–203); import tells them apart by C's shape",
		Export: "s5: the module's C_init: a bidirectional layer is written as one C of (H, 2P, 2) for complex_normal, as C1 and C2 otherwise"},
	{Name: "short-filter", Kind: "bool", Defaults: map[Layout]string{StripedHyena: "false"},
		Help: "stripedhyena: read the short FIR filters (short_filter_weight) as kernels instead of the long IIR filter"},
	{Name: "modulate", Kind: "bool", Defaults: map[Layout]string{Hyena: "true"},
		Help: "hyena: the filter is modulated by exp(−t·|deltas|) (ExponentialModulation's modulate)"},
	{Name: "shift", Kind: "float", Defaults: map[Layout]string{Hyena: "0"},
		Help: "hyena: the modulation's shift"},
	{Name: "normalized", Kind: "bool", Defaults: map[Layout]string{Hyena: "false"},
		Help: "hyena: the filter is divided at each position by its L1 norm over the channels (HyenaFilter's normalized: h / ‖h‖₁ over dim −1 of (1, L, d_model))"},
	{Name: "bias", Kind: "bool", Defaults: map[Layout]string{Hyena: "true"},
		Help: "hyena: the filter's bias is the direct term (HyenaFilter's use_bias)"},
}

// Options hold what the caller set: option values by name (unset ones take the layout's
// default) and the (output, input) pairs to read from a MIMO layer (default: the diagonal).
type Options struct {
	Values map[string]string
	Pairs  [][2]int
	// StateSize is the least number of modes per channel Export writes in a modal layout
	// (s4d, stripedhyena), the rest padded with modes of no residue, so that every layer of
	// a model can share one state size; 0: the bank's own (ModalStateSize).
	StateSize int
	// Shared, where not nil, are the modes the bank was fitted with, shared by the channels
	// of each SSM (SharedModes): Export writes the s4d layout of those SSMs (exportS4DShared).
	Shared *SharedModes
	// TensorTypes are the element types of tensors (by full name) stored in another type than
	// the layer's, which ReadBack rounds each to: a StripedHyena layer whose D its model keeps
	// in bfloat16 beside float32 poles and residues.
	TensorTypes map[string]arrays.DType
}

// maxIntOption is the largest value of an option of Kind "int" (length, trunc-len): the RTF
// layer's largest trunc_len, 2^22, which the kernel lengths share.
const maxIntOption = rtf.MaxTruncLen

func optionSpec(name string) (Option, bool) {
	for _, o := range OptionList {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// OptionLayoutError is an option given for layers whose layouts do not have it, or where no
// layer is read: a setting that would change nothing (CheckApplies).
type OptionLayoutError struct {
	Option string   // its name, the flag --Option
	Of     []Layout // the layouts that have it
	Not    []Layout // the layouts of the layers it was given for; none: no layer is read
}

func (e *OptionLayoutError) Error() string {
	of := make([]string, len(e.Of))
	for i, l := range e.Of {
		of[i] = string(l)
	}
	if len(e.Not) == 0 {
		return fmt.Sprintf("--%s is an option of the %s layout, and no layer is read from this file", e.Option, strings.Join(of, " and "))
	}
	return fmt.Sprintf("--%s is an option of the %s layout, not of %s", e.Option, strings.Join(of, " and "), JoinLayouts(e.Not))
}

// CheckApplies refuses, as an *OptionLayoutError, an option of values that none of the
// layouts lays has (an unknown one too), naming the first by name (the same error on every
// run): import's layer, or the layers of a checkpoint that distill reads.
func CheckApplies(values map[string]string, lays ...Layout) error {
	for _, name := range slices.Sorted(maps.Keys(values)) {
		spec, _ := optionSpec(name)
		if slices.ContainsFunc(lays, func(l Layout) bool { _, ok := spec.Defaults[l]; return ok }) {
			continue
		}
		e := &OptionLayoutError{Option: name, Not: lays}
		for _, l := range Layouts {
			if _, ok := spec.Defaults[l]; ok {
				e.Of = append(e.Of, l)
			}
		}
		return e
	}
	return nil
}

// CheckValue checks a value of the option name (an OptionList entry) alone, whatever the
// layer: one of its choices, a whole number, a finite number, true or false. Its error says
// what the option wants ("want zoh, bilinear, dss"), for a front end to name its flag.
func CheckValue(name, v string) error {
	spec, ok := optionSpec(name)
	if !ok {
		return fmt.Errorf("no such option")
	}
	switch spec.Kind {
	case "choice":
		if !slices.Contains(spec.Choices, v) {
			return fmt.Errorf("want %s", strings.Join(spec.Choices, ", "))
		}
	case "int":
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > maxIntOption {
			return fmt.Errorf("want an integer in [0, %d]", maxIntOption)
		}
	case "float":
		if f, err := strconv.ParseFloat(v, 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("want a finite number")
		}
	case "bool":
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("want true or false")
		}
	}
	return nil
}

// check refuses an option the layout does not have (CheckApplies), values outside an
// option's choices (CheckValue: of kind ErrOptionValue), naming the first wrong one by name,
// and Pairs for a layer that is not MIMO (of kind ErrOptionValue too).
func (o Options) check(lay Layout) error {
	for _, name := range slices.Sorted(maps.Keys(o.Values)) {
		if _, ok := optionSpec(name); !ok {
			return fmt.Errorf("unknown option %q", name)
		}
	}
	if err := CheckApplies(o.Values, lay); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(o.Values)) {
		if err := CheckValue(name, o.Values[name]); err != nil {
			return optionf("--%s %q: %w", name, o.Values[name], err)
		}
	}
	if len(o.Pairs) > 0 && !slices.Contains([]Layout{LRU, S5, RotRNN}, lay) {
		return optionf("--pair picks slices of a MIMO layer (lru, s5, rotrnn), not of %s", lay)
	}
	return nil
}

// CheckExport refuses the settings Export and ExportMIMO cannot take for a layer of layout
// lay, naming the first wrong one: a setting of reading a layer only (its Option.Export is
// empty: ErrNotExported), which export does not use, then those check refuses (an option
// lay does not have, a value outside its choices). Package sessions calls it before reading
// what it exports.
func (o Options) CheckExport(lay Layout) error {
	for _, name := range slices.Sorted(maps.Keys(o.Values)) {
		if spec, ok := optionSpec(name); ok && spec.Export == "" {
			return &kindError{ErrNotExported, fmt.Errorf("--%s is an option of import (%s); export does not use it", name, spec.Help)}
		}
	}
	return o.check(lay)
}

// get returns an option's value for a layout: the caller's, or the default.
func (o Options) get(lay Layout, name string) string {
	if v, ok := o.Values[name]; ok {
		return v
	}
	spec, _ := optionSpec(name)
	return spec.Defaults[lay]
}

func (o Options) bool(lay Layout, name string) bool {
	b, _ := strconv.ParseBool(o.get(lay, name))
	return b
}

func (o Options) float(lay Layout, name string) float64 {
	f, _ := strconv.ParseFloat(o.get(lay, name), 64)
	return f
}

func (o Options) int(lay Layout, name string) int {
	n, _ := strconv.Atoi(o.get(lay, name))
	return n
}

// pairs returns the MIMO slices to read: the caller's, checked against the layer's sizes,
// or the diagonal (h, h) for h < min(outs, ins).
func (o Options) pairs(outs, ins int) ([][2]int, error) {
	if len(o.Pairs) == 0 {
		n := min(outs, ins)
		out := make([][2]int, n)
		for h := range out {
			out[h] = [2]int{h, h}
		}
		return out, nil
	}
	for _, p := range o.Pairs {
		if p[0] < 0 || p[0] >= outs || p[1] < 0 || p[1] >= ins {
			return nil, invalidf("--pair %d,%d is outside the layer's %d outputs and %d inputs (0-based)", p[0], p[1], outs, ins)
		}
	}
	return o.Pairs, nil
}

// mimoWarning says plainly what was taken from a MIMO layer.
func mimoWarning(lay Layout, outs, ins int, pairs [][2]int, asked bool) string {
	// It said "the 3 diagonal pairs (h, h)", h a letter the message never named.
	what := "the diagonal pair (output, input) (0, 0)"
	switch n := len(pairs); {
	case n == 2:
		what = "the 2 diagonal pairs (output, input) (0, 0), (1, 1)"
	case n > 2:
		what = fmt.Sprintf("the %d diagonal pairs (output, input) (0, 0), …, (%d, %d)", n, n-1, n-1)
	}
	if asked {
		ps := make([]string, len(pairs))
		for i, p := range pairs {
			ps[i] = fmt.Sprintf("(%d, %d)", p[0], p[1])
		}
		what = "the pairs (output, input) " + plural.First(ps, 8, " ")
	}
	return fmt.Sprintf("the %s layer is multi-input multi-output (%d outputs × %d inputs); ssmlab holds single-input single-output filters, so it took %s as a bank, one channel each (--pair OUT,IN picks others)", lay, outs, ins, what)
}

// pairBank reads a MIMO layer as a bank of one channel per (output, input) pair that o
// picks, and returns it with mimoWarning's account of them.
func pairBank(lay Layout, o Options, outs, ins int, channel func(out, in int) (filters.Filter, error)) (*filters.Bank, string, error) {
	pairs, err := o.pairs(outs, ins)
	if err != nil {
		return nil, "", err
	}
	out := make([]filters.Filter, len(pairs))
	for i, pr := range pairs {
		if out[i], err = channel(pr[0], pr[1]); err != nil {
			return nil, "", fmt.Errorf("pair (%d, %d): %w", pr[0], pr[1], err)
		}
	}
	bank, err := filters.NewBank(out)
	if err != nil {
		return nil, "", err
	}
	return bank, mimoWarning(lay, outs, ins, pairs, len(o.Pairs) > 0), nil
}

// mimoBank reads a layer of complex modes (lru, s5) as pairBank does, each pair m.Channel.
func mimoBank(lay Layout, o Options, m *filters.MIMO) (*filters.Bank, string, error) {
	return pairBank(lay, o, m.Outputs, m.Inputs, func(out, in int) (filters.Filter, error) {
		return m.Channel(out, in)
	})
}

// diagonalD is the Outputs × Inputs direct term of a layer whose D acts on each channel's
// own input alone (D ⊙ u): d[h] at (h, h) for h below both sizes, 0 elsewhere.
func diagonalD(d []float64, outs, ins int) []float64 {
	out := make([]float64, outs*ins)
	for h := range min(outs, ins, len(d)) {
		out[h*ins+h] = d[h]
	}
	return out
}
