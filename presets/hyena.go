package presets

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Hyena describes the implicit long filter of the Hyena operator (Poli et al., "Hyena
// hierarchy", 2023, §3.3; the HyenaFilter class of the safari code that the RTF paper, §4.4 and
// App. C.4, distils into RTFs, and App. C.5.2 replaces by RTFs in Hyena-RTF). It is a kernel, not a state-space model: an MLP with sine activations maps
// positional features of t = 0 … L-1 to one value per channel, and an exponential decay
// modulates each channel. docs/presets.md spells out the recipe.
type Hyena struct {
	Length   int     // L, the number of kernel samples
	Channels int     // d_model, one kernel per channel
	EmbDim   int     // features per position: t, then cos and sin at (EmbDim-1)/2 frequencies; odd, ≥ 3
	Width    int     // width of the MLP (the "order" of the safari code)
	Depth    int     // inner width×width layers (num_inner_mlps)
	W        float64 // frequency of the sine activation sin(W·x)
	// The modulation exp(-t·|δ_c|) + Shift for t in [0, 1], with δ_c spaced evenly from
	// ln(Target)/SlowDecayPct (channel 0, slowest) to ln(Target)/FastDecayPct (last channel).
	FastDecayPct, SlowDecayPct, Target, Shift float64
}

// DefaultHyena returns the defaults of the safari HyenaFilter (emb_dim 3, order 16, two inner
// layers, w = 1, fast and slow decay at 30 % and 150 % of the length to 1 %, no shift).
func DefaultHyena(length, channels int) Hyena {
	return Hyena{Length: length, Channels: channels, EmbDim: 3, Width: 16, Depth: 2, W: 1,
		FastDecayPct: 0.3, SlowDecayPct: 1.5, Target: 1e-2}
}

// Kernels draws the MLP weights from rng (PyTorch's nn.Linear initialisation: weights and
// biases uniform in ±1/√fan_in, layer by layer, weights row by row, then the biases) and
// returns kernels[c][t], channel c's kernel at time t.
func (h Hyena) Kernels(rng *rand.Rand) ([][]float64, error) {
	if h.Length < 1 || h.Channels < 1 || h.Width < 1 || h.Depth < 0 || h.EmbDim < 3 || h.EmbDim%2 == 0 {
		return nil, fmt.Errorf("presets: Hyena sizes L=%d channels=%d width=%d depth=%d emb_dim=%d (want L, channels, width ≥ 1, depth ≥ 0, odd emb_dim ≥ 3)",
			h.Length, h.Channels, h.Width, h.Depth, h.EmbDim)
	}
	type layer struct {
		w    [][]float64 // out × in
		b    []float64   // nil for the last layer
		sine bool
	}
	newLayer := func(in, out int, bias, sine bool) layer {
		s := 1 / math.Sqrt(float64(in))
		l := layer{w: make([][]float64, out), sine: sine}
		for i := range l.w {
			l.w[i] = uniforms(rng, in, -s, s)
		}
		if bias {
			l.b = uniforms(rng, out, -s, s)
		}
		return l
	}
	layers := []layer{newLayer(h.EmbDim, h.Width, true, true)}
	for range h.Depth {
		layers = append(layers, newLayer(h.Width, h.Width, true, true))
	}
	layers = append(layers, newLayer(h.Width, h.Channels, false, false))

	// Positional features (PositionalEmbedding): t normalised to [0, 1], and e^{-i f w} with
	// w = 2πl/L at bands frequencies f spaced evenly from 1e-4 to bands-1.
	bands := (h.EmbDim - 1) / 2
	freqs := make([]float64, bands)
	for k := range freqs {
		freqs[k] = 1e-4
		if bands > 1 {
			freqs[k] = 1e-4 + float64(k)*(float64(bands-1)-1e-4)/float64(bands-1)
		}
	}
	deltas := make([]float64, h.Channels)
	minDecay, maxDecay := math.Log(h.Target)/h.SlowDecayPct, math.Log(h.Target)/h.FastDecayPct
	for c := range deltas {
		deltas[c] = minDecay
		if h.Channels > 1 {
			deltas[c] = minDecay + float64(c)*(maxDecay-minDecay)/float64(h.Channels-1)
		}
	}

	out := make([][]float64, h.Channels)
	for c := range out {
		out[c] = make([]float64, h.Length)
	}
	for l := 0; l < h.Length; l++ {
		t := 0.0
		if h.Length > 1 {
			t = float64(l) / float64(h.Length-1)
		}
		w := 2 * math.Pi * float64(l) / float64(h.Length)
		x := make([]float64, h.EmbDim)
		x[0] = t
		for k, f := range freqs {
			x[1+k] = math.Cos(f * w)
			x[1+bands+k] = -math.Sin(f * w)
		}
		for _, ly := range layers {
			y := make([]float64, len(ly.w))
			for i, row := range ly.w {
				s := 0.0
				for j, v := range row {
					s += v * x[j]
				}
				if ly.b != nil {
					s += ly.b[i]
				}
				if ly.sine {
					s = math.Sin(h.W * s)
				}
				y[i] = s
			}
			x = y
		}
		for c := range out {
			out[c][l] = x[c] * (math.Exp(-t*math.Abs(deltas[c])) + h.Shift)
		}
	}
	return out, nil
}

// maxHyenaWork caps the multiply-adds of one preset build, a few seconds of work.
const maxHyenaWork = 1 << 31

// work is the number of multiply-adds Kernels performs.
func (h Hyena) work() float64 {
	w := float64(h.Width)
	return float64(h.Length) * (float64(h.EmbDim)*w + float64(h.Depth)*w*w + w*float64(h.Channels))
}

func buildHyena(a Args) (Result, error) {
	h := Hyena{Length: a.Int("length"), Channels: a.Int("channels"), EmbDim: a.Int("emb_dim"),
		Width: a.Int("width"), Depth: a.Int("depth"), W: a.Float("w"),
		FastDecayPct: a.Float("fast_decay_pct"), SlowDecayPct: a.Float("slow_decay_pct"),
		Target: a.Float("target"), Shift: a.Float("shift")}
	if h.EmbDim%2 == 0 {
		return Result{}, paramErrorf(a.preset.Name, "emb_dim=%d must be odd: t, then a cosine and a sine per frequency", h.EmbDim)
	}
	if h.Length*h.Channels > MaxBankValues {
		return Result{}, paramErrorf(a.preset.Name, "length=%d × channels=%d is above the limit of %d numbers", h.Length, h.Channels, MaxBankValues)
	}
	if work := h.work(); work > maxHyenaWork {
		return Result{}, paramErrorf(a.preset.Name, "length=%d with width=%d, depth=%d and channels=%d takes %.2g multiply-adds, above the limit of %.2g (seconds of work): use a smaller MLP or length",
			h.Length, h.Width, h.Depth, h.Channels, work, float64(maxHyenaWork))
	}
	k, err := h.Kernels(a.rng())
	if err != nil {
		return Result{}, err
	}
	return Result{Kernels: k}, nil
}
