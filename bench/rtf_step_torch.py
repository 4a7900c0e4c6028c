#!/usr/bin/python3
"""Time one RTF training step in PyTorch, for comparison with
`go test ./train -run '^$' -bench RTFStep` (the CPU backend: D = 256 channels, n = 64,
L = 4096, float64) and, on a machine with a GPU, `-bench GPUStep` (the GPU backend, both
precisions, the same bank and two more).

The step is the state-free kernel of the RTF paper (Alg. 1): rfft of the padded
denominator and numerator, divide, irfft, plus h0; an MSE loss against random targets;
backward through autograd; Adam.

    /usr/bin/python3 bench/rtf_step_torch.py [threads]
    python3 bench/rtf_step_torch.py --device cuda --dtype float32 [--channels D --order n --length L]
"""
import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("threads", nargs="?", type=int, default=2, help="CPU threads (torch.set_num_threads)")
ap.add_argument("--device", default="cpu", help="cpu or cuda")
ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
ap.add_argument("--channels", type=int, default=256)
ap.add_argument("--order", type=int, default=64)
ap.add_argument("--length", type=int, default=4096)
args = ap.parse_args()

threads = args.threads
torch.set_num_threads(threads)
torch.manual_seed(0)
D, n, L = args.channels, args.order, args.length
dtype = getattr(torch, args.dtype)
dev = torch.device(args.device)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


a = ((torch.rand(D, n, dtype=dtype) * 2 - 1) * (3 / n) ** 0.5).to(dev)
b = ((torch.rand(D, n, dtype=dtype) * 2 - 1) * (3 / n) ** 0.5).to(dev)
h0 = torch.zeros(D, 1, dtype=dtype, device=dev)
for p in (a, b, h0):
    p.requires_grad_(True)
target = (torch.randn(D, L, dtype=dtype) / torch.arange(1, L + 1, dtype=dtype)).to(dev)
opt = torch.optim.Adam([a, b, h0], lr=1e-3)
one = torch.ones(D, 1, dtype=dtype, device=dev)
zero = torch.zeros(D, 1, dtype=dtype, device=dev)


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
sync()
t0 = time.perf_counter()
for _ in range(reps):
    step()
sync()
dt = (time.perf_counter() - t0) / reps
where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"{threads} threads"
print(f"torch {torch.__version__}, {where}: RTF step D={D} n={n} L={L} {args.dtype}: {dt * 1e3:.3f} ms/step")
