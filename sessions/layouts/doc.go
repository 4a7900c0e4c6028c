// Package layouts reads and writes the layers of trained models in the parameter layouts of
// their reference code: each layout names its tensors, their shapes and the formula that makes
// the layer's convolution kernel from them, and this package turns those tensors into ssmlab
// filters (and filters back into tensors) with the kernels equal to what the model computes.
//
// # Overview
//
//   - Detect lists the layers among a file's arrays by their names (auto-detection); Find picks
//     one by layout and prefix; Import reads it as a bank of filters (or kernels).
//   - Export writes a bank in rtf or a modal layout (s4d, stripedhyena) under the names the
//     module's load_state_dict(strict=True) expects, or as second-order sections (sos).
//     ExportMIMO writes a whole multi-input multi-output layer (filters.MIMO, Result.MIMO
//     of an lru or s5 layer read) in the lru or s5 layout.
//   - Options are the settings a checkpoint does not record (discretisation, transforms, …),
//     each defaulting to the reference code's default; OptionList lists them for front ends.
//
// The layouts (docs/formats.md, "Model layouts", gives the names, shapes, formula and source
// file of each):
//
//	rtf           ruke1ire/RTF rtf.py (read and written by package sessions, which holds
//	              the truncation correction)
//	s4d           state-spaces/s4 SSMKernelDiag in FFTConv, and models/s4/s4d.py
//	s4            state-spaces/s4 SSMKernelDPLR (C̃ = C(I − Āᴸ) undone)
//	stripedhyena  togethercomputer/stripedhyena ParallelHyenaFilter (poles, residues, D)
//	hyena         HazyResearch/safari HyenaFilter (the implicit filter evaluated)
//	lru           NicolasZucchet/minimal-LRU
//	s5            lindermanlab/S5
//	rotrnn        the RotRNN paper's parametrisation (Appendix C's JAX listing)
//	sos           second-order sections in cascade (scipy.signal.sosfilt), a filter's
//	              layout rather than a model's layer
//
// # Conventions
//
// Every layer reads in ssmlab's control convention (filters package doc): layers that update
// their state before the output (S4, S4D, LRU, S5, RotRNN) are mapped exactly. A layer that
// keeps one member of each conjugate pair is read through filters.NewDiagonalRealPart, which
// adds the conjugates and merges a pair whose poles are real into one real mode.
// Multi-input multi-output layers (lru, s5, rotrnn) are read as banks of the single-input
// single-output slices the caller names (Options.Pairs), by default the diagonal.
//
// # Errors
//
// A missing or mis-shaped tensor gives an error wrapping ErrInvalid that names the tensor and
// the shape expected; a layer not found gives a *NotFoundError listing what was detected, and
// an ambiguous choice a *ChoiceError listing the candidates. The package reads through the
// Source interface and never touches files.
package layouts
