package layouts

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The Hyena layout (HazyResearch/safari src/models/sequence/hyena.py, HyenaFilter): an
// implicit filter, evaluated here at every stored position t of the positional embedding:
//
//	h = implicit_filter(z)               Linear → Sin → (Linear → Sin)… → Linear (no bias)
//	h = h · (exp(−t·|deltas|) + shift)   ExponentialModulation (when modulate)
//	h = h / ‖h‖₁ over the channels       (when normalized: at each position t)
//
// where Sin(x) = sin(freq ⊙ x) with one freq shared by every Sin of the stack, z and t are
// pos_emb's buffers (1, L, emb_dim) and (1, L, 1), and the bias is the direct term that
// fftconv_ref adds (y = h * u + bias ⊙ u). Channel c's kernel is h[:, c] with bias[c]
// added at t = 0.

func init() { impls[Hyena] = hyenaLayout{} }

type hyenaLayout struct{}

func (hyenaLayout) params() []string {
	return []string{"pos_emb.z", "pos_emb.t", "modulation.deltas", "bias", "implicit_filter.0.weight"}
}

func (hyenaLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	z := shapeOf(in, p+"pos_emb.z", 3)
	if z == nil || shapeOf(in, p+"implicit_filter.0.weight", 2) == nil {
		return Layer{}, false
	}
	l := Layer{Length: z[1], DType: in[p+"pos_emb.z"].DType, Options: map[string]string{"modulate": "true", "shift": "0", "normalized": "false", "bias": "true"}}
	if d := shapeOf(in, p+"modulation.deltas", 3); d != nil {
		l.Channels = d[2]
	}
	return l, true
}

// HyenaLength is the number of samples Hyena layer l's implicit filter is evaluated at, which
// import reads and distill CKPT distils the layer at: the option length, where given and not
// 0, else the positions its pos_emb stores (l.Length). The one rule of import and the
// planner: a value that is not an integer in [0, 2^22] (the option's range), or beyond the
// stored positions, is an error of kind ErrOptionValue naming the layer and the option.
func HyenaLength(o Options, l Layer) (int, error) {
	n, err := o.hyenaLength(l.Length)
	if err != nil {
		err = layerError(l, err)
	}
	return n, err
}

// hyenaLength is HyenaLength for a layer of stored positions, with errors that do not name it.
func (o Options) hyenaLength(stored int) (int, error) {
	v, ok := o.Values["length"]
	if !ok {
		return stored, nil
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0 || n > maxIntOption:
		return 0, optionf("--length %q: want an integer in [0, %d] (0: the %d positions pos_emb holds)", v, maxIntOption, stored)
	case n == 0:
		return stored, nil
	case n > stored:
		return 0, optionf("--length %d is beyond the %d positions pos_emb holds", n, stored)
	}
	return n, nil
}

// stage is one module of the implicit filter: a Linear (w, b) or a Sin (freq).
type stage struct {
	w, b, freq *arrays.Array
	in, out    int
}

func (hyenaLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	zShape := []int{1, -1, -1}
	z, err := t.get("pos_emb.z", "(1, L, emb_dim)", zShape)
	if err != nil {
		return Result{}, err
	}
	stored, emb := zShape[1], zShape[2]
	tt, err := t.get("pos_emb.t", "(1, L, 1)", []int{1, stored, 1})
	if err != nil {
		return Result{}, err
	}
	length, err := o.hyenaLength(stored)
	if err != nil {
		return Result{}, err
	}
	stages, width, err := hyenaStages(t, emb)
	if err != nil {
		return Result{}, err
	}
	channels := width
	modulate := o.bool(Hyena, "modulate")
	var deltas *arrays.Array
	if modulate {
		if deltas, err = t.get("modulation.deltas", "(1, 1, d_model)", []int{1, 1, channels}); err != nil {
			return Result{}, err
		}
	}
	var bias *arrays.Array
	if o.bool(Hyena, "bias") && t.has("bias") {
		if bias, err = t.get("bias", "(d_model)", []int{channels}); err != nil {
			return Result{}, err
		}
	}
	if int64(channels)*int64(length) > arrays.MaxElements {
		return Result{}, invalidf("%d channels of %d samples exceed the limit of %d values", channels, length, arrays.MaxElements)
	}
	shift := o.float(Hyena, "shift")
	k := make([]float64, channels*length)
	x := make([]float64, 0, 64)
	for pos := range length {
		x = evalStages(stages, append(x[:0], z.Data[pos*emb:(pos+1)*emb]...))
		for c := range channels {
			v := x[c]
			if modulate {
				v *= math.Exp(-tt.Data[pos]*math.Abs(deltas.Data[c])) + shift
			}
			k[c*length+pos] = v
		}
	}
	if o.bool(Hyena, "normalized") {
		if err := normalizeChannels(k, channels, length); err != nil {
			return Result{}, err
		}
	}
	if bias != nil {
		for c := range channels {
			k[c*length] += bias.Data[c]
		}
	}
	a, err := arrays.New([]int{channels, length}, k)
	if err != nil {
		return Result{}, fmt.Errorf("%w: the evaluated filter: %w", ErrInvalid, err)
	}
	r := Result{Kernels: a, Note: t.note(fmt.Sprintf("%d kernels of length %d (the implicit filter evaluated, %d modules)", channels, length, len(stages)))}
	if bias == nil && o.bool(Hyena, "bias") {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no %q: the direct term is taken as 0", t.prefix+"bias"))
	}
	return r, nil
}

// hyenaStages reads the implicit_filter's modules by index, each a Linear (weight, bias) or
// a Sin (freq), from an input of width emb, and returns them with the output width.
func hyenaStages(t *tensors, emb int) ([]stage, int, error) {
	idx := map[int]bool{}
	pre := t.prefix + "implicit_filter."
	for name := range t.infos {
		if rest, ok := strings.CutPrefix(name, pre); ok {
			if i, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0]); err == nil {
				idx[i] = true
			}
		}
	}
	order := make([]int, 0, len(idx))
	for i := range idx {
		order = append(order, i)
	}
	sort.Ints(order)
	// A module of the Sequential without tensors cannot be evaluated from the checkpoint:
	// skipping its index would drop an activation, and the kernel with it.
	for k, i := range order {
		if i != k {
			return nil, 0, invalidf("implicit_filter.%d holds no tensor (implicit_filter.%d does): a module whose parameters the checkpoint does not hold (a Sin built with train_freq=False, another activation) cannot be evaluated", k, i)
		}
	}
	var stages []stage
	width := emb
	for _, i := range order {
		base := fmt.Sprintf("implicit_filter.%d.", i)
		switch {
		case t.has(base + "weight"):
			shape := []int{-1, width}
			w, err := t.get(base+"weight", fmt.Sprintf("(out, %d)", width), shape)
			if err != nil {
				return nil, 0, err
			}
			s := stage{w: w, in: width, out: shape[0]}
			if t.has(base + "bias") {
				if s.b, err = t.get(base+"bias", "(out)", []int{shape[0]}); err != nil {
					return nil, 0, err
				}
			}
			stages = append(stages, s)
			width = shape[0]
		case t.has(base + "freq"):
			f, err := t.get(base+"freq", "(1, width)", []int{1, width})
			if err != nil {
				return nil, 0, err
			}
			stages = append(stages, stage{freq: f, in: width, out: width})
		default:
			return nil, 0, invalidf("implicit_filter.%d holds neither weight nor freq", i)
		}
	}
	if len(stages) == 0 || stages[len(stages)-1].w == nil {
		return nil, 0, invalidf("the implicit filter must end in a Linear layer (implicit_filter.N.weight)")
	}
	return stages, width, nil
}

// evalStages runs the implicit filter's modules on x (which a Sin stage overwrites).
func evalStages(stages []stage, x []float64) []float64 {
	for _, s := range stages {
		if s.freq != nil {
			for j := range x {
				x[j] = math.Sin(s.freq.Data[j] * x[j])
			}
			continue
		}
		y := make([]float64, s.out)
		for r := range s.out {
			acc := 0.0
			if s.b != nil {
				acc = s.b.Data[r]
			}
			row := s.w.Data[r*s.in : (r+1)*s.in]
			for j, v := range row {
				acc += v * x[j]
			}
			y[r] = acc
		}
		x = y
	}
	return x
}

// normalizeChannels divides the filter at each position t (column t of k, whose rows are the
// channels' kernels, length long) by its L1 norm over the channels: HyenaFilter.filter's
// h / torch.norm(h, dim=-1, p=1) on h of shape (1, L, d_model), whose last dimension is the
// channels (safari hyena.py, lines 179-187), so that no kernel depends on the length read.
func normalizeChannels(k []float64, channels, length int) error {
	for t := range length {
		n := 0.0
		for c := range channels {
			n += math.Abs(k[c*length+t])
		}
		if n == 0 {
			return invalidf("the filter is zero at position %d on every channel, so it cannot be normalised (the module divides by 0 there)", t)
		}
		for c := range channels {
			k[c*length+t] /= n
		}
	}
	return nil
}
