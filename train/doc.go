// Package train fits filters to kernels and data: distillation of a long kernel (or a bank of
// them) into a rational transfer function (RTF), a modal SSM or a rotation SSM, and the
// system-identification and Delay tasks.
//
// # Models and their parameters
//
// Every model computes a kernel k[0..L-1] from a flat parameter vector per channel and the
// gradient of a loss with respect to those parameters, analytically:
//
//   - rtf: [a₁…aₙ, b̃₁…b̃ₙ, h0]. The kernel is the state-free FFT kernel of the RTF paper, Alg. 1,
//     k = IFFT_L(FFT_L(b̃)/FFT_L(a)) with k[0] += h0: the length-L circular kernel of the
//     rational function. b̃ is the truncated-kernel numerator of eq. 13, b̃ = b(I - A^L) in
//     companion coordinates; the fitted filter is deployed with b = b̃(I - A^L)⁻¹ and
//     D = h0 + k_circ[0], so its true first L impulse samples are the trained kernel. The
//     gradient goes back through the FFTs in closed form: with E = FFT(∂loss/∂k) and
//     G = B/A, ∂loss/∂b̃ = IFFT(E/Ā)[1..n] and ∂loss/∂a = -IFFT(E·Ḡ/Ā)[1..n].
//     For a power-of-two L the transforms are internal/fft's: a and b̃ share one pruned
//     forward transform, the kernel's inverse and E are real transforms of half length, and
//     the two gradient inverses travel as one complex transform pruned to outputs 0…n.
//     With the l1_montel constraint the parameters are n+1 raw values w and
//     a = w[:n]/Σ|wᵢ| (RTF paper, §B.2, eq. 17), which keeps every pole inside the unit circle.
//     The xavier and montel inits draw a and b̃ as the reference implementation does
//     (rtf.Xavier, rtf.Montel), with w[n] drawn as its constraint's scalar.
//   - modal: conjugate pole pairs λ = exp(-exp(ν) + iθ) with complex residues r, and real
//     poles λ = tanh(u) with real residues (Laughing Hyena's modal form, the RTF paper, §4.4):
//     [ν, θ, Re r, Im r] per pair, [u, r] per real pole, then h0. |λ| < 1 by construction.
//   - rotation: the same poles written as blocks ρR(θ) with input and output vectors
//     (b₁, b₂) and (c₁, c₂) per block: [ν, θ, b₁, b₂, c₁, c₂] per block, [u, b, c] per real
//     pole, then h0. Over-parametrised relative to modal, as a RotRNN layer is.
//
// # Real poles
//
// Spec.Poles real or positive makes a fit by variable projection place real poles only, for a
// deployment that holds no others: an S4D layer with is_real, whose poles are e^{Δ·A} with A
// real and negative, in (0, 1) (its zoh; its bilinear (1 + ΔA/2)/(1 − ΔA/2) goes through
// log, NaN for a negative pole, so positive there too). Every start's conjugate pairs become
// two real poles (poleStart.realOnly), the idle poles that pad a fit are real, and a positive
// pole is λ = rmax·(1 + tanh u)/2, in (0, rmax) for every u. The ladder's orders are fitted
// as ever, each from the one below, so no error rises with the order (FitLadder).
//
// # A zero kernel
//
// A channel whose kernel is zero at every sample is fitted by the zero filter at every
// order, not by variable projection: its poles idle at 0 (a = 0 for the rtf), its residues,
// numerator and h0 are +0 and its error 0 (zeroFit; docs/maths.md). A positive real-only
// fit's poles, which cannot be 0, idle in (0, 1/2) as a rank-limited fit's do. The recipes
// the optimiser trains deploy the same filter in their model's form (zeroFilter), whatever
// the optimiser made of the channel.
//
// # Shared modes
//
// FitShared fits a layer whose channels share their modes: poles exp(Δₕ·Aₙ) (or the
// bilinear transform's, SharedModes.Bilinear), Aₙ shared by the channels of a group (an S4
// or S4D layer's n_ssm SSMs) and Δₕ per channel, residues per channel. Each channel keeps its own variable projection; their Gauss–Newton systems are
// summed through the chain rule into one system for the modes and steps, which one
// Levenberg–Marquardt run moves (docs/maths.md, "Shared modes"). It fits the layer as a
// whole, on the CPU: the channels' systems on their own goroutines, summed in channel order.
//
// # Determinism and cancellation
//
// A job is deterministic for its seed: channels are independent (each has its own optimiser
// state) and are spread over goroutines without changing any arithmetic. Run checks its
// context between steps and returns ctx.Err() with no result when cancelled; nothing is
// written by this package.
//
// # Backends
//
// A Backend starts a Trainer for a Problem; the CPU backend here is the reference. On amd64
// with AVX2 its variable-projection sums over the samples run in assembly kernels that give
// the Go loops' results bit for bit (varpro_sums.go; the noasm build tag keeps them in Go);
// the dot products and multiply-adds of its QR, Lanczos runs and Gauss–Newton systems are
// package internal/vec's, fused and in one order on every machine. gonum's kernels, which run
// beside them (the Householder norms, its LAPACK), follow the noasm tag too: that build rounds
// differently, and its fits can end in other basins (the 35 quality cells' means 5% higher on
// S4 at n = 32, 11% lower at n = 64, and up to 1.6× apart at rounding level, 1e-8 to 1e-15).
// The GPU backend (GPU; DetectGPU says whether this machine has one) runs on CUDA, loaded at
// run time through purego (package train/cuda), so the binary needs neither cgo nor CUDA to
// build or to run without a GPU. The default distillation, variable projection, keeps its one
// Go driver and sends its sums over the samples to the device, every channel's requests in one
// launch (gpu_varpro.go). The rtf model's Adam recipe mirrors the CPU step by step: the kernel
// and its analytic gradient through batched cuFFT transforms, the loss, Adam with the
// schedule, the rollbacks and the radius check run in kernels of its own (gpu_kernels.go),
// with parameters, optimiser state and sums in float64 and the transforms in float32 (or
// float64 with GPU.Float64). The tests check both against the CPU backend on a real device
// (skipped without one: none has run yet), and everywhere else on an emulated one that runs
// the same kernel source as C++ on the CPU.
package train
