// Package figures draws what the workbench plots — impulse responses, magnitude, phase, group
// delay, poles and zeros, and the result of a distillation — as figures for papers and
// reports, in SVG, PDF or PNG, with gonum/plot.
//
// # Overview
//
// New builds a figure of one or more panels (Kind) for one filter or several overlaid
// (Series: a filters.Filter, or a raw kernel such as a distillation target); NewDistillation
// builds the one-figure summary of a distillation (target against fit per channel, the error
// per channel, the poles of the fits). All the numbers come from package analysis
// (Impulse, FreqResponse, GroupDelayOf, Zeros) and filters.Poles; this package only lays them
// out. A Figure is computed once and rendered any number of times by Render, which is cheap
// and deterministic.
//
// # Conventions
//
// As in analysis: discrete time, h[0] = D and h[t] = C·A^(t-1)·B; frequencies in radians per
// sample, drawn as ω/π ∈ [0, 1] (1 is the Nyquist frequency); magnitudes in dB
// (20·log₁₀|H|); the phase unwrapped along the grid, in units of π; the group delay in
// samples. The pole–zero panel has equal scales on both axes and the unit circle dashed; it
// shows roots up to |z| = 3 and counts the others in its title.
//
//   - Impulse: h[t] against t; with Options.Log, |h[t]| on a logarithmic axis that starts at
//     the smallest nonzero |h| (but at most LogFloor = 1e-16 below the largest), so that a
//     line to an exact zero dives out of the panel. Lengths of at most 64 samples get a
//     marker per sample.
//   - Magnitude: the axis spans at most DynamicRangeDB below the largest value, so that a
//     zero on the unit circle (analysis.MagFloorDB) does not flatten the rest.
//   - A series whose H is 0 at every frequency (the zero filter, or a response below
//     float64's range) is left out of the frequency panels, and one whose h is 0 at every
//     sample out of a log impulse panel, the panel's title saying so: their floors
//     (MagFloorDB, LogFloor) are not values.
//   - Frequency panels with Options.Log use a logarithmic frequency axis from ω = π/1000.
//   - A kernel (Series.Kernel) is an FIR filter: its spectrum is its DTFT
//     (analysis.KernelResponse) and its group delay the exact derivative of its phase,
//     Re(Σ t·h[t]·z⁻ᵗ / Σ h[t]·z⁻ᵗ) at z = e^{jω} (analysis.KernelGroupDelay); it has no
//     pole–zero panel (the panel shows the other series, and fails when there are none).
//     DelayOf gives the delay a panel draws, which the workbench shows too.
//
// # Determinism
//
// Rendering the same figure gives the same bytes: the fonts are the Liberation fonts embedded
// in gonum/plot, nothing depends on the clock (the PDF creation and modification dates, which
// the PDF library takes from the clock, are set to FixedDate) and nothing on map order. SVG
// files name their fonts (Liberation Serif) without embedding them; PDF files embed them.
// PDF text is limited to the Windows-1252 code page of gonum/plot's PDF backend, so text is
// written in ASCII there (ω/π becomes omega/pi; other characters outside ASCII become "?").
//
// # Errors
//
// Bad input (no series, an empty or non-finite kernel, an invalid filter, a pole–zero panel
// with nothing to draw) gives an error wrapping ErrInvalid; an unsupported file extension
// wraps ErrFormat; numerical failures are analysis's (*analysis.NonFiniteError for the
// overflowing response of an unstable filter, filters.ErrIllConditioned, …). An error of one
// series (one channel of a distillation) is a *SeriesError carrying its index and name, so
// that a caller can say which file it came from. Programmer errors (a negative option) panic
// with "figures: ".
//
// # References
//
// The responses drawn are those of the RTF paper, eq. 4 (the transfer function) and Algorithm 1
// (the kernel a distilled RTF is trained on); docs/maths.md explains each panel.
package figures
