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
- hyena_lightning_32.ckpt: a Lightning checkpoint as state-spaces/s4's and safari's train.py
  save it (SequenceLightningModule: the model under "model.", save_hyperparameters(config)
  with an OmegaConf DictConfig), with optimizer states, loops and callbacks beside the
  state_dict. omegaconf is not installed here: stand-in classes of the same module and class
  names are pickled as a DictConfig is (NEWOBJ, then BUILD with its __dict__), so the pickle
  names omegaconf.dictconfig.DictConfig, omegaconf.base.ContainerMetadata, typing.Any, ….
- s4_lkernel_32.safetensors, s4_lkernel_64.npz: an S4 (DPLR) layer with its l_kernel buffer
  stored as an int64 scalar, as safetensors.torch.save_file(model.state_dict()) and
  np.savez of the state_dict store it.
- s4d_softplus_64.pt: an S4D layer of a model trained with state-spaces/s4's layer configs
  (configs/model/layer/s4.yaml, which s4d.yaml extends: dt_transform softplus), read with
  --dt-transform softplus; the checkpoint does not record the transform.
- stripedhyena_mixed_32.pt: a StripedHyena block's filter after the model's
  to_bfloat16_except_poles_residues (togethercomputer/stripedhyena stripedhyena/model.py):
  poles and residues float32, D and short_filter_weight bfloat16.
- s4d_args_64.pt: a hand-written checkpoint, {"model_state": state_dict, "epoch": 3,
  "args": argparse.Namespace(...), "best_acc": numpy.float64(0.91)}: objects beside the
  tensors, under a key no checkpoint convention names.
- holder_tensor.pt: a tensor kept inside an object of the training code's class
  (__main__.Holder), which ssmlab cannot read around without losing it.
"""
import argparse
import collections
import json
import os
import sys
import types
import typing

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_layouts as gl  # noqa: E402


def hyena_normalized_kernel(st):
    """HyenaFilter.filter with normalized=True (hyena.py lines 179-187): gen_layouts'
    hyena_filter, then h / ‖h‖₁ over dim=-1 (the channels) at each t; fftconv_ref's bias u·D."""
    h = gl.hyena_filter(st)  # (L, d_model)
    h = h / torch.norm(h, dim=-1, p=1, keepdim=True)
    k = h.T.clone()
    k[:, 0] += st["bias"]
    return k


def omegaconf_stand_ins():
    """Classes named as omegaconf's, whose pickles name them as a real DictConfig's does."""
    classes = {}
    for module, name in [("omegaconf.dictconfig", "DictConfig"), ("omegaconf.base", "ContainerMetadata"),
                         ("omegaconf.base", "Metadata"), ("omegaconf.nodes", "AnyNode")]:
        for m in ("omegaconf", module):
            sys.modules.setdefault(m, types.ModuleType(m))
        cls = type(name, (), {})
        cls.__module__, cls.__qualname__ = module, name
        setattr(sys.modules[module], name, cls)
        classes[name] = cls
    return classes


def dict_config(value, classes):
    """A DictConfig of value (nested dicts of plain values) as omegaconf builds one."""
    if isinstance(value, dict):
        node, meta = classes["DictConfig"](), classes["ContainerMetadata"]()
        meta.__dict__.update(ref_type=typing.Any, object_type=dict, optional=True, key=None, flags={},
                             flags_root=False, resolver_cache=collections.defaultdict(dict),
                             key_type=typing.Any, element_type=typing.Any)
        node.__dict__.update(_metadata=meta, _parent=None, _flags_cache=None,
                             _content={k: dict_config(v, classes) for k, v in value.items()})
        return node
    node, meta = classes["AnyNode"](), classes["Metadata"]()
    meta.__dict__.update(ref_type=typing.Any, object_type=None, optional=True, key=None, flags=None,
                         flags_root=False, resolver_cache=collections.defaultdict(dict))
    node.__dict__.update(_metadata=meta, _parent=None, _flags_cache=None, _val=value)
    return node


def lightning_checkpoint(state_dict, hparams):
    """A PyTorch Lightning checkpoint's entries (Trainer.save_checkpoint, Lightning 1.x)."""
    names = list(state_dict)
    g = torch.Generator().manual_seed(33)
    opt_state = {i: {"step": torch.tensor(100.0), "exp_avg": 1e-3 * torch.randn(state_dict[k].shape, generator=g),
                     "exp_avg_sq": 1e-6 * torch.rand(state_dict[k].shape, generator=g)} for i, k in enumerate(names[:3])}
    return {
        "epoch": 3, "global_step": 1200, "pytorch-lightning_version": "1.8.6",
        "state_dict": state_dict,
        "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 4, "completed": 3}}}},
        "callbacks": {"ModelCheckpoint{'monitor': 'val/loss', 'mode': 'min'}": {
            "monitor": "val/loss", "best_model_score": torch.tensor(2.31), "best_model_path": "/ckpt/epoch=2.ckpt"}},
        "optimizer_states": [{"state": opt_state, "param_groups": [
            {"lr": 6e-4, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.1, "amsgrad": False, "params": list(range(len(names)))}]}],
        "lr_schedulers": [{"base_lrs": [6e-4], "last_epoch": 1200, "_step_count": 1201}],
        "hparams_name": "config",
        "hyper_parameters": dict_config(hparams, omegaconf_stand_ins()),
    }


class Holder:
    """A class of the training code holding a tensor."""

    def __init__(self, w):
        self.w = w


def case(cases, fname, layout, prefix, state, kernel, dtype, options=None):
    cases[fname] = {"layout": layout, "prefix": prefix, "options": options or {}, "dtype": str(dtype).replace("torch.", ""),
                    "kernels": [[float(x) for x in row] for row in kernel(gl.rounded(state, dtype))]}


def main():
    cases = {}

    st = gl.hyena_state(31)
    prefix = "backbone.layers.0.mixer.filter_fn."
    torch.save(collections.OrderedDict((prefix + k, v) for k, v in st.items()), os.path.join(HERE, "hyena_normalized_64.pt"))
    case(cases, "hyena_normalized_64.pt", "hyena", prefix, st, hyena_normalized_kernel, torch.float64, {"normalized": "true"})

    st = gl.hyena_state(32)
    prefix = "model.backbone.layers.0.mixer.filter_fn."
    sd = collections.OrderedDict((prefix + k, v.float()) for k, v in st.items())
    sd["model.backbone.layers.0.mixer.out_proj.weight"] = torch.randn(3, 3, generator=torch.Generator().manual_seed(34)).float()
    hp = {"model": {"_name_": "lm", "d_model": 3, "layer": {"_name_": "hyena", "emb_dim": 5, "filter_order": 8, "l_max": gl.L}},
          "optimizer": {"_name_": "adamw", "lr": 6e-4}}
    torch.save(lightning_checkpoint(sd, hp), os.path.join(HERE, "hyena_lightning_32.ckpt"))
    case(cases, "hyena_lightning_32.ckpt", "hyena", prefix, st, gl.hyena_kernel, torch.float32)

    st = gl.s4_state(35)
    prefix = "model.layers.0.layer.layer."
    gl.save_safetensors(os.path.join(HERE, "s4_lkernel_32.safetensors"),
                        collections.OrderedDict((prefix + k, v.float() if v.is_floating_point() else v) for k, v in st.items()))
    np.savez(os.path.join(HERE, "s4_lkernel_64.npz"), **{prefix + k: v.numpy() for k, v in st.items()})
    case(cases, "s4_lkernel_32.safetensors", "s4", prefix, st, gl.s4_kernel, torch.float32)
    case(cases, "s4_lkernel_64.npz", "s4", prefix, st, gl.s4_kernel, torch.float64)

    st = gl.s4d_state(36)
    prefix = "model.layers.0.layer.layer."
    torch.save(collections.OrderedDict((prefix + k, v) for k, v in st.items()), os.path.join(HERE, "s4d_softplus_64.pt"))
    case(cases, "s4d_softplus_64.pt", "s4d", prefix, st, lambda s: gl.s4d_kernel(s, dt_transform="softplus"), torch.float64,
         {"dt-transform": "softplus"})

    st = gl.stripedhyena_state(37)
    prefix = "blocks.1.filter."
    mixed = collections.OrderedDict((k, v.float() if k in ("poles", "residues") else v.to(torch.bfloat16)) for k, v in st.items())
    torch.save(collections.OrderedDict((prefix + k, v) for k, v in mixed.items()), os.path.join(HERE, "stripedhyena_mixed_32.pt"))
    stored = collections.OrderedDict((k, v.double()) for k, v in mixed.items())
    cases["stripedhyena_mixed_32.pt"] = {"layout": "stripedhyena", "prefix": prefix, "options": {}, "dtype": "float32",
                                         "kernels": [[float(x) for x in row] for row in gl.stripedhyena_kernel(stored)]}

    st = gl.s4d_state(38)
    prefix = "model_state.layers.0.layer."
    torch.save({"model_state": collections.OrderedDict(("layers.0.layer." + k, v) for k, v in st.items()),
                "epoch": 3, "args": argparse.Namespace(lr=1e-3, d_model=3, d_state=8), "best_acc": np.float64(0.91)},
               os.path.join(HERE, "s4d_args_64.pt"))
    case(cases, "s4d_args_64.pt", "s4d", prefix, st, gl.s4d_kernel, torch.float64, {"dt-transform": "exp"})
    torch.save({"w": torch.ones(3, dtype=torch.float64), "h": Holder(torch.zeros(2, dtype=torch.float64))}, os.path.join(HERE, "holder_tensor.pt"))

    with open(os.path.join(HERE, "ckpt_expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "length": gl.L, "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
