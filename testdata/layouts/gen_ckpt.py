"""Golden files for checkpoints as users bring them (a QA pass with real checkpoints' shapes),
from Debian's python3-torch, with the layers and kernel formulas of gen_layouts.py.

Run from the repository root:

    /usr/bin/python3 testdata/layouts/gen_ckpt.py

It writes, next to this script, ckpt_expected.json (the schema of expected.json: per file
the layout, prefix and options to import it with, and the reference kernels) and:

- hyena_normalized_64.pt: a HyenaFilter built with normalized=True. HyenaFilter.filter
  (HazyResearch/safari src/models/sequence/hyena.py lines 179-187) divides h, of shape
  (1, L, d_model), by torch.norm(h, dim=-1, p=1, keepdim=True): at each position t, by the
  L1 norm over the d_model channels, not over t.
"""
import collections
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_layouts as gl  # noqa: E402


def hyena_normalized_kernel(st):
    """HyenaFilter.filter with normalized=True (hyena.py lines 179-187): implicit_filter(z),
    the modulation, then h / ‖h‖₁ over dim=-1 (the channels) at each t; fftconv_ref's bias u·D."""
    h = st["pos_emb.z"][0]
    for i in range(7):
        if f"implicit_filter.{i}.weight" in st:
            h = h @ st[f"implicit_filter.{i}.weight"].T
            if f"implicit_filter.{i}.bias" in st:
                h = h + st[f"implicit_filter.{i}.bias"]
        else:
            h = torch.sin(st[f"implicit_filter.{i}.freq"] * h)
    h = h * torch.exp(-st["pos_emb.t"][0] * st["modulation.deltas"][0].abs())  # (L, d_model)
    h = h / torch.norm(h, dim=-1, p=1, keepdim=True)
    k = h.T.clone()
    k[:, 0] += st["bias"]
    return k


def case(cases, fname, layout, prefix, state, kernel, dtype, options=None):
    cases[fname] = {"layout": layout, "prefix": prefix, "options": options or {}, "dtype": str(dtype).replace("torch.", ""),
                    "kernels": [[float(x) for x in row] for row in kernel(gl.rounded(state, dtype))]}


def main():
    cases = {}

    st = gl.hyena_state(31)
    prefix = "backbone.layers.0.mixer.filter_fn."
    torch.save(collections.OrderedDict((prefix + k, v) for k, v in st.items()), os.path.join(HERE, "hyena_normalized_64.pt"))
    case(cases, "hyena_normalized_64.pt", "hyena", prefix, st, hyena_normalized_kernel, torch.float64, {"normalized": "true"})

    with open(os.path.join(HERE, "ckpt_expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "length": gl.L, "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
