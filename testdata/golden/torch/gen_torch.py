"""Writes the torch.save files the Go tests of sessions/arrays read (Debian's python3-torch).

Run from the repository root:  /usr/bin/python3 testdata/golden/torch/gen_torch.py
It writes, next to this script:
  state.pt        an OrderedDict of tensors of every float dtype, a complex tensor, views that
                  are not contiguous or share a storage, and an int64 tensor (unsupported)
  module.pt       an nn.Module's state_dict (an OrderedDict with a _metadata attribute)
  lightning.ckpt  a checkpoint as PyTorch Lightning saves one: the model under "state_dict",
                  with optimiser states and hyperparameters beside it
  legacy.pt       the legacy (pre-1.6, non-zip) format, which ssmlab refuses
  small_*.pt, small_lightning.ckpt
                  the same kinds of content, one or two tensors of at most four elements
                  each: the fuzzers' seeds, which must be small (internal/fuzzcorpus)
  tied.pt         tied weights: one tensor under two names, and a view of its storage
  expected.json   the values of every float tensor, C order, complex as (..., 2) pairs

legacy.pt differs from run to run (the legacy format keys storages by their addresses in
memory); keep the committed one.
"""
import collections
import json
import os

import torch

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)


def values(t):
    if t.is_complex():
        t = torch.view_as_real(t.resolve_conj())
    return {"shape": list(t.shape), "data": t.to(torch.float64).reshape(-1).tolist()}


state = collections.OrderedDict()
state["f32"] = torch.randn(2, 3)
state["f64"] = torch.randn(4, dtype=torch.float64)
state["bf16"] = torch.randn(3).to(torch.bfloat16)
state["f16"] = torch.randn(2).to(torch.float16)
state["c64"] = torch.randn(2, 2, dtype=torch.cfloat)
base = torch.randn(3, 4)
state["transposed"] = base.t()              # stride (1, 4)
state["sliced"] = base[1:, ::2]             # offset 4, stride (4, 2), shares base's storage
state["scalar"] = torch.tensor(2.5)
state["step"] = torch.tensor(7)             # int64: listed, not read
torch.save(state, os.path.join(here, "state.pt"))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 3)
        self.kernel = torch.nn.Parameter(torch.randn(1, 2, 5))


net = Net()
torch.save(net.state_dict(), os.path.join(here, "module.pt"))

ckpt = {
    "epoch": 3,
    "global_step": 120,
    "pytorch-lightning_version": "1.9.0",
    "state_dict": collections.OrderedDict((f"model.{k}", v) for k, v in net.state_dict().items()),
    "optimizer_states": [{"state": {0: {"exp_avg": torch.zeros(3, 2)}}, "param_groups": [{"lr": 0.01, "params": [0]}]}],
    "lr_schedulers": [],
    "hyper_parameters": {"d_model": 2, "dropout": 0.1, "name": "s4d", "flags": (True, None)},
}
torch.save(ckpt, os.path.join(here, "lightning.ckpt"))

torch.save({"w": torch.ones(2)}, os.path.join(here, "legacy.pt"), _use_new_zipfile_serialization=False)

# Drawn after the files above, so that adding them left those files as they were.
base = torch.randn(2, 2)
small = {
    "small_views.pt": collections.OrderedDict([("t", base.t()), ("s", base[1:, 1:])]),  # one storage
    "small_f64.pt": collections.OrderedDict([("d", torch.randn(1, dtype=torch.float64)), ("x", torch.tensor(2.5))]),
    "small_halves.pt": collections.OrderedDict([("h", torch.randn(1).half()), ("b", torch.randn(1).bfloat16())]),
    "small_complex.pt": collections.OrderedDict([("c", torch.randn(1, dtype=torch.cfloat)), ("n", torch.tensor(7))]),
    "small_module.pt": torch.nn.Linear(1, 1).state_dict(),
    "small_lightning.ckpt": {
        "epoch": 1,
        "state_dict": collections.OrderedDict([("model.w", torch.randn(1))]),
        "optimizer_states": [{0: {"m": torch.zeros(1)}}],
        "hyper_parameters": {"lr": 0.1, "flags": (True, None)},
    },
}
for name, obj in small.items():
    torch.save(obj, os.path.join(here, name))

# Drawn after the files above: tied weights, as a model whose output layer shares its
# embedding's parameter saves them (one tensor under two names), and a view of that storage
# at an offset, which is not the same tensor.
emb = torch.randn(3, 2)
tied = collections.OrderedDict([("emb", emb), ("other", torch.randn(2)), ("head", emb), ("row", emb[1])])
torch.save(tied, os.path.join(here, "tied.pt"))


def floats(state):
    return {k: values(v) for k, v in state.items() if v.is_floating_point() or v.is_complex()}


expected = {
    "torch": torch.__version__,
    "state.pt": floats(state),
    "module.pt": floats(net.state_dict()),
    "lightning.ckpt": floats(ckpt["state_dict"]),
}
for name, obj in small.items():
    expected[name] = floats(obj["state_dict"] if name.endswith(".ckpt") else obj)
expected["tied.pt"] = floats(tied)
with open(os.path.join(here, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
