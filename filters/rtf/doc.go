// Package rtf holds what is specific to the rational transfer function (RTF) parametrisation
// of state-space filters (RTF paper, see docs/maths.md): the truncation correction of the
// numerator and its inverse, the parameter layout of the reference implementation
// (ruke1ire/RTF, rtf.py, class RTF), its denominator constraint and its initialisations.
// The filters themselves are filters.TransferFunction values; this package adds what a
// training module does with their coefficients.
//
// # Conventions
//
// Channel c of a layer is
//
//	H(z) = h0 + (b₁z⁻¹ + … + bₙz⁻ⁿ) / (1 + a₁z⁻¹ + … + aₙz⁻ⁿ)   (RTF paper, eq. 4),
//
// with a and b stored without their leading a₀ = 1 and b₀ = 0, as in filters.TransferFunction.
// The companion realisation of eq. 16 (A's first row −a, ones on the subdiagonal, B = e₁,
// C = b, D = h0) gives the state-space quantities below.
//
// # Truncation correction
//
// The module computes its kernel by FFTs of length M of the zero-padded coefficients
// (Algorithm 1), which yields the M-periodic sum Σⱼ h[t + jM] of the impulse response, not
// h[t]. It therefore trains the corrected numerator b̃ = b(I − Aᴹ) of eq. 13, whose periodic
// sum is exactly h[t] for 1 ≤ t < M, and h[M] at t = 0 (the sum telescopes). Truncate
// computes b̃ (M steps of the companion recurrence; TruncateFold also returns h[M], which a
// layer's h_0 leaves out so that the module's FFT kernel, ModuleKernels, is h[t] at t = 0
// too; Fold computes it from b); Untruncate recovers b for recurrent inference, as the
// module's get_C does (here by the Neumann series Σₖ b̃·A^{kM} where it converges quickly,
// else LU on I − Aᴹ with iterative refinement, else the series on). The module's recurrent
// step then differs from its FFT kernel by h[M] at t = 0, as for any module trained with
// trunc_len. FFTLen gives M for a layer's trunc_len.
//
// # Spectra
//
// Spectra evaluates B̃/A at the roots of unity with the pruned power-of-two FFTs of
// internal/fft, and SpectraAny at any number of them with two real transforms: the step of
// Algorithm 1 that analysis.KernelPlan, the distillation's RTF model (package train) and
// Layer.ModuleKernels share.
//
// # Layout
//
// A Layer holds one RTF layer's parameters as the reference module stores them, for D
// channels of state size N:
//
//	ab      (num_a + D) × N   rows 0 … num_a−1: denominators a₁…a_N; rows num_a … num_a+D−1:
//	                          numerators b₁…b_N (b̃ when trained with trunc_len)
//	h_0     D                 direct terms (h0 − h[M] when trained with trunc_len)
//	scalar  num_a             only with the "l1_montel" constraint (see L1Montel)
//
// Channel c takes its denominator from row c/(D/num_a): num_a divides D, and num_a = D
// unless the layer shares denominators. A bidirectional layer's tensors read as 2·D
// channels, the last D of which the module applies backwards in time. FromBank builds a
// layer (num_a = D) from a bank and Layer.Bank reads one back; NameAB, NameH0 and NameScalar
// are the tensors' names in a state_dict (package sessions/layouts finds and checks layers in
// checkpoints).
//
// # Initialisations
//
// Xavier and Montel draw the reference implementation's xavier_init and montel_init; the
// paper's zero initialisation (eq. 18) is a = b = 0.
//
// # Errors
//
// Parameters that do not form a layer, and corrections that overflow (unstable filters),
// give errors wrapping filters.ErrInvalid. An inverse correction too ill-conditioned to
// trust gives a *filters.ConditionError carrying the condition number of I − Aᴹ and its
// limit. Programmer errors (mismatched slice lengths) panic with an "rtf: " message.
package rtf
