#!/usr/bin/python3
"""Time RTF kernel generation in PyTorch on the CPU, for comparison with
`go test ./analysis -run '^$' -bench RTFKernel` (D = 1024 channels, n = 64, L = 4096).

The computation is the state-free kernel of the RTF paper (Alg. 1) from the
trained, truncation-corrected coefficients (a, b~, h0): rfft of the zero-padded denominator
(1, a1..an) and numerator (0, b~1..b~n), divide, add h0, irfft. float64, like the Go code
(--float32 times the single-precision path too, for reference). Random Montel-constrained
denominators (sum |a_i| = 0.9), as the Go benchmark uses; the values do not change the time.

    /usr/bin/python3 bench/rtf_kernel_torch.py [--threads N] [--reps R] [--float32]

bench/rtf_kernel.sh runs the Go benchmark and this script one after the other and prints
both figures.
"""
import argparse
import statistics
import time

import torch

D, N, L = 1024, 64, 4096


def kernel(a, bt, h0, one, zero):
    A = torch.fft.rfft(torch.cat([one, a], dim=1), n=L, dim=-1)
    B = torch.fft.rfft(torch.cat([zero, bt], dim=1), n=L, dim=-1)
    return torch.fft.irfft(B / A + h0, n=L, dim=-1)


def time_kernel(dtype, reps):
    g = torch.Generator().manual_seed(1)
    a = torch.randn(D, N, dtype=dtype, generator=g)
    a = a * (0.9 / a.abs().sum(dim=1, keepdim=True))
    bt = torch.randn(D, N, dtype=dtype, generator=g)
    h0 = torch.randn(D, 1, dtype=dtype, generator=g)
    one = torch.ones(D, 1, dtype=dtype)
    zero = torch.zeros(D, 1, dtype=dtype)
    with torch.no_grad():
        for _ in range(3):
            kernel(a, bt, h0, one, zero)
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            kernel(a, bt, h0, one, zero)
            times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--float32", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, D={D} n={N} L={L}")
    dtypes = [torch.float64] + ([torch.float32] if args.float32 else [])
    for dt in dtypes:
        med, best = time_kernel(dt, args.reps)
        print(f"torch rfft/divide/irfft {str(dt).split('.')[-1]}: median {med * 1e3:.2f} ms, min {best * 1e3:.2f} ms per bank "
              f"({med * 1e6 / D:.1f} us/channel)")


if __name__ == "__main__":
    main()
