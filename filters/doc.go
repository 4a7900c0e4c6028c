// Package filters holds the representations of single-input single-output (SISO) linear
// time-invariant discrete-time filters used by ssmlab, and accurate conversions between them.
//
// # Conventions
//
// Time is discrete. A state-space filter follows the control (RTF) convention
//
//	x[t+1] = A x[t] + B u[t],   y[t] = C x[t] + D u[t],
//
// so its impulse response is h[0] = D and h[t] = C A^(t-1) B for t ≥ 1, and its transfer
// function is H(z) = D + C (zI - A)^(-1) B (RTF paper, eq. 4). The S4/LSSL convention updates the
// state before the output; FromS4 maps such a system exactly to this convention
// ((A, B, C, D) becomes (A, B, CA, CB + D); see docs/maths.md).
//
// Frequencies are in radians per sample: H(e^{jω}) for ω in [0, π]. Numbers are float64 and
// complex128 throughout. A real filter's complex poles, residues and zeros are stored in full
// (both members of each conjugate pair); conversions order poles (and zeros) by decreasing
// modulus, then by increasing |angle|, the member with a positive imaginary part first, so the
// two members of a pair are adjacent.
//
// Each Impulse sets to zero what has decayed below 2^-800 of the filter's scale (its input
// vector, numerator or residues) rather than run on subnormal numbers, which many processors
// compute slowly and where a decaying recurrence can stick (package underflow).
//
// # Representations
//
//   - Dense: (A, B, C, D) with A n×n.
//   - Diagonal (modal): poles λᵢ, residues rᵢ and h0; h[0] = h0, h[t] = Σ rᵢ λᵢ^(t-1).
//   - Companion: the controllable canonical form of the RTF paper, eq. 16 (first row -a, ones on the
//     subdiagonal, B = e₁, C = b, D = h0), or its transpose (observable) variant.
//   - Rotation: A = P·blockdiag(ρₖR(θₖ), …, real eigenvalues …)·P⁻¹ with
//     R(θ) = [[cos θ, -sin θ], [sin θ, cos θ]]; B and C act on the same state as A. Built from
//     a dense A, from RotRNN parameters (RotRNN paper, §3) or from Householder vectors (Householder RNN paper, eq. 6–8).
//   - TransferFunction (RTF paper, eq. 4): H(z) = h0 + (b₁z⁻¹+…+bₙz⁻ⁿ)/(1 + a₁z⁻¹+…+aₙz⁻ⁿ).
//   - ZPK: H(z) = h0 + k·Π(z - zᵢ)/Π(z - pᵢ), with no more zeros than poles.
//   - Continuous: a continuous-time (A, B, C, D) with a step Δt and a discretisation (bilinear,
//     ZOH, forward or backward Euler, GBT(α); the LSSL paper, eq. 3).
//   - Bank: many SISO channels of one form, the d_model layout of an RTF layer.
//
// Sections factors a zpk filter into real second-order sections in cascade, paired as
// scipy.signal.zpk2sos pairs them, and FromSections reads such a cascade back as a zpk filter.
//
// Order-0 filters (a pure gain h0) are valid in every form.
//
// # Fields, poles and files
//
// Each form is a Fielder: its Fields name and shape its numbers (the keys of its filter file,
// the tables of the workbench), WithFields builds it from them and WithEntry changes one
// entry, keeping conjugate pairs. The forms that hold their poles (zpk, diagonal, rotation)
// are PoleMovers, whose poles move in O(n); zpk is also a ZeroHolder. The forms whose
// FreqResponse does work of its own first (dense: A's Hessenberg reduction) are
// FreqPreparers, which do it once for a caller that asks for a few frequencies at a time.
// Front ends find these by type assertion, gonum/plot style, and need no switch over forms. Document is the content
// of a filter file, which package filters/filterfile reads and writes on streams: this
// package touches no file and nothing of the process.
//
// # Conversions and their accuracy
//
// Convert (and the To* functions) move a filter between forms and return a Report with a
// condition estimate and the measured relative L2 difference between the impulse responses of
// the input and the output, over a length chosen from the pole radius and the order
// (ReportLength) and doubled until both responses have decayed for good (Report.Length;
// MeasureDecay, which also measures analysis's effective memory, says why and how). The
// algorithms avoid polynomial root finding where the system allows it:
//
//   - poles are eigenvalues of A (LAPACK-style balanced QR iteration);
//   - zeros come from the zero dynamics of the state-space system (eigenvalues of a projected
//     closed loop, see zeros.go), not from the numerator polynomial;
//   - transfer-function coefficients come from evaluating det(I - A z⁻¹) and H(z) on the unit
//     circle through a Hessenberg reduction, followed by an inverse FFT. This is exact for a
//     polynomial of degree n sampled at more than n points, and its error is bounded by the
//     rounding of the samples; poly(eig(A)) as in SciPy's ss2tf loses accuracy quickly with n;
//   - diagonalisation refuses defective or nearly defective A, with an error carrying the
//     condition number of the eigenvector basis (ErrIllConditioned).
//
// Only the transfer-function and companion forms must root a polynomial to find their poles
// (the eigenvalues of the balanced companion matrix, refined by Newton steps while a residual
// is above Horner's rounding error), since the coefficients are all they have. The roots are
// backward stable, so tf → zpk reports the condition of the response to a componentwise
// relative perturbation ε of the coefficients (Higham, "Accuracy and Stability of Numerical
// Algorithms", ch. 5): κ = ‖(‖a‖₁|H| + ‖b‖₁)/|a|‖₂ / ‖H‖₂ over the unit circle, finite for
// multiple roots (whose members are off by ε^(1/m), but not the factor they make), about 1
// for the denominator zⁿ of an FIR filter, and large for poles clustered near the circle.
// Wilkinson's condition of each root, Σ|cₖ||r|ᵏ/|p′(r)|, is infinite for a multiple root and
// the mean of a cluster does not decide the response; rootcond.go and docs/maths.md say why.
//
// A form whose own response can carry a rounding error above MaxRelError is a
// RoundingEstimator (zpk: its stored roots and its cascade), and the report warns with its
// estimate, since the error measured is then the form's as much as the conversion's.
//
// # Errors
//
// Bad input (wrong dimensions, NaN or Inf, orders above MaxOrder) gives an error wrapping
// ErrInvalid. A conversion that cannot be done accurately gives an error wrapping ErrDefective
// or ErrIllConditioned with the number that decided it. Programmer errors panic.
package filters
