package layouts

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The diagonal layouts: each channel's kernel is a sum of complex modes, K[t] = f·Re Σ c̃ₙ pₙᵗ
// (f = 2 where the layer keeps one member of each conjugate pair), plus a direct term added
// to K[0]. In ssmlab's convention (h[t] = Σ rᵢ pᵢ^(t−1)) that is the modal filter with poles
// pₙ, residues f·c̃ₙ·pₙ (conjugates implied) and h0 = D + f·Re Σ c̃ₙ, which
// filters.NewDiagonalRealPart builds, merging a mode whose pole is real.

func init() {
	impls[S4D] = s4dLayout{}
	impls[StripedHyena] = stripedHyenaLayout{}
	impls[LRU] = lruLayout{}
	impls[S5] = s5Layout{}
}

// modes is one channel's modes: K[t] = scale·Re Σ c[n]·p[n]^t.
type modes struct {
	p, c  []complex128
	scale float64
}

// filter returns the channel with the direct term d: the one-input one-output MIMO layer
// of B = c and C = scale, so that the pair formula has one home (MIMO.Channel).
//
// A mode of residue exactly 0 is left out: it adds nothing to K, and export pads a channel of
// fewer modes than the layer's state with such modes (C = 0), which read back as poles of the
// filter: an order-4 fit written beside a channel of 3 modes read back as order 5, with a
// pole at e^{-1} its response does not have.
func (m modes) filter(d float64) (*filters.Diagonal, error) {
	var p, b, c []complex128
	for n := range m.p {
		if m.c[n] != 0 {
			p, b, c = append(p, m.p[n]), append(b, m.c[n]), append(c, complex(m.scale, 0))
		}
	}
	l, err := filters.NewMIMO(p, b, c, []float64{d}, 1, 1)
	if err != nil {
		return nil, err
	}
	return l.Channel(0, 0)
}

// paramTransform is state-spaces/s4's param_transform (src/models/sequence/kernels/ssm.py).
func paramTransform(x float64, transform string) float64 {
	switch transform {
	case "exp":
		return math.Exp(x)
	case "relu":
		return math.Max(x, 0) + 1e-4
	case "sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "softplus":
		if x > 20 { // torch.nn.functional.softplus's threshold: linear beyond it
			return x
		}
		return math.Log1p(math.Exp(x))
	}
	return x
}

// dtTransformWarning says, where --dt-transform was not given, that an S4 or S4D layer's
// inv_dt were read with exp, the SSMKernel class's default, which the checkpoint does not
// record, while state-spaces/s4's layer configs (configs/model/layer/s4.yaml, which s4d.yaml
// extends) set softplus, and how far apart the two put the steps Δ (the kernels' phases then
// drift apart over the length); "" where they agree to 1e-6 (steps below about 2e-6).
func dtTransformWarning(o Options, inv []float64) string {
	if _, given := o.Values["dt-transform"]; given {
		return ""
	}
	worst, at := 0.0, 0
	for i, x := range inv {
		e := paramTransform(x, "exp")
		if d := math.Abs(e-paramTransform(x, "softplus")) / e; d > worst {
			worst, at = d, i
		}
	}
	if !(worst > 1e-6) {
		return ""
	}
	return fmt.Sprintf("inv_dt read with dt_transform exp, SSMKernel's default, which the checkpoint does not record; state-spaces/s4's layer configs (configs/model/layer/s4.yaml, which s4d.yaml extends) train with softplus, whose steps differ from exp's by up to %.2g relative (inv_dt entry %d): give --dt-transform softplus for a model trained with them (--dt-transform exp says the default is right)", worst, at)
}

// DtTransform is the dt transform an s4d layer written by Export with o assumes for its
// inv_dt (the option dt-transform, else SSMKernel's default exp), which the tensors cannot
// tell and a file's metadata can record; "" for the minimal variant, which stores log_dt.
func DtTransform(o Options) string {
	if o.get(S4D, "variant") == "minimal" {
		return ""
	}
	return o.get(S4D, "dt-transform")
}

// inverseTransform is param_transform's inverse, for export (inv_transform without its
// clamp at 1e-4).
func inverseTransform(p float64, transform string) (float64, error) {
	switch transform {
	case "exp":
		if p <= 0 {
			return 0, fmt.Errorf("%.6g is not positive, which the exp transform cannot hold", p)
		}
		return math.Log(p), nil
	case "softplus":
		if p <= 0 {
			return 0, fmt.Errorf("%.6g is not positive, which the softplus transform cannot hold", p)
		}
		if p > 20 {
			return p, nil
		}
		return math.Log(math.Expm1(p)), nil
	case "sigmoid":
		if p <= 0 || p >= 1 {
			return 0, fmt.Errorf("%.6g is outside (0, 1), which the sigmoid transform cannot hold", p)
		}
		return math.Log(p / (1 - p)), nil
	case "relu":
		if p < 1e-4 {
			return 0, fmt.Errorf("%.6g is below 1e-4, which the relu transform cannot hold", p)
		}
		return p - 1e-4, nil
	}
	return p, nil
}

// zohFactor returns (e^x − 1)/λ with x = Δ·λ, as Δ·φ₁(x) without cancellation for small x.
func zohFactor(x, lambda complex128, dt float64) complex128 {
	if cmplx.Abs(x) < 1e-3 {
		return complex(dt, 0) * (1 + x*(0.5+x*(1.0/6+x*(1.0/24+x/120))))
	}
	return (cmplx.Exp(x) - 1) / lambda
}

// negativeRealAngleTol is how far, in units of u·π for the tensors' unit roundoff u, Δ·Im A
// may lie from ±π for snapNegativeReal: A_imag's rounding (u·π) plus Δ's, inv_dt rounded and
// mapped by the dt transform (exp's relative error is u·|inv_dt|, a few u for the steps S4D
// trains).
const negativeRealAngleTol = 8

// snapNegativeReal returns the zoh mode of x = Δ·A (pole p = eˣ, kernel scale·Re(c·pᵗ)) as
// the real pole −|p| with the coefficient Re c where the module's kernel for it is that
// real pole's to the tensors' rounding u, else p and c as they are. Export writes a negative
// real pole as A = log|p| − iπ (S4 keeps Im A ≤ 0), and π rounded to float32 or bfloat16 is
// π − ε·sign: the module's pole is then −|p|·e^{∓iε}, a pair ε apart (two states) whose
// kernel 2·Re(c·pᵗ) the real pole's matches to rounding. The snap needs both that Δ·Im A is
// within negativeRealAngleTol·u·π of ±π and that, for a = −Re x > 0 (a stable pole), the
// kernel's departure from the real pole's, 2|pᵗ|·(|Re c|(1 − cos εt) + |Im c|·|sin εt|),
// is at most u·2|c| at every t: with max t·e^{−at} = 1/(e·a) and max t²·e^{−at} =
// (2/(e·a))², that is (2|Re c|·(εm)² + |Im c|·εm)/|c| ≤ u for m = 1/(e·a). A slow pole
// (a ≲ ε/√u) fails it: its pair's rotation shows within the kernel, as the module computes.
func snapNegativeReal(x, p, c complex128, u float64) (complex128, complex128) {
	eps := math.Abs(math.Abs(imag(x)) - math.Pi)
	a := -real(x)
	if !(a > 0) || c == 0 || eps > negativeRealAngleTol*u*math.Pi {
		return p, c
	}
	m := eps / (math.E * a)
	if dev := (2*math.Abs(real(c))*m*m + math.Abs(imag(c))*m) / cmplx.Abs(c); !(dev <= u) {
		return p, c
	}
	return complex(-math.Exp(-a), 0), complex(real(c), 0)
}

// roundoff is the coarsest unit roundoff among the dtypes of the named tensors (float64's
// where none is known): how finely the layer's parameters were stored.
func (t *tensors) roundoff(names ...string) float64 {
	u := arrays.Float64.UnitRoundoff()
	for _, n := range names {
		if in, ok := t.infos[t.prefix+n]; ok {
			if d, err := arrays.ParseDType(in.DType); err == nil {
				u = max(u, d.UnitRoundoff())
			}
		}
	}
	return u
}

// ---- S4D ----

type s4dLayout struct{}

func (s4dLayout) params() []string {
	return []string{"kernel.A_real", "kernel.log_A_real", "kernel.inv_dt", "kernel.log_dt", "kernel.A_imag", "kernel.B", "kernel.C"}
}

func (s4dLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	if _, dplr := in[p+"kernel.P"]; dplr {
		return Layer{}, false
	}
	if a := shapeOf(in, p+"kernel.log_A_real", 2); a != nil {
		l := Layer{Channels: a[0], Order: 2 * a[1], ComplexModes: a[1], DType: in[p+"kernel.log_A_real"].DType,
			Options: map[string]string{"variant": "minimal", "disc": "zoh"}}
		return l, true
	}
	a := shapeOf(in, p+"kernel.A_real", 2)
	if a == nil {
		return Layer{}, false
	}
	l := Layer{Order: 2 * a[1], ComplexModes: a[1], DType: in[p+"kernel.A_real"].DType,
		Options: map[string]string{"variant": "ssm", "disc": "zoh", "dt-transform": "exp", "real-transform": "exp", "imag-transform": "none"}}
	if _, ok := in[p+"kernel.A_imag"]; !ok {
		l.Order, l.ComplexModes = a[1], 0
		l.Options["is-real"] = "true"
	}
	var c []int
	if l.Options["is-real"] == "" {
		c = shapeOf(in, p+"kernel.C", 4)
	} else {
		c = shapeOf(in, p+"kernel.C", 3)
	}
	if c != nil {
		l.Channels = c[0] * c[1]
		// The variants the shapes tell (FFTConv and SSMKernel's constructor arguments), for
		// WriteBackVariant: Export writes C with as many rows as D, A and inv_dt per channel.
		if d := shapeOf(in, p+"D", 2); d != nil && c[0] == 2*d[0] {
			l.Options["bidirectional"] = "true"
		}
		if a[0] < c[1] {
			l.Options["n_ssm"] = fmt.Sprint(a[0])
		}
		if dt := shapeOf(in, p+"kernel.inv_dt", 2); dt != nil && dt[1] > 1 {
			l.Options["dt_tie"] = "false"
		}
	}
	return l, true
}

// readS4DInput reads an S4D layer's B and C (real or complex by isReal, for s SSMs of n2
// modes) and gives C's channels and H.
func readS4DInput(t *tensors, isReal bool, s, n2 int) (b, c *arrays.Array, chans, h int, err error) {
	cShape := []int{-1, -1, n2, 2}
	if isReal {
		b, err = t.get("kernel.B", "(1, n_ssm, N)", []int{s, n2})
		if err == nil {
			cShape = []int{-1, -1, n2}
			c, err = t.get("kernel.C", "(channels, H, N)", cShape)
		}
	} else {
		b, err = t.get("kernel.B", "(1, n_ssm, N/2, 2)", []int{s, n2, 2})
		if err == nil {
			c, err = t.get("kernel.C", "(channels, H, N/2, 2)", cShape)
		}
	}
	return b, c, cShape[0], cShape[1], err
}

// readS4DDirect reads an S4D layer's D, if it has one, for C's chans channels of H: its own
// channels, and whether C has twice as many (a bidirectional layer).
func readS4DDirect(t *tensors, chans, h int) (d *arrays.Array, dChans int, bidir bool, err error) {
	if !t.has("D") {
		return nil, chans, false, nil
	}
	dShape := []int{-1, h}
	if d, err = t.get("D", "(channels, H)", dShape); err != nil {
		return nil, 0, false, err
	}
	dChans = dShape[0]
	if chans == 2*dChans {
		return d, dChans, true, nil
	}
	if dChans != chans {
		return nil, 0, false, invalidf("the tensor %q has %d channels and %q %d: want equal (or twice as many in C, bidirectional)", t.prefix+"D", dChans, t.prefix+"kernel.C", chans)
	}
	return d, dChans, false, nil
}

func (s4dLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	if t.has("kernel.log_A_real") || o.Values["variant"] == "minimal" {
		if o.bool(S4D, "is-real") {
			return Result{}, invalidf("models/s4/s4d.py's S4D (variant minimal) has no is_real")
		}
		return readS4DMinimal(t, l, o)
	}
	disc := o.get(S4D, "disc")
	dtT, reT, imT := o.get(S4D, "dt-transform"), o.get(S4D, "real-transform"), o.get(S4D, "imag-transform")
	isReal := !t.has("kernel.A_imag") // the shapes tell, unless --is-real says
	if _, given := o.Values["is-real"]; given {
		isReal = o.bool(S4D, "is-real")
	}
	aShape := []int{-1, -1}
	aRe, err := t.get("kernel.A_real", "(n_ssm, N/2)", aShape)
	if err != nil {
		return Result{}, err
	}
	s, n2 := aShape[0], aShape[1]
	var aIm *arrays.Array
	if !isReal {
		if aIm, err = t.get("kernel.A_imag", "(n_ssm, N/2)", []int{s, n2}); err != nil {
			return Result{}, err
		}
	}
	b, c, chans, h, err := readS4DInput(t, isReal, s, n2)
	if err != nil {
		return Result{}, err
	}
	if h%s != 0 {
		return Result{}, invalidf("%d SSMs (A_real's rows) do not divide H = %d (C's second dimension)", s, h)
	}
	dtShape := []int{h, -1}
	inv, err := t.get("kernel.inv_dt", "(H, 1) or (H, N/2)", dtShape)
	if err != nil {
		return Result{}, err
	}
	if dtShape[1] != 1 && dtShape[1] != n2 {
		return Result{}, invalidf("the tensor %q has shape (%d, %d), want (H, 1) or (H, N/2) = (%d, 1) or (%d, %d)", t.prefix+"kernel.inv_dt", h, dtShape[1], h, h, n2)
	}
	d, dChans, bidir, err := readS4DDirect(t, chans, h)
	if err != nil {
		return Result{}, err
	}
	length := o.int(S4D, "length")
	if disc == "dss" && length == 0 {
		return Result{}, optionf("disc dss normalises the kernel by its length L: give --length L (the l_max the layer runs with)")
	}
	u := t.roundoff("kernel.A_imag", "kernel.inv_dt", "kernel.B", "kernel.C")
	scale := 2.0
	if disc == "dss" {
		scale = 1
	}
	var out []filters.Filter
	for ch := range chans {
		for hh := range h {
			ssm := hh % s // A and B are tiled: channel h uses SSM h mod n_ssm
			m := modes{scale: scale}
			for n := range n2 {
				dt := paramTransform(inv.Data[hh*dtShape[1]+min(n, dtShape[1]-1)], dtT)
				lam := complex(-paramTransform(aRe.Data[ssm*n2+n], reT), 0)
				var cb complex128
				if isReal {
					cb = complex(c.Data[(ch*h+hh)*n2+n]*b.Data[ssm*n2+n], 0)
				} else {
					lam -= complex(0, paramTransform(aIm.Data[ssm*n2+n], imT))
					cb = complexAt(c, (ch*h+hh)*n2+n) * complexAt(b, ssm*n2+n)
				}
				p, ct, err := discretizeMode(disc, lam, dt, length)
				if err != nil {
					return Result{}, fmt.Errorf("channel %d, mode %d: %w", ch*h+hh, n, err)
				}
				cm := cb * ct
				if disc == "zoh" && !isReal {
					p, cm = snapNegativeReal(complex(dt, 0)*lam, p, cm, u)
				}
				m.p = append(m.p, p)
				m.c = append(m.c, cm)
			}
			dv := 0.0
			if d != nil && ch < dChans {
				dv = d.Data[ch*h+hh]
			}
			f, err := m.filter(dv)
			if err != nil {
				return Result{}, fmt.Errorf("channel %d: %w", ch*h+hh, err)
			}
			out = append(out, f)
		}
	}
	bank, err := filters.NewBank(out)
	if err != nil {
		return Result{}, err
	}
	r := Result{Bank: bank, Note: t.note(fmt.Sprintf("bank of %s of %s (disc %s, dt_transform %s, S4 convention)", plural.Count(len(out), "diagonal channel"), orderText(bank), disc, dtT))}
	if w := dtTransformWarning(o, inv.Data); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if d == nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no %q: the direct term D is taken as 0", t.prefix+"D"))
	}
	if bidir {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the layer is bidirectional: channels %d–%d are its anti-causal kernels, which FFTConv applies flipped in time (without D)", len(out)/2, len(out)-1))
	}
	if s < h && chans == 1 && dtShape[1] == 1 && !isReal && (disc == "zoh" || disc == "bilinear") {
		r.Shared = readSharedModes(aRe, aIm, inv, s, h, reT, imT, dtT)
	}
	return r, nil
}

// readSharedModes returns the modes of an S4D layer's s SSMs (A_real and A_imag of (s, N/2))
// and the steps of its h channels (inv_dt of (h, 1)): what a fit that keeps the SSMs shared
// starts from (SharesModes).
func readSharedModes(aRe, aIm, inv *arrays.Array, s, h int, reT, imT, dtT string) *SharedModes {
	n2 := len(aRe.Data) / s
	m := &SharedModes{A: make([][]complex128, s)}
	for g := range s {
		for n := range n2 {
			m.A[g] = append(m.A[g], complex(-paramTransform(aRe.Data[g*n2+n], reT), -paramTransform(aIm.Data[g*n2+n], imT)))
		}
	}
	for hh := range h {
		m.Group = append(m.Group, hh%s)
		m.Dt = append(m.Dt, paramTransform(inv.Data[hh], dtT))
	}
	return m
}

// discretizeMode returns the discrete pole of s-plane pole λ with step dt and the factor
// c̃/(C·B) that multiplies its residue, as SSMKernelDiag.forward does for each disc
// (state-spaces/s4 src/models/sequence/kernels/ssm.py, lines 597–625).
func discretizeMode(disc string, lam complex128, dt float64, length int) (complex128, complex128, error) {
	x := complex(dt, 0) * lam
	switch disc {
	case "zoh":
		return cmplx.Exp(x), zohFactor(x, lam, dt), nil
	case "bilinear":
		den := 1 - x/2
		if den == 0 {
			return 0, 0, invalidf("the bilinear transform is singular at Δt·λ = 2")
		}
		return (1 + x/2) / den, complex(dt, 0) / den, nil
	case "dss":
		// K[l] = Re Σ C·B·num·r·e^{xl}, r = conj(X)/(|X|²+1e-7) with X = den·λ, and for
		// Re λ > 0 everything taken at −x and shifted by e^{−x(L−1)}.
		gt := real(lam) > 0
		xn := x
		if gt {
			xn = -x
		}
		num := cmplx.Exp(xn) - 1
		big := cmplx.Exp(xn*complex(float64(length), 0)) - 1
		xx := big * lam
		r := cmplx.Conj(xx) / complex(real(xx*cmplx.Conj(xx))+1e-7, 0)
		f := num * r
		if gt {
			f *= cmplx.Exp(-x * complex(float64(length-1), 0))
		}
		return cmplx.Exp(x), f, nil
	}
	return 0, 0, invalidf("unknown disc %q", disc)
}

func readS4DMinimal(t *tensors, l Layer, o Options) (Result, error) {
	shape := []int{-1, -1}
	aRe, err := t.get("kernel.log_A_real", "(H, N/2)", shape)
	if err != nil {
		return Result{}, err
	}
	h, n2 := shape[0], shape[1]
	aIm, err := t.get("kernel.A_imag", "(H, N/2)", []int{h, n2})
	if err != nil {
		return Result{}, err
	}
	c, err := t.get("kernel.C", "(H, N/2, 2)", []int{h, n2, 2})
	if err != nil {
		return Result{}, err
	}
	logDt, err := t.get("kernel.log_dt", "(H)", []int{h})
	if err != nil {
		return Result{}, err
	}
	var d *arrays.Array
	if t.has("D") {
		if d, err = t.get("D", "(H)", []int{h}); err != nil {
			return Result{}, err
		}
	}
	u := t.roundoff("kernel.A_imag", "kernel.log_dt", "kernel.C")
	out := make([]filters.Filter, h)
	for hh := range h {
		dt := math.Exp(logDt.Data[hh])
		m := modes{scale: 2}
		for n := range n2 {
			// A = −exp(log_A_real) + i·A_imag (models/s4/s4d.py, line 39).
			lam := complex(-math.Exp(aRe.Data[hh*n2+n]), aIm.Data[hh*n2+n])
			x := complex(dt, 0) * lam
			p, cm := snapNegativeReal(x, cmplx.Exp(x), complexAt(c, hh*n2+n)*zohFactor(x, lam, dt), u)
			m.p = append(m.p, p)
			m.c = append(m.c, cm)
		}
		dv := 0.0
		if d != nil {
			dv = d.Data[hh]
		}
		if out[hh], err = m.filter(dv); err != nil {
			return Result{}, fmt.Errorf("channel %d: %w", hh, err)
		}
	}
	bank, err := filters.NewBank(out)
	if err != nil {
		return Result{}, err
	}
	r := Result{Bank: bank, Note: t.note(fmt.Sprintf("bank of %s of %s (minimal S4D, zoh, S4 convention)", plural.Count(h, "diagonal channel"), orderText(bank)))}
	if d == nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no %q: the direct term D is taken as 0", t.prefix+"D"))
	}
	return r, nil
}

// ---- StripedHyena ----

type stripedHyenaLayout struct{}

func (stripedHyenaLayout) params() []string {
	return []string{"poles", "residues", "D", "short_filter_weight"}
}

func (stripedHyenaLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	ps, rs := shapeOf(in, p+"poles", 4), shapeOf(in, p+"residues", 4)
	if ps == nil || rs == nil {
		return Layer{}, false
	}
	l := Layer{Channels: ps[0], Order: 2 * ps[1], ComplexModes: ps[1], DType: in[p+"poles"].DType, Options: map[string]string{"short-filter": "false"}}
	if d := shapeOf(in, p+"D", 1); d != nil {
		l.Channels = d[0]
		if ps[0] < d[0] { // hyena_filter_groups > 1: WriteBackVariant
			l.Options["num_systems"] = fmt.Sprint(ps[0])
		}
	}
	return l, true
}

func (stripedHyenaLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	if o.bool(StripedHyena, "short-filter") {
		shape := []int{-1, 1, -1}
		w, err := t.get("short_filter_weight", "(3·hidden_size, 1, short_filter_length)", shape)
		if err != nil {
			return Result{}, err
		}
		// F.conv1d with padding L−1, cut to the input's length: y[t] = Σₖ w[k]·u[t−(L−1)+k],
		// so the kernel in time order is w reversed (engine.py step_fir: w[−1] multiplies u[t]).
		ch, n := shape[0], shape[2]
		k := make([]float64, ch*n)
		for c := range ch {
			for j := range n {
				k[c*n+j] = w.Data[c*n+n-1-j]
			}
		}
		a, err := arrays.New([]int{ch, n}, k)
		if err != nil {
			return Result{}, err
		}
		r := Result{Kernels: a, Note: t.note(fmt.Sprintf("%d short FIR kernels of length %d", ch, n))}
		if t.has("short_filter_bias") {
			r.Warnings = append(r.Warnings, "short_filter_bias is a constant added to the output, not part of the kernels: left out")
		}
		return r, nil
	}
	shape := []int{-1, -1, 1, 2}
	poles, err := t.get("poles", "(num_systems, state_size, 1, 2)", shape)
	if err != nil {
		return Result{}, err
	}
	s, n := shape[0], shape[1]
	res, err := t.get("residues", "(num_systems, state_size, 1, 2)", []int{s, n, 1, 2})
	if err != nil {
		return Result{}, err
	}
	hidden := s
	var d *arrays.Array
	if t.has("D") {
		dShape := []int{-1}
		if d, err = t.get("D", "(hidden_size)", dShape); err != nil {
			return Result{}, err
		}
		hidden = dShape[0]
	}
	if hidden%s != 0 {
		return Result{}, invalidf("%d systems do not divide hidden_size %d (D's length)", s, hidden)
	}
	group := hidden / s
	out := make([]filters.Filter, hidden)
	for c := range hidden {
		sys := c / group // h.repeat_interleave over the channels (model.py, ParallelHyenaFilter)
		m := modes{scale: 1}
		for k := range n {
			m.p = append(m.p, complexAt(poles, sys*n+k))
			m.c = append(m.c, complexAt(res, sys*n+k))
		}
		dv := 0.0
		if d != nil {
			dv = d.Data[c]
		}
		if out[c], err = m.filter(dv); err != nil {
			return Result{}, fmt.Errorf("channel %d: %w", c, err)
		}
	}
	bank, err := filters.NewBank(out)
	if err != nil {
		return Result{}, err
	}
	r := Result{Bank: bank, Note: t.note(fmt.Sprintf("bank of %s of %s (h[t] = Re Σ r·pᵗ, D added at t = 0)", plural.Count(hidden, "diagonal channel"), orderText(bank)))}
	if group > 1 {
		r.Note += fmt.Sprintf("; each of the %d systems serves %d channels", s, group)
	}
	if d == nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no %q: the direct term D is taken as 0", t.prefix+"D"))
	}
	return r, nil
}

// ---- LRU ----

type lruLayout struct{}

func (lruLayout) params() []string {
	return []string{"nu_log", "theta_log", "gamma_log", "B_re", "B_im", "C_re", "C_im", "D"}
}

func (lruLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	nu := shapeOf(in, p+"nu_log", 1)
	if nu == nil || shapeOf(in, p+"theta_log", 1) == nil {
		return Layer{}, false
	}
	l := Layer{Order: 2 * nu[0], ComplexModes: nu[0], DType: in[p+"nu_log"].DType, Options: map[string]string{}}
	if b := shapeOf(in, p+"B_re", 2); b != nil {
		l.Channels = b[1]
		l.Options["inputs"] = fmt.Sprint(b[1])
	}
	if c := shapeOf(in, p+"C_re", 2); c != nil {
		l.Options["outputs"] = fmt.Sprint(c[0])
	}
	return l, true
}

func (lruLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	nShape := []int{-1}
	nu, err := t.get("nu_log", "(d_hidden)", nShape)
	if err != nil {
		return Result{}, err
	}
	n := nShape[0]
	theta, err := t.get("theta_log", "(d_hidden)", []int{n})
	if err != nil {
		return Result{}, err
	}
	gamma, err := t.get("gamma_log", "(d_hidden)", []int{n})
	if err != nil {
		return Result{}, err
	}
	bShape := []int{n, -1}
	bRe, err := t.get("B_re", "(d_hidden, d_model)", bShape)
	if err != nil {
		return Result{}, err
	}
	ins := bShape[1]
	bIm, err := t.get("B_im", "(d_hidden, d_model)", []int{n, ins})
	if err != nil {
		return Result{}, err
	}
	cShape := []int{-1, n}
	cRe, err := t.get("C_re", "(d_model, d_hidden)", cShape)
	if err != nil {
		return Result{}, err
	}
	outs := cShape[0]
	cIm, err := t.get("C_im", "(d_model, d_hidden)", []int{outs, n})
	if err != nil {
		return Result{}, err
	}
	d, err := t.get("D", "(d_model)", []int{ins})
	if err != nil {
		return Result{}, err
	}
	// λ = exp(−exp(ν_log) + i·exp(θ_log)), B̃ = (B_re + i·B_im)·exp(γ_log), y = Re(C x) + D u
	// with x updated before the output (minimal-LRU lru/model.py, lines 84–93): the MIMO
	// form itself.
	lam := make([]complex128, n)
	bt := make([]complex128, n*ins)
	for k := range n {
		lam[k] = cmplx.Exp(complex(-math.Exp(nu.Data[k]), math.Exp(theta.Data[k])))
		g := complex(math.Exp(gamma.Data[k]), 0)
		for j := range ins {
			bt[k*ins+j] = complex(bRe.Data[k*ins+j], bIm.Data[k*ins+j]) * g
		}
	}
	ct := make([]complex128, outs*n)
	for i := range ct {
		ct[i] = complex(cRe.Data[i], cIm.Data[i])
	}
	m, err := filters.NewMIMO(lam, bt, ct, diagonalD(d.Data, outs, ins), ins, outs)
	if err != nil {
		return Result{}, err
	}
	bank, warn, err := mimoBank(LRU, o, m)
	if err != nil {
		return Result{}, err
	}
	return Result{Bank: bank, MIMO: m, Note: t.note(fmt.Sprintf("bank of %s of %s (S4 convention)", plural.Count(len(bank.Channels), "diagonal channel"), orderText(bank))),
		Warnings: []string{warn}, Pairs: []string{warn}}, nil
}

// ---- S5 ----

type s5Layout struct{}

func (s5Layout) params() []string {
	return []string{"Lambda_re", "Lambda_im", "B", "C", "C1", "C2", "D", "log_step"}
}

func (s5Layout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	lr := shapeOf(in, p+"Lambda_re", 1)
	if lr == nil || shapeOf(in, p+"Lambda_im", 1) == nil {
		return Layer{}, false
	}
	l := Layer{Order: 2 * lr[0], ComplexModes: lr[0], DType: in[p+"Lambda_re"].DType, Options: map[string]string{"disc": "zoh", "conj-sym": "true", "clip-eigs": "false", "step-rescale": "1"}}
	if b := shapeOf(in, p+"B", 3); b != nil {
		l.Channels = b[1]
		l.Options["inputs"] = fmt.Sprint(b[1])
	}
	if _, ok := in[p+"C1"]; ok {
		l.Options["bidirectional"] = "true"
	}
	if c := shapeOf(in, p+"C", 3); c != nil && c[1] == 2*lr[0] {
		// C_init complex_normal keeps a bidirectional layer's C1 and C2 side by side.
		l.Options["bidirectional"], l.Options["c-init"] = "true", "complex_normal"
	}
	return l, true
}

func (s5Layout) read(t *tensors, l Layer, o Options) (Result, error) {
	nShape := []int{-1}
	lr, err := t.get("Lambda_re", "(P)", nShape)
	if err != nil {
		return Result{}, err
	}
	n := nShape[0]
	li, err := t.get("Lambda_im", "(P)", []int{n})
	if err != nil {
		return Result{}, err
	}
	bShape := []int{n, -1, 2}
	b, err := t.get("B", "(P, H, 2)", bShape)
	if err != nil {
		return Result{}, err
	}
	ins := bShape[1]
	c, c2, err := s5OutputMatrices(t, n)
	if err != nil {
		return Result{}, err
	}
	outs, bidir := c.Shape[0], c2 != nil
	d, err := t.get("D", "(H)", []int{outs})
	if err != nil {
		return Result{}, err
	}
	step, err := t.get("log_step", "(P, 1)", []int{n, 1})
	if err != nil {
		return Result{}, err
	}
	disc := o.get(S5, "disc")
	if disc == "dss" {
		return Result{}, invalidf("disc dss is an S4D discretisation; S5 has zoh and bilinear")
	}
	scale := 1.0
	if o.bool(S5, "conj-sym") {
		scale = 2
	}
	rescale := o.float(S5, "step-rescale")
	// Λ̄, B̄ by discretize_zoh / discretize_bilinear, y = f·Re(C̃ x) + D u with x updated
	// before the output (lindermanlab/S5 s5/ssm.py, lines 11–42, 60–88, 152–247): the MIMO
	// form with B = B̄ and C = f·C̃.
	p := make([]complex128, n)
	bb := make([]complex128, n*ins)
	for k := range n {
		re := lr.Data[k]
		if o.bool(S5, "clip-eigs") {
			re = math.Min(re, -1e-4)
		}
		lam := complex(re, li.Data[k])
		dt := rescale * math.Exp(step.Data[k])
		var fac complex128
		if p[k], fac, err = discretizeMode(disc, lam, dt, 0); err != nil {
			return Result{}, fmt.Errorf("mode %d: %w", k, err)
		}
		for j := range ins {
			bb[k*ins+j] = fac * complexAt(b, k*ins+j)
		}
	}
	cc := make([]complex128, outs*n)
	for i := range cc {
		cc[i] = complex(scale, 0) * complexAt(c, i)
	}
	m, err := filters.NewMIMO(p, bb, cc, diagonalD(d.Data, outs, ins), ins, outs)
	if err != nil {
		return Result{}, err
	}
	bank, warn, err := mimoBank(S5, o, m)
	if err != nil {
		return Result{}, err
	}
	r := Result{Bank: bank, MIMO: m, Note: t.note(fmt.Sprintf("bank of %s of %s (%s, S4 convention)", plural.Count(len(bank.Channels), "diagonal channel"), orderText(bank), disc)),
		Warnings: []string{warn}, Pairs: []string{warn}}
	if bidir {
		// The pairs are the forward part's; the whole layer stacks the reverse scan's
		// outputs below (bidirectionalS5).
		if r.MIMO, err = bidirectionalS5(m, c2, scale); err != nil {
			return Result{}, err
		}
		w := "the layer is bidirectional: C1 (the forward scan) was read; C2 acts on the reverse scan, anti-causally, and was left out"
		if !t.has("C1") {
			w = fmt.Sprintf("the layer is bidirectional: C's first %d columns (the forward scan) were read; the next %d act on the reverse scan, anti-causally, and were left out", n, n)
		}
		r.Warnings, r.Pairs = append(r.Warnings, w), append(r.Pairs, w)
	}
	return r, nil
}

// s5OutputMatrices reads an S5 layer's C of n modes as (H, n, 2), and the reverse scan's C2
// of a bidirectional layer (nil otherwise): C1 and C2, or the halves of one C of (H, 2n, 2),
// as a module built with C_init complex_normal holds them (lindermanlab/S5 s5/ssm.py lines
// 183–203: C_tilde's first n columns act on the forward scan's states).
func s5OutputMatrices(t *tensors, n int) (c, c2 *arrays.Array, err error) {
	if t.has("C1") {
		shape := []int{-1, n, 2}
		if c, err = t.get("C1", "(H, P, 2)", shape); err != nil {
			return nil, nil, err
		}
		c2, err = t.get("C2", "(H, P, 2)", []int{shape[0], n, 2})
		return c, c2, err
	}
	shape := []int{-1, -1, 2}
	whole, err := t.get("C", "(H, P, 2), or (H, 2P, 2) for a bidirectional layer", shape)
	if err != nil {
		return nil, nil, err
	}
	h := shape[0]
	switch shape[1] {
	case n:
		return whole, nil, nil
	case 2 * n:
		c = &arrays.Array{Shape: []int{h, n, 2}, Data: make([]float64, h*n*2)}
		c2 = &arrays.Array{Shape: []int{h, n, 2}, Data: make([]float64, h*n*2)}
		for row := range h {
			copy(c.Data[row*2*n:(row+1)*2*n], whole.Data[row*4*n:row*4*n+2*n])
			copy(c2.Data[row*2*n:(row+1)*2*n], whole.Data[row*4*n+2*n:(row+1)*4*n])
		}
		return c, c2, nil
	}
	return nil, nil, invalidf("the tensor %q has shape %s: want (H, %d, 2), or (H, %d, 2) for a bidirectional layer (Lambda_re has %d states)", t.prefix+"C", arrays.ShapeString(whole.Shape), n, 2*n, n)
}

// bidirectionalS5 is the whole of a bidirectional S5 layer of forward part fwd (C = f·C1)
// and C2: y = f·Re(C1·x_fwd) + f·Re(C2·x_bwd) + D·u, x_bwd the reverse scan over the same
// Λ̄ and B̄, x_bwd[t] = Λ̄·x_bwd[t+1] + B̄·u[t] (lindermanlab/S5 s5/ssm.py: apply_ssm,
// lines 74–88, scans again with reverse=True and concatenates C1 and C2, lines 193–203;
// D ⊙ u once, lines 245–247). It is the MIMO layer of 2H outputs whose rows 0..H−1 are the
// forward outputs and H..2H−1 f·C2 with no D: row H+o's impulse response at lag k is the
// anti-causal kernel that output o applies to u[t+k], so each row's Markov sequence is one
// of the two kernels, and balanced truncation reduces both over the shared Λ̄ and B̄.
func bidirectionalS5(fwd *filters.MIMO, c2 *arrays.Array, scale float64) (*filters.MIMO, error) {
	h, n := fwd.Outputs, len(fwd.Poles)
	c := append(slices.Clone(fwd.C), make([]complex128, h*n)...)
	for i := range h * n {
		c[h*n+i] = complex(scale, 0) * complexAt(c2, i)
	}
	d := append(slices.Clone(fwd.D), make([]float64, h*fwd.Inputs)...)
	return filters.NewMIMO(fwd.Poles, fwd.B, c, d, fwd.Inputs, 2*h)
}
