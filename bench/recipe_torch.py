#!/usr/bin/python3
"""The RTF paper's distillation recipe in PyTorch: the reference that README's Distillation
section times beside ssmlab's Go implementation of the same recipe (PaperSpec in
train/spec.go, timed by TestDistillQuality; TestRecipeMatchesTorch checks that both end at
the same error).

The recipe as the RTF paper's code parametrises it (its RTF module): one tensor `ab` holding
each channel's denominator a (monic term implied) and numerator b~, a scalar h_0 per
channel; the state-free kernel of the RTF paper, Alg. 1: rfft of (1, a_1..a_n) and
(0, b~_1..b~_n) zero-padded to L, divide, add h_0, irfft. Zero init (RTF paper, eq. 18),
no constraint, Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8), 2000 steps, loss the per-channel
mean squared error over the L samples, summed over the channels of a batch (so each
channel's gradient is its own, as in the Go code; a mean over channels would scale it by
1/channels and shift Adam's eps). Two differences from the reference's defaults, both to
match the Go recipe: h_0 starts at 0 (the reference draws it from randn; --h0-randn) and each
channel keeps its best parameters by relative error, checked every max(1, min(steps/200, 20))
steps as the Go trainer's chunks do (the last step's are printed too).

Deployment as ssmlab does it (RTF paper, eq. 13): numerator c = b~ (I - A^L)^-1 with A the
companion matrix of a, direct term k[0] (h_0 plus the sample the circular kernel folds onto
t = 0); the error is the relative L2 error of the deployed filter's first L samples
(scipy.signal.lfilter) against the target, averaged over the channels. float64 like the Go
code (--float32 also times single precision). One thread.

    /usr/bin/python3 bench/recipe_torch.py [--orders 4,8,16,32,64] [--channels 16]
        [--steps 2000] [--float32] [--h0-randn] [FILE.npy ...]

FILE.npy: (channels, L) arrays, `channels` rows spread evenly as the Go quality test picks
them; default the trained layers testdata/trained/copy-{fixed,drawn}-layer0.npy. The preset
sets of the quality table: SSMLAB_QUALITY_DUMP=DIR go test ./train -run QualityTargetsDump
writes them to DIR. Prints, per set and order, the process CPU time (time.process_time) of
the fit and deployment and the mean relative error.
"""
import argparse
import os
import sys
import time

# One thread in fact (see testdata/trained/train_hyena.py): set before torch loads.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np
import scipy.signal
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FILES = [os.path.join(HERE, "..", "testdata", "trained", f"copy-{t}-layer0.npy")
                 for t in ("fixed", "drawn")]


def load(path, channels):
    """channels rows of a (rows, L) .npy, spread evenly (train/quality_test.go's trainedFilters)."""
    a = np.load(path).astype(np.float64)
    if a.ndim != 2 or a.shape[0] < channels:
        raise SystemExit(f"{path}: shape {a.shape}, want (>= {channels}, L)")
    rows = a.shape[0]
    return a[[i * rows // channels for i in range(channels)]]


def kernel(ab, h_0, d, length):
    """The circular kernel of every channel: IFFT_L(B~/A) + h_0 (RTF paper, Alg. 1)."""
    col = ab.new_ones(2 * d, 1)
    col[d:] = 0  # monic denominators; numerators start at z^-1
    spec = torch.fft.rfft(torch.cat([col, ab], dim=1), n=length, dim=-1)
    return torch.fft.irfft(spec[d:] / spec[:d] + h_0[:, None], n=length, dim=-1)


def rel_errors(k, y):
    return torch.linalg.vector_norm(k - y, dim=-1) / torch.linalg.vector_norm(y, dim=-1)


def fit(y, n, steps, lr, h0_randn, seed):
    """Trains the recipe on targets y (d, L); returns the best and the last (ab, h_0)."""
    d, length = y.shape
    ab = torch.zeros(2 * d, n, dtype=y.dtype, requires_grad=True)
    h_0 = torch.zeros(d, dtype=y.dtype)
    if h0_randn:
        h_0 = torch.randn(d, dtype=y.dtype, generator=torch.Generator().manual_seed(seed))
    h_0.requires_grad_(True)
    opt = torch.optim.Adam([ab, h_0], lr=lr, betas=(0.9, 0.999), eps=1e-8)
    best_ab, best_h0 = ab.detach().clone(), h_0.detach().clone()
    best = torch.full((d,), float("inf"), dtype=y.dtype)
    track = max(1, min(steps // 200, 20))

    def consider(k):
        nonlocal best
        rel = rel_errors(k.detach(), y)
        better = rel < best  # NaN never is
        best = torch.where(better, rel, best)
        best_h0[better] = h_0.detach()[better]
        rows = torch.cat([better, better])
        best_ab[rows] = ab.detach()[rows]

    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        k = kernel(ab, h_0, d, length)
        loss = ((k - y) ** 2).mean(dim=-1).sum()
        if (step + 1) % track == 0:
            with torch.no_grad():
                consider(k)
        loss.backward()
        opt.step()
    with torch.no_grad():
        consider(kernel(ab, h_0, d, length))
    return (best_ab, best_h0), (ab.detach().clone(), h_0.detach().clone())


def deploy(ab, h_0, length):
    """The deployed filters' first `length` samples (float64): c = b~ (I - A^L)^-1 (RTF
    paper, eq. 13), D = k[0]; None for a channel whose I - A^L is singular."""
    ab, h_0 = ab.double(), h_0.double()
    d, n = ab.shape[0] // 2, ab.shape[1]
    a, bt = ab[:d], ab[d:]
    comp = torch.zeros(d, n, n, dtype=torch.float64)
    comp[:, 0] = -a
    comp[:, 1:, :-1] = torch.eye(n - 1, dtype=torch.float64)
    i_al = torch.eye(n, dtype=torch.float64) - torch.linalg.matrix_power(comp, length)
    # Row vector c with c (I - A^L) = b~: solve the transposed system.
    c = torch.linalg.solve(i_al.transpose(1, 2), bt)
    k0 = kernel(ab, h_0, d, length)[:, 0]
    impulse = np.zeros(length)
    impulse[0] = 1
    out = []
    for ch in range(d):
        den = np.concatenate([[1.0], a[ch].numpy()])
        num = np.concatenate([[0.0], c[ch].numpy()]) + k0[ch].item() * den
        with np.errstate(all="ignore"):
            out.append(scipy.signal.lfilter(num, den, impulse))
    return np.array(out)


def mean_error(h, y):
    e = np.linalg.norm(h - y, axis=-1) / np.linalg.norm(y, axis=-1)
    return float(np.mean(e)), int(np.sum(~np.isfinite(e)))


def max_radius(ab):
    d = ab.shape[0] // 2
    return max(float(np.max(np.abs(np.roots(np.concatenate([[1.0], a]))))) if a.any() else 0.0
               for a in ab[:d].double().numpy())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", default=DEFAULT_FILES)
    p.add_argument("--orders", default="4,8,16,32,64")
    p.add_argument("--channels", type=int, default=16)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--float32", action="store_true", help="also time single precision")
    p.add_argument("--h0-randn", action="store_true", help="h_0 drawn from randn (the reference's init)")
    args = p.parse_args()
    torch.set_num_threads(1)
    orders = [int(x) for x in args.orders.split(",")]
    dtypes = [torch.float64] + ([torch.float32] if args.float32 else [])
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, {args.channels} channels, "
          f"{args.steps} Adam steps, lr {args.lr}, h_0 init {'randn' if args.h0_randn else 'zero'}")
    print("set dtype n: CPU s (fit + deploy), mean rel. error deployed (best kept) [last step's], max pole radius")
    for path in args.files:
        name = os.path.splitext(os.path.basename(path))[0]
        y64 = torch.from_numpy(load(path, args.channels))
        for dt in dtypes:
            y = y64.to(dt)
            for n in orders:
                t0 = time.process_time()
                (ab, h_0), (ab_last, h0_last) = fit(y, n, args.steps, args.lr, args.h0_randn, n)
                h = deploy(ab, h_0, y.shape[1])
                took = time.process_time() - t0
                err, bad = mean_error(h, y64.numpy())
                last, _ = mean_error(deploy(ab_last, h0_last, y.shape[1]), y64.numpy())
                note = f", {bad} channels not finite" if bad else ""
                print(f"{name} {str(dt)[6:]} {n}: {took:.2f} s, {err:.6g} [{last:.3g}], "
                      f"radius {max_radius(ab):.4g}{note}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
