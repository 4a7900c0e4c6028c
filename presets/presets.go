package presets

import (
	"math"

	"github.com/ssmlab/ssmlab/filters"
)

// registry lists every preset, in the order listings show them: the papers' filters first
// (HiPPO and S4D, LRU, RotRNN, RTF, LDStack, Householder), then classic signal processing, then
// kernels.
var registry = []*Preset{
	{
		Name:        "hippo-legs",
		Description: "HiPPO-LegS (scaled Legendre) state matrix, discretised: the LSSL/S4 initialisation",
		Source:      "LSSL paper, App. B.2 and E.2 (Corollary D.8); Δt log-uniform per channel, App. B.3; discretisation eq. 3",
		Output:      "dense (bank of dense for channels > 1)",
		Params:      hippoParams(),
		Build: func(a Args) (Result, error) {
			am, b := LegS(a.Int("order"))
			return buildHiPPO(a, am, b)
		},
	},
	{
		Name:        "hippo-legt",
		Description: "HiPPO-LegT (translated Legendre, sliding window θ) state matrix, discretised",
		Source:      "LSSL paper, App. D.2.3, Corollary D.7 (and E.2); Δt as in App. B.3",
		Output:      "dense (bank of dense for channels > 1)",
		Params: hippoParams(Param{Name: "theta", Kind: Float, Default: "1", Min: 1e-6, Max: 1e6,
			Help: "window length θ (A and B scale as 1/θ; the S4 code's LegT is θ = 2)"}),
		Build: func(a Args) (Result, error) {
			am, b := LegT(a.Int("order"), a.Float("theta"))
			return buildHiPPO(a, am, b)
		},
	},
	{
		Name:        "hippo-lagt",
		Description: "HiPPO-LagT (translated generalised Laguerre) state matrix, discretised; defective A",
		Source:      "LSSL paper, App. D.3.4, Theorem 9 (and E.2); Δt as in App. B.3",
		Output:      "dense (bank of dense for channels > 1)",
		Params: hippoParams(
			Param{Name: "alpha", Kind: Float, Default: "0", Min: -1, Max: 100, OpenMin: true,
				Help: "Laguerre parameter α: B[n] = (Γ(n+α+1)/Γ(n+1))^½/Γ(α+1)"},
			Param{Name: "beta", Kind: Float, Default: "0", Min: -1, Max: 100, OpenMin: true,
				Help: "tilt β: the diagonal of A is -(1+β)/2"}),
		Build: func(a Args) (Result, error) {
			am, b := LagT(a.Int("order"), a.Float("alpha"), a.Float("beta"))
			return buildHiPPO(a, am, b)
		},
	},
	{
		Name:        "hippo-fout",
		Description: "HiPPO-FouT (translated Fourier) state matrix of the S4 code, discretised; order N gives N-1 states",
		Source:      "S4 reference code transition('fout') (Gu et al. 2022, How to Train Your HiPPO); Δt as in the LSSL paper, App. B.3",
		Output:      "dense (bank of dense for channels > 1)",
		Params:      hippoParams(),
		Build: func(a Args) (Result, error) {
			n := a.Int("order")
			if n%2 != 0 || n < 2 {
				return Result{}, paramErrorf(a.preset.Name, "order=%d must be even and at least 2: FouT pairs a cosine with a sine per frequency", n)
			}
			am, b := FouT(n)
			am, b = dropState(am, b, 1) // the decoupled, uncontrollable zero-frequency sine
			return buildHiPPO(a, am, b)
		},
	},
	{
		Name:        "s4d-lin",
		Description: "S4D-Lin diagonal initialisation λₙ = -1/2 + iπn, discretised (order N gives N-1 states: λ₀ is real)",
		Source:      "Gu et al. 2022, On the Parameterization and Initialization of Diagonal SSMs; Δt as in the LSSL paper, App. B.3",
		Output:      "diagonal (bank of diagonal for channels > 1)",
		Params:      s4dParams("zoh"),
		Build:       func(a Args) (Result, error) { return buildS4D(a, "lin") },
	},
	{
		Name:        "s4d-inv",
		Description: "S4D-Inv diagonal initialisation λₙ = -1/2 + i(N/π)(N/(2n+1) - 1), discretised",
		Source:      "Gu et al. 2022, On the Parameterization and Initialization of Diagonal SSMs; Δt as in the LSSL paper, App. B.3",
		Output:      "diagonal (bank of diagonal for channels > 1)",
		Params:      s4dParams("zoh"),
		Build:       func(a Args) (Result, error) { return buildS4D(a, "inv") },
	},
	{
		Name:        "s4d-real",
		Description: "S4D-Real diagonal initialisation λₙ = -(n+1), discretised",
		Source:      "Gu et al. 2022, On the Parameterization and Initialization of Diagonal SSMs; Δt as in the LSSL paper, App. B.3",
		Output:      "diagonal (bank of diagonal for channels > 1)",
		Params:      s4dParams("zoh"),
		Build:       func(a Args) (Result, error) { return buildS4D(a, "real") },
	},
	{
		Name:        "lru",
		Description: "LRU ring initialisation: |λ| in [r_min, r_max], phase in [0, max_phase], γ = √(1-|λ|²)",
		Source:      "Orvieto et al. 2023, Resurrecting Recurrent Neural Networks, §3 and App. A; related to RotRNN in the RotRNN paper (§4.1)",
		Output:      "diagonal (bank of diagonal for channels > 1)",
		Params: []Param{
			orderParam("16", 2, filters.MaxOrder, "real state size: order/2 complex modes and their conjugates (even)"),
			{Name: "r_min", Kind: Float, Default: "0.4", Min: 0, Max: 1, OpenMax: true, Help: "smallest pole radius"},
			{Name: "r_max", Kind: Float, Default: "0.99", Min: 0, Max: 1, OpenMax: true, Help: "largest pole radius"},
			{Name: "max_phase", Kind: Float, Default: "2pi", Min: 0, Max: 2 * math.Pi, Help: "largest pole angle in rad/sample"},
			channelsParam, seedParam,
		},
		Build: buildLRU,
	},
	{
		Name:        "rotrnn",
		Description: "RotRNN multi-head initialisation A = blockdiag(γₕPₕR(θₕ)Pₕᵀ), Pₕ = expm(Mₕ - Mₕᵀ), B normalised by ξ",
		Source:      "RotRNN paper, §3.1–3.4 (Lemma 1, eq. 11–13), App. B.3 and init_params of App. C",
		Output:      "rotation (bank of rotation for channels > 1)",
		Params: []Param{
			orderParam("16", 2, MaxDenseOrder, "state size (order/heads must be even)"),
			{Name: "heads", Kind: Int, Default: "2", Min: 1, Max: MaxDenseOrder / 2, Help: "number of heads H"},
			{Name: "gamma_min", Kind: Float, Default: "0.5", Min: 0, Max: 1, OpenMin: true, OpenMax: true, Help: "smallest decay γ"},
			{Name: "gamma_max", Kind: Float, Default: "0.999", Min: 0, Max: 1, OpenMin: true, OpenMax: true, Help: "largest decay γ"},
			{Name: "theta_max", Kind: Float, Default: "pi/10", Min: 0, Max: 2 * math.Pi, Help: "largest rotation angle θ in rad/sample"},
			channelsParam, seedParam,
		},
		Build: buildRotRNN,
	},
	{
		Name:        "rtf-zeros",
		Description: "RTF zero initialisation: a = b = 0, H(z) = h0",
		Source:      "RTF paper, §3.4 eq. 18 and App. B.2.7; reference implementation zeros_init",
		Output:      "tf (bank of tf for channels > 1)",
		Params:      rtfParams(false),
		Build:       func(a Args) (Result, error) { return buildRTF(a, "zeros") },
	},
	{
		Name:        "rtf-xavier",
		Description: "RTF xavier initialisation: a, b uniform in ±1/√n (may be unstable)",
		Source:      "RTF paper, App. B.2 and C.5.2 (Table 5); reference implementation xavier_init",
		Output:      "tf (bank of tf for channels > 1)",
		Params:      rtfParams(true),
		Build:       func(a Args) (Result, error) { return buildRTF(a, "xavier") },
	},
	{
		Name:        "rtf-montel",
		Description: "RTF Montel initialisation: a, b uniform in ±1/n, so Σ|aᵢ| ≤ 1 and the filter is stable",
		Source:      "RTF paper, §3.4 eq. 17, App. B.2.2 and C.3.1; reference implementation montel_init",
		Output:      "tf (bank of tf for channels > 1)",
		Params:      rtfParams(true),
		Build:       func(a Args) (Result, error) { return buildRTF(a, "montel") },
	},
	{
		Name:        "ldstack-companion",
		Description: "random companion initialisation: characteristic polynomial coefficients ~ N(0, 1/n), roots near the unit circle",
		Source:      "LDStack paper, §2.1 eq. 2 (Frobenius companion form) and §3 Initialization (Fig. 1)",
		Output:      "companion (bank of companion for channels > 1)",
		Params: []Param{
			orderParam("16", 1, filters.MaxOrder, "state size n"),
			channelsParam, seedParam,
		},
		Build: func(a Args) (Result, error) {
			rng := a.rng()
			n := a.Int("order")
			return channels(a, 2*n+1, func(int) (filters.Filter, error) { return LDStackCompanion(rng, n) })
		},
	},
	{
		Name:        "ldstack-unit",
		Description: "unit-circle initialisation: eigenvalue pairs radius·e^{±iθ}, θ uniform in (-2π, 2π) or van der Corput",
		Source:      "LDStack paper, §3 Parameterization and Initialization (Fig. 1, unit parameterisation)",
		Output:      "diagonal (bank of diagonal for channels > 1)",
		Params: []Param{
			orderParam("16", 2, filters.MaxOrder, "state size n (even: n/2 pairs)"),
			{Name: "radius", Kind: Float, Default: "1", Min: 0, Max: 1, OpenMin: true,
				Help: "pole radius (1 in the LDStack paper: marginally stable, poles on the unit circle)"},
			{Name: "angles", Kind: Choice, Default: "random", Choices: []string{"random", "vdc"},
				Help: "θ uniform in (-2π, 2π), or π times the base-2 van der Corput sequence"},
			channelsParam, seedParam,
		},
		Build: buildLDStackUnit,
	},
	{
		Name:        "householder",
		Description: "orthogonal transition W = H_n(u_n)…H_{n-m+1}(u_{n-m+1}) of m Householder reflections, A = radius·W",
		Source:      "Householder RNN paper, §4 eq. 6–8 (Theorem 1 for m = n)",
		Output:      "dense (bank of dense for channels > 1)",
		Params: []Param{
			orderParam("8", 1, MaxDenseOrder, "state size n"),
			{Name: "reflections", Kind: Int, Min: 1, Max: MaxDenseOrder, Help: "number of reflections m ≤ n (default: n)"},
			{Name: "radius", Kind: Float, Default: "0.99", Min: 0, Max: 1, OpenMin: true,
				Help: "scale of W: every pole has this modulus (1: the Householder RNN paper's orthogonal W, marginally stable)"},
			channelsParam, seedParam,
		},
		Build: buildHouseholder,
	},
	{
		Name:        "butter",
		Description: "Butterworth low/high/band-pass or band-stop filter, bilinear transform with prewarping",
		Source:      "textbook design as scipy.signal.butter(N, ωc/π, output='zpk'): analog prototype, frequency transform, bilinear transform",
		Output:      "zpk",
		Params:      iirParams(false),
		Build:       func(a Args) (Result, error) { return buildIIR(a, false) },
	},
	{
		Name:        "cheby1",
		Description: "Chebyshev type I low/high/band-pass or band-stop filter with passband ripple, bilinear with prewarping",
		Source:      "textbook design as scipy.signal.cheby1(N, rp, ωc/π, output='zpk'): analog prototype, frequency transform, bilinear transform",
		Output:      "zpk",
		Params:      iirParams(true),
		Build:       func(a Args) (Result, error) { return buildIIR(a, true) },
	},
	{
		Name:        "moving-average",
		Description: "moving average of length taps: h[t] = 1/length for t < length",
		Source:      "textbook FIR (Oppenheim & Schafer, Discrete-Time Signal Processing, §5)",
		Output:      "tf",
		Params: []Param{{Name: "length", Kind: Int, Default: "8", Min: 1, Max: filters.MaxOrder + 1,
			Help: "number of taps M (order M-1)"}},
		Build: func(a Args) (Result, error) {
			f, err := MovingAverage(a.Int("length"))
			return Result{Filter: f}, err
		},
	},
	{
		Name:        "delay",
		Description: "pure delay H(z) = z⁻ᵈ",
		Source:      "textbook FIR",
		Output:      "tf",
		Params: []Param{{Name: "d", Kind: Int, Default: "1", Min: 0, Max: filters.MaxOrder,
			Help: "delay in samples (the order)"}},
		Build: func(a Args) (Result, error) {
			f, err := Delay(a.Int("d"))
			return Result{Filter: f}, err
		},
	},
	{
		Name:        "resonator",
		Description: "two-pole resonator with poles r·e^{±iθ}, |H(e^{iθ})| = 1",
		Source:      "textbook design (J. O. Smith, Introduction to Digital Filters, Two-Pole resonator)",
		Output:      "tf",
		Params: []Param{
			{Name: "r", Kind: Float, Default: "0.9", Min: 0, Max: 1, OpenMin: true, OpenMax: true, Help: "pole radius"},
			{Name: "theta", Kind: Float, Default: "pi/4", Min: 0, Max: math.Pi, OpenMin: true, OpenMax: true,
				Help: "resonance frequency in rad/sample; a theta (or r) whose float64 coefficients miss the poles or |H(e^{iθ})| = 1 by more than 1e-6 is refused, naming the nearest workable value"},
		},
		Build: func(a Args) (Result, error) {
			r, theta := a.Float("r"), a.Float("theta")
			f, err := Resonator(r, theta)
			if err != nil {
				return Result{}, err
			}
			if flaw := ResonatorFlaw(f, r, theta); flaw != "" {
				return Result{}, resonatorLimitError(a.preset.Name, r, theta, flaw)
			}
			return Result{Filter: f}, nil
		},
	},
	{
		Name:        "comb",
		Description: "comb filter: feedback 1/(1 - g·z⁻ᵈ) or feedforward 1 + g·z⁻ᵈ",
		Source:      "textbook design (J. O. Smith, Physical Audio Signal Processing, comb filters)",
		Output:      "tf",
		Params: []Param{
			{Name: "d", Kind: Int, Default: "8", Min: 1, Max: filters.MaxOrder, Help: "delay in samples (the order)"},
			{Name: "g", Kind: Float, Default: "0.5", Min: -1, Max: 1, OpenMin: true, OpenMax: true, Help: "gain of the delayed path"},
			{Name: "kind", Kind: Choice, Default: "feedback", Choices: []string{"feedback", "feedforward"}, Help: "comb type"},
		},
		Build: func(a Args) (Result, error) {
			f, err := Comb(a.Int("d"), a.Float("g"), a.Choice("kind") == "feedback")
			return Result{Filter: f}, err
		},
	},
	{
		Name:        "leaky-integrator",
		Description: "first-order leaky integrator y[t] = λ·y[t-1] + (1-λ)·u[t]",
		Source:      "textbook one-pole low-pass (exponential moving average)",
		Output:      "tf",
		Params: []Param{{Name: "lambda", Kind: Float, Default: "0.9", Min: 0, Max: 1, OpenMax: true,
			Help: "pole λ (decay per sample)"}},
		Build: func(a Args) (Result, error) {
			f, err := LeakyIntegrator(a.Float("lambda"))
			return Result{Filter: f}, err
		},
	},
	{
		Name:        "hyena",
		Description: "Hyena implicit filter: sine-MLP of positional features times exponential decay, a distillation target",
		Source:      "Poli et al. 2023, Hyena Hierarchy §3.3 (safari HyenaFilter), the filters the RTF paper distils (§4.4, App. C.4) and replaces by RTFs in Hyena-RTF (App. C.5.2); docs/presets.md",
		Output:      "kernels",
		Params: []Param{
			{Name: "length", Kind: Int, Default: "1024", Min: 1, Max: 1 << 20, Help: "kernel length L"},
			{Name: "channels", Kind: Int, Default: "4", Min: 1, Max: MaxBankChannels, Help: "number of kernels (d_model)"},
			{Name: "emb_dim", Kind: Int, Default: "3", Min: 3, Max: 255, Help: "positional features: t and (emb_dim-1)/2 cosine/sine pairs (odd)"},
			{Name: "width", Kind: Int, Default: "16", Min: 1, Max: 1024, Help: "width of the MLP"},
			{Name: "depth", Kind: Int, Default: "2", Min: 0, Max: 16, Help: "inner width×width layers"},
			{Name: "w", Kind: Float, Default: "1", Min: 0, Max: 1e4, OpenMin: true, Help: "frequency of the sine activation sin(w·x)"},
			{Name: "fast_decay_pct", Kind: Float, Default: "0.3", Min: 0, Max: 1e3, OpenMin: true,
				Help: "fraction of L over which the fastest channel decays to target"},
			{Name: "slow_decay_pct", Kind: Float, Default: "1.5", Min: 0, Max: 1e3, OpenMin: true,
				Help: "fraction of L over which the slowest channel decays to target"},
			{Name: "target", Kind: Float, Default: "0.01", Min: 0, Max: 1, OpenMin: true, OpenMax: true, Help: "decay target"},
			{Name: "shift", Kind: Float, Default: "0", Min: -1e3, Max: 1e3, Help: "added to the modulation: exp(-t·|δ|) + shift"},
			seedParam,
		},
		Build: buildHyena,
	},
}
