"""Checks a bidirectional S4D layer ssmlab distill wrote back, as the target module runs it.

Run:  /usr/bin/python3 testdata/scale/check_bidirectional.py INPUT OUTPUT

INPUT holds one bidirectional S4D layer (kernel.C of (2, H, N/2, 2), D of (1, H)), OUTPUT is
what ssmlab distill wrote of it (its manifest is OUTPUT.manifest.json). The input layer is run
as FFTConv(bidirectional=True) does (state-spaces/s4 src/models/sequence/kernels/fftconv.py,
FFTConv.forward): the kernel's channels are split '(s c)' with s = 2, the first half causal,
the second anti-causal; the two-sided kernel pad(k0, (0, L)) + pad(k1.flip(-1), (L, 0)) is
applied by an FFT of 2L, so k1[j] multiplies x[t + 1 + j], and D (of H, not 2H) is added to
the output. The output layer is run as RTF(d_model=H, bidirectional=True) with num_a = H
does (ruke1ire/RTF rtf.py, RTF.__init__, get_k and forward): ab of ((1 + 1)(H + H), N), its
first 2H rows the denominators and the next 2H the numerators, h_0 of 2H, both in the order
causal channels then anti-causal ones; get_k adds h_0 to every kernel (the anti-causal ones
too) and concatenates k[:H] with k[H:].flip(-1), which forward applies by an FFT of 2L, with
no other direct term. The RTF kernels are those of check_distilled.rtf_kernel (get_k's
kernel for trunc_len L, its fold of h[M] onto t = 0 included, docs/scale.md; each of the 2H
kernels has its own h_0, so each half is exact).

It prints JSON: whether the written tensors have the shapes that module loads, per channel
(causal 0..H-1, anti-causal H..2H-1) the relative L2 error of the kernel the RTF module's
convolution applies against the one FFTConv applies, both read off their outputs for unit
impulses at t = 0 (causal) and t = L - 1 (anti-causal: lags 1..L-1), the ratio of an
anti-causal kernel's norm over L samples to its norm over the L - 1 that reach the output,
the manifest's rel_error and read_back_error, and the relative error of the outputs for a
random input.
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_distilled  # noqa: E402
import gen_layouts  # noqa: E402  (check_distilled put testdata/layouts on the path)


def conv_two_sided(k0, k1, x):
    """y = the linear convolution of x (H, L) with the two-sided kernel whose lags 0..L-1 are
    k0 (H, L) and whose lag -m is k1[m - 1], by an FFT of 2L."""
    L = x.shape[-1]
    k = torch.cat((k0, k1.flip(-1)), dim=-1)  # (H, 2L): lags 0..L-1, then -L..-1
    y = torch.fft.irfft(torch.fft.rfft(k, n=2 * L) * torch.fft.rfft(x, n=2 * L), n=2 * L)
    return y[..., :L]


def s4_bidirectional(st, L):
    H = st["kernel.C"].shape[1]
    zero = dict(st)
    zero["D"] = torch.zeros_like(st["D"])  # FFTConv adds D to the output, once
    gen_layouts.L = L
    K = gen_layouts.s4d_kernel(zero)  # (2H, L): '(s c) h' with s = 2
    D = st["D"].reshape(-1)
    return lambda x: conv_two_sided(K[:H], K[H:], x) + D[:, None] * x


def rtf_bidirectional(st, L, H):
    k = check_distilled.rtf_kernel(st, L)  # (2H, L), h_0 + h[M] at t = 0 of every kernel
    return lambda x: conv_two_sided(k[:H], k[H:], x)


def main():
    src, _ = check_distilled.load(sys.argv[1])
    out, _ = check_distilled.load(sys.argv[2])
    manifest = json.load(open(sys.argv[2] + ".manifest.json"))
    (layer,) = manifest["layers"]
    p, L = layer["prefix"], layer["length"]
    old = {k[len(p):]: v.to(torch.float64) for k, v in src.items() if k.startswith(p)}
    new = {k[len(p):]: v.to(torch.float64) for k, v in out.items() if k.startswith(p)}
    H = old["kernel.C"].shape[1]
    N = new["ab"].shape[1] if "ab" in new else 0
    shapes_ok = layer["to_layout"] == "rtf" and set(new) == {"ab", "h_0"} and \
        tuple(new["ab"].shape) == (2 * (H + H), N) and tuple(new["h_0"].shape) == (2 * H,)
    result = {"to_layout": layer["to_layout"], "shapes_ok": shapes_ok,
              "manifest": [c["rel_error"] for c in layer["channels"]], "read_back_error": layer["read_back_error"]}
    if shapes_ok:
        ref, mod = s4_bidirectional(old, L), rtf_bidirectional(new, L, H)
        rel, ratio = [], []
        for t0, part in ((0, slice(None)), (L - 1, slice(None, L - 1))):
            x = torch.zeros(H, L, dtype=torch.float64)
            x[:, t0] = 1
            a, b = ref(x), mod(x)
            if t0:  # lag m = L - 1 - t reaches y[t]: reverse to lags 1..L-1
                a, b = a[:, part].flip(-1), b[:, part].flip(-1)
            rel += (torch.linalg.norm(b - a, dim=1) / torch.linalg.norm(a, dim=1)).tolist()
        gen_layouts.L = L
        zero = dict(old)
        zero["D"] = torch.zeros_like(old["D"])
        k1 = gen_layouts.s4d_kernel(zero)[H:]
        ratio = [1.0] * H + (torch.linalg.norm(k1, dim=1) / torch.linalg.norm(k1[:, :L - 1], dim=1)).tolist()
        x = torch.from_numpy(np.random.default_rng(1).standard_normal((H, L)))
        a, b = ref(x), mod(x)
        result.update(rel_errors=rel, norm_ratio=ratio, input_rel_error=float(torch.linalg.norm(b - a) / torch.linalg.norm(a)))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
