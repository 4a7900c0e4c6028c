#!/usr/bin/python3
"""Train a tiny LRU language model on the "drawn" long-range copy task and export it whole.

Run from the repository root with the Debian interpreter (python3-torch 1.13):

    /usr/bin/python3 testdata/trained/train_lru.py

It takes about 12.5 minutes of CPU on one core (747 s for 3000 steps, one thread, on a
2-core AMD EPYC shared with other jobs; Debian's torch 1.13, 2026-11-29; held-out copy
accuracy 0.144, chance 1/32) and writes, under testdata/trained/,

    copy-drawn-lru-init.safetensors   the model as initialised (before the first step)
    copy-drawn-lru.safetensors        the model after training
    train_lru.json                    the settings, the versions, the losses, the copy accuracy
                                      and the CPU time

each checkpoint a float32 safetensors file of every tensor of the model, the two LRU layers
under minimal-LRU's names (lru/model.py: nu_log, theta_log, gamma_log (P), B_re, B_im (P, H),
C_re, C_im (H, P), D (H)) behind the prefixes layers_0.seq. and layers_1.seq., so that
`ssmlab distill testdata/trained/copy-drawn-lru.safetensors --order 16 -o out.safetensors`
reduces both layers. The output is deterministic on a given machine (fixed seeds, one thread,
deterministic algorithms, data from a seeded generator), not the same bits on every machine
(train_hyena.py says why); the initial checkpoint is made from the seeded generator before
any step, so another machine should differ from it by float32 rounding at most (not checked).
TRAIN_STEPS, TRAIN_LR, TRAIN_LRU_LR, TRAIN_MAX_PHASE and TRAIN_OUT (a folder) override the
settings for trials.

The task and its data are train_hyena.py's "drawn" task (imported from it, not copied):
32 content tokens, sequences of 1024 tokens in 16 segments of 64, each segment fresh or a
copy of the tokens D earlier, D drawn per segment from 64, 320, 576 and 832 and named by the
segment's marker. The held-out copy accuracy counts the copied positions after each
segment's first four; chance is 1/32.

The model follows minimal-LRU (NicolasZucchet/minimal-LRU, lru/model.py: LRU,
SequenceLayer, StackedEncoderModel), written here from that description:

  * the LRU: lambda = exp(-exp(nu_log) + i exp(theta_log)), B~ = (B_re + i B_im) exp(gamma_log),
    x_t = lambda * x_{t-1} + B~ u_t, y_t = Re(C x_t) + D * u_t, C = C_re + i C_im;
    d_model H = 64, d_hidden P = 64 (64 complex modes, the layer's own order 128 real states);
  * the LRU paper's initialisation: |lambda| uniform on the ring r_min 0.9 .. r_max 0.999
    (the LRA rings), phase uniform on [0, max_phase], gamma_log = log sqrt(1 - |lambda|^2),
    B_re, B_im ~ N(0, 1/(2H)), C_re, C_im ~ N(0, 1/P), D ~ N(0, 1). The phase goes up to
    2 pi (minimal-LRU's default max_phase 6.28), not the LRA tasks' pi/10: a copy at a lag
    of D tokens needs a kernel sharp in time, so high frequencies, and modes of phase below
    pi/10 only pass frequencies below 1/20 of the sampling rate;
  * the output computed by an FFT convolution over time, mode by mode: v = u B~^T
    (B, L, P), x = v convolved causally with lambda^t (FFT of size 2L, complex), then
    y = Re(x C^T) + D * u; the same as the recurrence, without a loop over the 1024 steps;
  * SequenceLayer: pre-norm residual, x + GLU(GELU(LRU(LayerNorm(x)))), the GLU
    out1(z) * sigmoid(out2(z)) of two Linear(H, H); two such layers (layers_0, layers_1);
  * a token embedding (N(0, 0.02)), a final LayerNorm and a tied output head, as
    train_hyena.py's model.

Training as minimal-LRU's usual: Adam, the LRU parameters at lr 1e-3 without weight decay;
the rest as train_hyena.py (AdamW lr 5e-4, weight decay 0.1 on the matrices, none on biases,
norms and the embedding), warmup 50 steps then a cosine, gradients clipped at norm 1, batch 8.
"""

import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("TRAIN_OUT", HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "layouts"))
import train_hyena as th  # noqa: E402  (sets one thread before torch loads; the task's data)
import gen_layouts  # noqa: E402  (the one safetensors writer under testdata)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_default_dtype(torch.float32)  # gen_layouts sets float64 for its goldens

TASK, SEED = "drawn", 2
L = th.L
H = 64
P = 64
N_LAYER = 2
R_MIN, R_MAX = 0.9, 0.999
MAX_PHASE = float(os.environ.get("TRAIN_MAX_PHASE", 2 * math.pi))
BATCH = th.BATCH
STEPS = int(os.environ.get("TRAIN_STEPS", 3000))
LR = float(os.environ.get("TRAIN_LR", th.LR))
LRU_LR = float(os.environ.get("TRAIN_LRU_LR", 1e-3))
WEIGHT_DECAY = th.WEIGHT_DECAY
WARMUP = th.WARMUP
LRU_NAMES = ("nu_log", "theta_log", "gamma_log", "B_re", "B_im", "C_re", "C_im", "D")


class LRU(nn.Module):
    """minimal-LRU's LRU layer (lru/model.py), its output by an FFT convolution per mode."""

    def __init__(self, h, p):
        super().__init__()
        u1, u2 = torch.rand(p), torch.rand(p)
        nu_log = torch.log(-0.5 * torch.log(u1 * (R_MAX ** 2 - R_MIN ** 2) + R_MIN ** 2))
        theta_log = torch.log(MAX_PHASE * u2)
        self.nu_log = nn.Parameter(nu_log)
        self.theta_log = nn.Parameter(theta_log)
        self.gamma_log = nn.Parameter(torch.log(torch.sqrt(1 - torch.exp(-torch.exp(nu_log)) ** 2)))
        self.B_re = nn.Parameter(torch.randn(p, h) / math.sqrt(2 * h))
        self.B_im = nn.Parameter(torch.randn(p, h) / math.sqrt(2 * h))
        self.C_re = nn.Parameter(torch.randn(h, p) / math.sqrt(p))
        self.C_im = nn.Parameter(torch.randn(h, p) / math.sqrt(p))
        self.D = nn.Parameter(torch.randn(h))

    def forward(self, u):
        """u (B, L, H) → y (B, L, H)."""
        length = u.shape[1]
        t = torch.arange(length, dtype=u.dtype)[:, None]
        # lambda^t = exp(t log lambda), (L, P), without a power of a complex number.
        powers = torch.exp(torch.complex(-t * torch.exp(self.nu_log), t * torch.exp(self.theta_log)))
        b = torch.complex(self.B_re, self.B_im) * torch.exp(self.gamma_log)[:, None]
        c = torch.complex(self.C_re, self.C_im)
        v = u.to(b.dtype) @ b.T  # (B, L, P)
        n = 2 * length
        x = torch.fft.ifft(torch.fft.fft(v, n=n, dim=1) * torch.fft.fft(powers, n=n, dim=0), dim=1)[:, :length]
        return (x @ c.T).real + self.D * u


class SequenceLayer(nn.Module):
    def __init__(self, h, p):
        super().__init__()
        self.norm = nn.LayerNorm(h)
        self.seq = LRU(h, p)
        self.out1 = nn.Linear(h, h)
        self.out2 = nn.Linear(h, h)

    def forward(self, x):
        z = F.gelu(self.seq(self.norm(x)))
        return x + self.out1(z) * torch.sigmoid(self.out2(z))


class LRULM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, H)
        for i in range(N_LAYER):
            setattr(self, f"layers_{i}", SequenceLayer(H, P))  # minimal-LRU's module names
        self.norm = nn.LayerNorm(H)
        nn.init.normal_(self.embed.weight, std=0.02)

    def forward(self, tokens):
        x = self.embed(tokens)
        for i in range(N_LAYER):
            x = getattr(self, f"layers_{i}")(x)
        return self.norm(x) @ self.embed.weight.T


def export(model, name):
    tensors = {n: t.detach().to(torch.float32) for n, t in model.state_dict().items()}
    gen_layouts.save_safetensors(os.path.join(OUT, name), tensors)


def copy_accuracy(model, seed):
    with torch.no_grad():
        toks, copied = th.make_batch(np.random.default_rng(seed + 1000), TASK, 16)
        pred = model(toks[:, :-1]).argmax(-1)
        return ((pred == toks[:, 1:]) & copied).sum().item() / copied.sum().item()


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    vocab = th.CONTENT + len(th.task_lags(TASK)) + 1
    model = LRULM(vocab)
    export(model, "copy-drawn-lru-init.safetensors")
    groups = {"lru": [], "decay": [], "other": []}
    for n, p in model.named_parameters():
        if n.split(".")[-1] in LRU_NAMES and ".seq." in n:
            groups["lru"].append(p)
        elif p.dim() >= 2 and "embed" not in n:
            groups["decay"].append(p)
        else:
            groups["other"].append(p)
    opt = torch.optim.AdamW([{"params": groups["lru"], "lr": LRU_LR, "weight_decay": 0.0},
                             {"params": groups["decay"], "weight_decay": WEIGHT_DECAY},
                             {"params": groups["other"], "weight_decay": 0.0}], lr=LR)
    log, start = th.fit(model, opt, rng, TASK, vocab, STEPS)
    cpu = time.process_time() - start
    acc = copy_accuracy(model, SEED)
    print(f"{STEPS} steps, {cpu:.0f} s of CPU, held-out copy accuracy {acc:.4f}", file=sys.stderr)
    export(model, "copy-drawn-lru.safetensors")
    meta = {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__,
            "task": TASK, "seed": SEED, "L": L, "d_model": H, "d_hidden": P, "n_layer": N_LAYER,
            "r_min": R_MIN, "r_max": R_MAX, "max_phase": MAX_PHASE, "batch": BATCH, "steps": STEPS,
            "lr": LR, "lru_lr": LRU_LR, "weight_decay": WEIGHT_DECAY, "warmup": WARMUP,
            "segment": th.SEG, "content_tokens": th.CONTENT, "drawn_lags": th.DRAWN_LAGS,
            "cpu_seconds": round(cpu), "log": log, "held_out_copy_accuracy": round(acc, 4)}
    with open(os.path.join(OUT, "train_lru.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
