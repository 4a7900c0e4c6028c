// Package analysis computes what the workbench shows about a filter: impulse and step
// responses by four algorithms, frequency responses with magnitude, unwrapped phase and group
// delay, poles, zeros and the stability verdict, the H2 and H∞ norms, Hankel singular values,
// balanced truncation and minimal realisations of a filter.
//
// # Overview
//
// Every function takes a filters.Filter in any form and picks the algorithm that suits it:
// modal forms (diagonal, rotation, zpk) keep their poles, so their responses and Gramians cost
// O(n) per sample and O(n²) per Gramian; dense forms go through a Schur or Hessenberg
// reduction first. Functions change nothing they are given; slices returned are new unless a
// dst argument was passed, and a nil dst allocates. The package depends on filters and gonum
// only (no UI), so the TUI and the CLI share it.
//
// Impulse responses (Impulse, Step) come from four algorithms that agree to
// about 1e-12 relative on random stable systems up to n = 256 and L = 16384 (the tests check
// 1e-10, the bar):
//
//   - Recurrence: the form's own recurrence (state, difference equation, cascade, modal).
//   - FFT: the state-free kernel of the RTF paper, Algorithm 1, iFFT(FFT(b̃)/FFT(a)), with the
//     truncation correction b̃ = C(I - A^L) of eq. 13 (rtf.Truncate), which makes the
//     L-point kernel exact instead of aliased. KernelPlan generates kernels for a bank of RTF channels with the
//     pruned radix-4 FFT of internal/fft at power-of-two L (tested against gonum's
//     dsp/fourier), and with its real FFT (Bluestein's algorithm or FFTPACK) otherwise.
//   - Vandermonde: the modal sum Σ rᵢλᵢ^(t-1) with powers built in chunks from anchors in polar
//     form, accurate for |λ| near 1 (no λ^t by repeated pow, no t·eps drift).
//   - Scan: the diagonal recurrence as a parallel prefix scan (LDStack paper, Prop. 2).
//
// Recurrence and Vandermonde set to zero what has decayed below 2^-800 of the residues' scale
// rather than run on subnormal numbers (package underflow); Scan and FFT do not flush.
//
// Kernels (impulse responses given as samples, such as distillation targets) are FIR
// filters: KernelResponse evaluates their DTFT and KernelGroupDelay the exact derivative of
// its phase, which the workbench and the figures both show.
//
// LengthForRadius and AutoLength choose a length that shows the whole response,
// L ≈ log(tol)/log ρ, capped at MaxAutoLength; for a stable filter AutoLength also measures
// how long the response takes to fall for good below tol of its peak (the effective memory of
// Properties, measured over doubling windows by filters.MeasureDecay, the rule conversion
// reports use), which repeated poles and late starts make longer than the radius says.
//
// # Conventions
//
// As in filters: discrete time, x[t+1] = A x[t] + B u[t], y[t] = C x[t] + D u[t], so
// h[0] = D and h[t] = C·A^(t-1)·B; H(z) = D + C(zI - A)⁻¹B; frequencies in radians per sample,
// ω ∈ [0, π] (LinearGrid, LogGrid); float64 and complex128 throughout. Poles and zeros are
// returned in the filters package's order (largest modulus first, positive imaginary part
// first within a pair). A pole counts as on the unit circle when ||p| - 1| ≤
// filters.MarginalTol (1e-10) for the stability verdict, and a root of H when
// ||q| - 1| ≤ CircleTol (1e-8) for the group delay, whose zeros come from an eigenvalue
// problem and carry larger errors. Magnitudes are 20·log₁₀|H| dB; the phase is unwrapped
// along the grid as numpy.unwrap does; the group delay is in samples.
//
// No result holds NaN or ±Inf. A value that cannot be represented is either an error (a
// *NonFiniteError naming the first offending index, such as the overflowing impulse response
// of an unstable filter, or index −1 for a scalar such as the H2 norm of a stable filter of
// gain beyond float64; the FFT method, whose correction A^L overflows before the response,
// gives an *OverflowWithinError estimating that index) or a masked grid point with a Note saying why (a Response or
// GroupDelay at a pole or zero on the unit circle; a Response where |H| overflows float64
// with no pole there, Note.Overflow). Nor does a result hold samples that lost their
// accuracy: the FFT method on an unstable filter whose correction A^L has grown past
// filters.MaxRelError/ε times the numerator refuses (filters.ErrIllConditioned), as its
// rounding would swamp the response's first samples.
//
// # Poles on the unit circle
//
//   - FreqResponse: at a grid point that is a pole, H is infinite; H is stored as 0, the point
//     is masked with a "pole" Note, and MagDB holds the grid's largest finite value. A grid
//     point within 1e-12 of the pole counts as on it: rounding leaves H finite there
//     (e^{j·fl(π)} misses z = -1 by 1.2e-16, and 1/(z + 1) comes out -8.2e15j). Near such a
//     pole H is large and finite, as it is.
//   - GroupDelayOf: a pole or zero with ||q| - 1| ≤ CircleTol contributes exactly ±1/2, the
//     value of Re(z/(z - q)) on the circle away from q, so τ stays finite next to it; grid
//     points on it are masked and hold the two-sided limit. Where H evaluates to exactly 0
//     (a zero on the circle at a grid point, such as z = 1 at ω = 0), FreqResponse floors
//     MagDB at MagFloorDB and masks the point; elsewhere rounding leaves |H| tiny but nonzero
//     (about -320 dB) and the value is reported as it is.
//   - Classify, Analyze: Marginal, with the poles on the circle in Offending; Memory is -1; the
//     DC gain is infinite (DCFinite false) when a pole lies at z = 1.
//   - Impulse: every method works (the response neither decays nor grows) except FFT when a
//     pole lies on an FFT-length root of unity, such as z = 1 (an integrator), where
//     a(z) = 0: a *NonFiniteError (rtf.Untruncate then reports I - A^L as singular).
//   - H2, HankelSV, BalancedTruncation: the modes on the circle belong to the unstable part
//     (below).
//
// # Unstable filters
//
// Responses are defined and computed (they grow until they overflow, which is a
// *NonFiniteError); Stability is Unstable and Offending lists the poles outside. The H2 norm
// and the Gramians do not exist: H2 returns an *UnstableError (wrapping ErrUnstable) naming
// the poles on or outside the circle. HankelSV and BalancedTruncation split the filter
// additively, H = H_stable + H_unstable, through an ordered real Schur form and a Sylvester
// equation; the Hankel singular values are those of the stable part, the unstable poles are
// reported in HSV.Unstable and Reduced.Unstable, and balanced truncation keeps the unstable
// part exactly and reduces the stable part.
//
// # Order 0
//
// A filter of order 0 is the gain h0: its impulse response is (h0, 0, 0, …), its step response
// is constant, H is h0 at every ω (its phase 0 or π, its group delay 0, masked everywhere when
// h0 = 0), it has no poles or zeros, it is Stable with spectral radius 0 and Montel sum 0,
// its memory is 1 sample (0 when h0 = 0), its H2 norm is |h0|, it has no Hankel singular
// values, and it is its own minimal and reduced realisation.
//
// # Norms and reduction
//
// HInf samples |H(e^{jω})| on a uniform grid and around each pole's angle (the width of a
// pole's peak is its distance to the circle) and refines each local peak by golden-section
// search, evaluating H as FreqResponse does; it needs no Gramian, and no realisation in which
// clustered poles would round apart.
//
// The Gramians solve the Stein (discrete Lyapunov) equations A·P·Aᵀ - P + B·Bᵀ = 0 and
// Aᵀ·Q·A - Q + Cᵀ·C = 0 for their Cholesky factors directly, by Hammarling's method: one real
// Schur decomposition (none for the modal forms, whose Schur form is their block diagonal, nor
// for an A already in Schur form), its 2×2 blocks triangularised over the complex numbers, then
// a back-substitution that never forms P or Q (O(n³), O(n²) for the modal forms, whose states
// it takes in the order of complete pivoting; B may have several columns, for MIMO layers).
// B and C are scaled to unit norm first and the scales multiplied back at the end, so that a
// gain inside float64's range never overflows or underflows on the way (B = C = 1e-100 gives
// H2 7.7e-201, not 0); a result beyond that range (or below 4.9e-318, where float64 keeps
// fewer digits than filters.MaxRelError) is a *NonFiniteError that gives its size. H2 uses the
// closed form Σ rᵢ·conj(rⱼ)/(1 - λᵢ·conj(λⱼ)) for a diagonal filter, ‖Uᴴ·C‖ with P = U·Uᴴ
// otherwise. Hankel singular values and balanced truncation use the square-root method on the
// factors P = S·Sᵀ, Q = R·Rᵀ: σ are the singular values of Rᵀ·S, accurate where σᵢ is far
// below √ε·σ₁ (factoring a computed P would lose those: a 5×5 Jordan block at 0.99 has
// σ₅ = 5e-4·σ₁, layers of clustered modes 2e-21·σ₁). Where the Schur decomposition rounded A,
// its rounding (ε·‖A‖) can move the results of repeated or clustered poles near the unit
// circle much further; a first-order screen, and where it is not negligible the same
// computation on a perturbed A, estimates by how much, and above filters.MaxRelError the
// result is an *AccuracyError (whose Result holds it, for a caller that accepts it with that
// error). The error bound of balanced truncation counts each dropped σ with its estimated
// error. Minimal removes uncontrollable, then unobservable, states by an orthogonal staircase
// with a stated tolerance, and measures the error of what it removed as a conversion's report
// does (filters.CompareBanks: until both responses have decayed). ReduceMIMO applies the same square-root balanced truncation to a
// whole filters.MIMO layer (LRU, S5, RotRNN), the same factors with B and Cᵀ of several
// columns, and returns the reduced layer diagonalised again, with its Hankel singular values
// and error bound; RefitMIMO then refits its B and C by least squares over a length, its poles
// kept; ReduceMIMOWithin finds the smallest order within a tolerance.
//
// # Cost
//
// For the TUI's redraw, hold the filter in the diagonal form (convert once): the impulse
// response (Recurrence, L = 4096), the frequency response (1024 points) and filters.Poles of a
// diagonal filter of order 256 take about 2 ms on one core (BenchmarkInteractive). A dense A
// of the same order takes about 50 ms for its eigenvalues alone and O(n²) per sample.
//
// # Banks
//
// Every function takes one filter; run them over a filters.Bank's channels with
// filters.ForEachChannel. KernelPlan.Bank generates the kernels of an RTF layer with one
// workspace per goroutine.
//
// # Errors
//
// Programmer errors (a negative length, a dst of the wrong length, mismatched coefficient
// slices) panic with a message starting "analysis: ". Numerical failures return errors:
// *NonFiniteError, *OverflowWithinError, *UnstableError (errors.Is ErrUnstable), *AccuracyError (errors.Is
// filters.ErrIllConditioned) for a Gramian result the Schur form's rounding moves by more than
// filters.MaxRelError, a *filters.ConditionError for an
// ill-conditioned I - A^L, and the filters package's ErrDefective and ErrIllConditioned from
// the conversions a method needs (the modal methods cannot hold repeated poles).
//
// # References
//
// The papers are cited by short name; docs/maths.md ("The papers") lists them in full.
//
//   - RTF paper: Algorithm 1 and eqs. 8–15 (the kernel), eq. 13 (the truncation correction and
//     its inverse), eq. 16 (the companion realisation), eq. 17 (Montel's constraint).
//   - LDStack paper: Proposition 2 (parallel linear recurrences by scans).
//   - LSSL paper: the Krylov kernel K = (CB, CAB, …), which Impulse computes.
//   - R. H. Bartels and G. W. Stewart, Solution of the matrix equation AX + XB = C (1972);
//     S. J. Hammarling, Numerical solution of the stable, non-negative definite Lyapunov
//     equation (1982) for a B of several columns, and Numerical solution of the discrete-time,
//     convergent, non-negative definite Lyapunov equation (1991); J. Demmel, Accurate singular
//     value decompositions of structured matrices (1999) for the pivoted factors of the modal
//     forms' Cauchy-like Gramians; C. S. Kenney and A. J. Laub, Small-sample statistical
//     condition estimates for general matrix functions (1994);
//     A. J. Laub et al., Computation of system balancing transformations (1987) for the
//     square-root method; the discrete-time bound ‖H - H_r‖_∞ ≤ 2·Σ_{i>r} σᵢ (U. M. Al-Saggaf
//     and G. F. Franklin, An error bound for a discrete reduced order model of a linear
//     multivariable system, 1987; after B. C. Moore 1981 and D. Enns 1984 in continuous time).
package analysis
