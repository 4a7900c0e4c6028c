// Package presets builds the filters users start from: the initialisations of the papers ssmlab
// follows (HiPPO and S4D, LRU, RotRNN, RTF, LDStack, Householder products), the classic
// digital filters of signal processing, and the Hyena implicit filter as a distillation target.
//
// # Overview
//
// Each preset is an entry of a registry (All, Lookup) with a name, a one-line description, the
// source it follows (paper and equation, or the textbook design) and typed parameters with
// defaults, ranges and help. Preset.New, or the package function New, parses parameter values
// written as a user writes them ("order" → "8", "wc" → "pi/4"), fills in the defaults, checks
// ranges and builds a Result: one filter, a bank of channels, or time-domain kernels. The
// command line (`ssmlab presets`, `ssmlab preset NAME`) and the terminal UI are thin layers over
// the registry; docs/presets.md describes every preset for users.
//
// The builders behind the presets are exported for use from Go: the continuous-time HiPPO
// matrices LegS, LegT, LagT and FouT; the S4D poles S4DLin, S4DInv and S4DReal; NewLRU and
// NewRotRNN with their parameters; RTFZeros (the random RTF initialisations are package rtf's
// Xavier and Montel); LDStackCompanion and LDStackUnit; HouseholderProduct and
// NewHouseholder; Butter, Cheby1, MovingAverage, Delay, Resonator, Comb and LeakyIntegrator;
// and Hyena.Kernels.
//
// # Conventions
//
// Every filter is discrete-time and in the control convention of package filters: h[0] = D,
// h[t] = C·A^(t-1)·B, frequencies in rad/sample, float64 throughout. The models that update the
// state before the output (LSSL/S4, S4D, LRU, RotRNN) are built in their own S4 convention,
// exactly as their papers write them, and mapped with filters.FromS4, so a preset's kernel is
// the model's kernel C·B̄, C·Ā·B̄, … from t = 0. Continuous-time presets (HiPPO, S4D) discretise
// with the chosen method (LSSL paper, eq. 3, or the zero-order hold) and keep C and D as S4 does.
// The skip connection D of the layers is not part of the kernel and is 0 in every preset.
//
// # Determinism
//
// Random presets draw from NewRand(seed), a PCG generator of math/rand/v2, in a documented
// order; the same seed and parameters give bit-identical filters from run to run (across
// architectures, Go's freedom to fuse multiply-adds may change the last bits). A bank's
// channels are drawn one after the other from the same source, and each channel of an S4-style
// bank draws its own Δt log-uniformly in [dt_min, dt_max] (LSSL paper, App. B.3).
//
// # Numerical choices
//
// The Butterworth and Chebyshev designs are computed in zero-pole-gain form, as
// scipy.signal.iirfilter does (analog prototype poles, frequency transform, bilinear transform
// with prewarping), never through polynomial coefficients: they are exact to rounding at any
// order, and the tests compare them with SciPy's values (testdata/golden/presets). The
// Householder products apply one reflection at a time and stay orthogonal to a few n·ε;
// RotRNN's P = expm(M - Mᵀ) stays orthogonal to about 1e-14 for heads up to 256 states.
//
// Some presets are exact in their own form but cannot be held accurately, or at all, in every
// other form. HiPPO-LagT's A is defective (one eigenvalue of multiplicity N), and the FIR
// presets (moving average, delay, feedforward comb, RTF zero initialisation) have every pole at
// z = 0: from order 2 on, none has a modal (diagonal) form, and converting them there fails
// with an error. The
// HiPPO and S4D filters have poles clustered near z = 1; their transfer-function and companion
// forms lose the poles (filters reports it). The HiPPO-FouT matrix of the S4 code carries a
// decoupled, uncontrollable state with eigenvalue 0; the preset drops it, so order N gives an
// N-1 state filter whose kernel is unchanged.
//
// # Errors
//
// An unknown preset gives an error wrapping ErrUnknownPreset that lists the presets; an unknown
// parameter, a malformed or out-of-range value, or values that contradict each other give an
// error wrapping ErrParam that names the parameter and what is accepted. Both are mistakes in
// what was asked for. Other errors from Build are numerical failures reported by package
// filters. Misuse of the Go API (reading an undeclared parameter from Args) panics.
//
// # References
//
// Sources cite the papers by short name (RTF paper, LSSL paper, RotRNN paper, Householder
// RNN paper, LDStack paper; docs/maths.md lists them in full) and equation. Other presets
// name their papers: S4D (Gu et al. 2022), LRU (Orvieto et al. 2023), HiPPO-FouT as in the S4 code
// (Gu et al. 2022), Hyena (Poli et al. 2023).
package presets
