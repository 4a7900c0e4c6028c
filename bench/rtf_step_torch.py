#!/usr/bin/python3
"""Time one RTF training step in PyTorch on the CPU, for comparison with
`go test ./train -run '^$' -bench RTFStep` (D = 256 channels, n = 64, L = 4096).

The step is the state-free kernel of the RTF paper (seed 004 Alg. 1): rfft of the padded
denominator and numerator, divide, irfft, plus h0; an MSE loss against random targets;
backward through autograd; Adam. float64, like the Go backend.

    /usr/bin/python3 bench/rtf_step_torch.py [threads]
"""
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.set_num_threads(threads)
torch.manual_seed(0)
D, n, L = 256, 64, 4096
dtype = torch.float64

a = (torch.rand(D, n, dtype=dtype) * 2 - 1) * (3 / n) ** 0.5
b = (torch.rand(D, n, dtype=dtype) * 2 - 1) * (3 / n) ** 0.5
h0 = torch.zeros(D, 1, dtype=dtype)
for p in (a, b, h0):
    p.requires_grad_(True)
target = torch.randn(D, L, dtype=dtype) / torch.arange(1, L + 1, dtype=dtype)
opt = torch.optim.Adam([a, b, h0], lr=1e-3)
one = torch.ones(D, 1, dtype=dtype)
zero = torch.zeros(D, 1, dtype=dtype)


def step():
    opt.zero_grad(set_to_none=True)
    den = torch.fft.rfft(torch.cat([one, a], dim=1), n=L)
    num = torch.fft.rfft(torch.cat([zero, b], dim=1), n=L)
    k = torch.fft.irfft(num / den, n=L)
    k = torch.cat([k[:, :1] + h0, k[:, 1:]], dim=1)
    loss = ((k - target) ** 2).mean(dim=1).sum()
    loss.backward()
    opt.step()


for _ in range(3):
    step()
reps = 20
t0 = time.perf_counter()
for _ in range(reps):
    step()
dt = (time.perf_counter() - t0) / reps
print(f"torch {torch.__version__}, {threads} threads: RTF step D={D} n={n} L={L}: {dt * 1e3:.1f} ms/step")
