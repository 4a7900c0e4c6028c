#!/usr/bin/python3
"""Measures what moving the poles of a reduced LRU layer would gain over ssmlab's balanced
truncation and least-squares refit of B and C (analysis.ReduceMIMO, analysis.RefitMIMO):
every parameter of the reduced layer (each pole by log(−log|μ|) and angle, so |μ| < 1, and
B, C) refined by L-BFGS on the finite-horizon squared error summed over the outputs, each
relative to its response, in closed form from the modes (Σ_{t<L} Re(x_t)Re(y_t) =
½ Re Σ_t (x_t y_t + x_t ȳ_t), each a Gram-weighted sum of geometric sums). A prototype for a
decision (docs/scale.md, "LRU, S5 and RotRNN layers"), not a part of ssmlab.

    go build -o /tmp/ssmlab . && /tmp/ssmlab distill testdata/trained/copy-drawn-lru.safetensors \
        --order 64 --length 1024 --dtype F64 -o /tmp/lru64.safetensors
    /usr/bin/python3 bench/mimo_pole_refine.py testdata/trained/copy-drawn-lru.safetensors \
        /tmp/lru64.safetensors [ITERATIONS]

Prints each layer's mean and worst per-output relative error before and after, the norm of
each output's response taken without D (the written layer keeps D), and the CPU seconds.
"""
import json
import os
import struct
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_default_dtype(torch.float64)
L = 1024
PREFIXES = ("layers_0.seq.", "layers_1.seq.")


def load_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    out = {}
    for k, v in json.loads(data[8:8 + n]).items():
        if k != "__metadata__":
            s, e = v["data_offsets"]
            dt = {"F32": np.float32, "F64": np.float64}[v["dtype"]]
            out[k] = np.frombuffer(data[8 + n + s:8 + n + e], dtype=dt).reshape(v["shape"]).astype(np.float64)
    return out


def lru_modes(d, p):
    """minimal-LRU's λ = exp(−exp(ν) + i·exp(θ)), B = γ·(B_re + i·B_im), C = C_re + i·C_im."""
    lam = np.exp(-np.exp(d[p + "nu_log"]) + 1j * np.exp(d[p + "theta_log"]))
    b = (d[p + "B_re"] + 1j * d[p + "B_im"]) * np.exp(d[p + "gamma_log"])[:, None]
    return torch.tensor(lam), torch.tensor(b), torch.tensor(d[p + "C_re"] + 1j * d[p + "C_im"])


def geometric(z):
    return (1 - z ** L) / (1 - z)


def inner(l1, b1, c1, l2, b2, c2):
    """Per output o: Σ_{i, t<L} Re(c1 l1ᵗ b1)_oi · Re(c2 l2ᵗ b2)_oi."""
    t1 = torch.einsum("oj,ok,jk->o", c1, c2, (b1 @ b2.T) * geometric(l1[:, None] * l2[None, :]))
    t2 = torch.einsum("oj,ok,jk->o", c1, c2.conj(), (b1 @ b2.conj().T) * geometric(l1[:, None] * l2.conj()[None, :]))
    return 0.5 * (t1 + t2).real


def errors(full, red):
    hh = inner(*full, *full)
    return torch.sqrt(torch.clamp(hh - 2 * inner(*full, *red) + inner(*red, *red), min=0) / hh)


def main():
    src, red = load_safetensors(sys.argv[1]), load_safetensors(sys.argv[2])
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    for p in PREFIXES:
        full, (lam, b, c) = lru_modes(src, p), lru_modes(red, p)
        before = errors(full, (lam, b, c))
        params = [torch.log(-torch.log(lam.abs())), torch.angle(lam), b.real, b.imag, c.real, c.imag]
        params = [x.clone().requires_grad_(True) for x in params]

        def layer():
            a, th, br, bi, cr, ci = params
            return torch.exp(-torch.exp(a)) * torch.exp(1j * th), torch.complex(br, bi), torch.complex(cr, ci)

        opt = torch.optim.LBFGS(params, lr=1, max_iter=iters, history_size=50, line_search_fn="strong_wolfe",
                                tolerance_grad=1e-12, tolerance_change=1e-15)

        def closure():
            opt.zero_grad()
            loss = (errors(full, layer()) ** 2).sum()
            loss.backward()
            return loss

        t0 = time.process_time()
        opt.step(closure)
        after = errors(full, layer()).detach()
        print(f"{p}: mean {before.mean():.4f} -> {after.mean():.4f}, worst {before.max():.4f} -> {after.max():.4f}"
              f" ({iters} iterations, {time.process_time() - t0:.1f} s)")


if __name__ == "__main__":
    main()
