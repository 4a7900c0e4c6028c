"""A small Hyena language model's checkpoint in the safari layout, for ssmlab's whole-model
distillation tests and README (Debian's python3-torch).

Run from the repository root:  /usr/bin/python3 testdata/scale/gen_model.py

It writes, next to this script, hyena_lm.pt (torch.save of the state_dict) and
hyena_lm.safetensors, float32, and hyena_lm_f64.pt, float64: the state_dict of safari's SimpleLMHeadModel with HyenaOperator
mixers (HazyResearch/safari src/models/sequence/simple_lm.py and hyena.py, read at 02220c6):
an embedding, N_LAYER blocks of (norm1, mixer: in_proj, short_filter, filter_fn, out_proj;
norm2, mlp: fc1, fc2), the final norm and the LM head, tied to the embedding (one storage in
the torch.save files; safetensors, which shares none, holds a copy). Each filter_fn is a HyenaFilter
made by testdata/layouts/gen_layouts.py's hyena_state (the layouts' golden script), with
D_MODEL channels (order 2: d_model·(order − 1) filters) of L_MAX samples.
"""
import collections
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "layouts"))
import gen_layouts  # noqa: E402

N_LAYER, D_MODEL, L_MAX, FILTER_ORDER, VOCAB = 3, 16, 256, 16, 32


def model_state(seed=21):
    g = torch.Generator().manual_seed(seed)

    def lin(n_out, n_in):
        return torch.randn(n_out, n_in, generator=g) / math.sqrt(n_in), 0.1 * torch.randn(n_out, generator=g)

    st = collections.OrderedDict()
    emb = torch.randn(VOCAB, D_MODEL, generator=g) * 0.02
    st["backbone.embeddings.word_embeddings.weight"] = emb
    for i in range(N_LAYER):
        p = f"backbone.layers.{i}."
        st[p + "norm1.weight"], st[p + "norm1.bias"] = 1 + 0.1 * torch.randn(D_MODEL, generator=g), 0.1 * torch.randn(D_MODEL, generator=g)
        st[p + "mixer.in_proj.weight"], st[p + "mixer.in_proj.bias"] = lin(3 * D_MODEL, D_MODEL)
        st[p + "mixer.out_proj.weight"], st[p + "mixer.out_proj.bias"] = lin(D_MODEL, D_MODEL)
        st[p + "mixer.short_filter.weight"] = torch.randn(3 * D_MODEL, 1, 3, generator=g) / math.sqrt(3)
        st[p + "mixer.short_filter.bias"] = 0.1 * torch.randn(3 * D_MODEL, generator=g)
        for k, v in gen_layouts.hyena_state(100 + i, d_model=D_MODEL, emb_dim=5, order=FILTER_ORDER, seq_len=L_MAX).items():
            st[p + "mixer.filter_fn." + k] = v
        st[p + "norm2.weight"], st[p + "norm2.bias"] = 1 + 0.1 * torch.randn(D_MODEL, generator=g), 0.1 * torch.randn(D_MODEL, generator=g)
        st[p + "mlp.fc1.weight"], st[p + "mlp.fc1.bias"] = lin(4 * D_MODEL, D_MODEL)
        st[p + "mlp.fc2.weight"], st[p + "mlp.fc2.bias"] = lin(D_MODEL, 4 * D_MODEL)
    st["backbone.ln_f.weight"], st["backbone.ln_f.bias"] = torch.ones(D_MODEL), torch.zeros(D_MODEL)
    st["lm_head.weight"] = emb  # tied to the embedding, as SimpleLMHeadModel ties them
    return cast(st, torch.float32)


def cast(st, dtype):
    """st with every tensor in dtype, tied tensors (one tensor under two names) still tied:
    gen_layouts sets float64 as the default dtype, so each .to(float32) is a new tensor, and
    casting the two names apart would untie them, which torch.save then writes as two."""
    done = {}
    out = collections.OrderedDict()
    for k, v in st.items():
        if id(v) not in done:
            done[id(v)] = v.to(dtype)
        out[k] = done[id(v)]
    return out


def main():
    st = model_state()
    torch.save(st, os.path.join(HERE, "hyena_lm.pt"))
    gen_layouts.save_safetensors(os.path.join(HERE, "hyena_lm.safetensors"), st, torch.float32)
    torch.save(cast(st, torch.float64), os.path.join(HERE, "hyena_lm_f64.pt"))


if __name__ == "__main__":
    main()
