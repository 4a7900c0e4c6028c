"""Golden files for ssmlab's raw tensors (sessions/arrays RawInfos, ReadRaw, WriteRaw), from
Debian's python3-torch and python3-numpy.

Run from the repository root:  /usr/bin/python3 testdata/golden/raw/gen_raw.py

1. It writes, next to this script, raw.npz (big-endian, Fortran-ordered, integer, boolean and
   complex arrays) and raw.safetensors (F32, I64, BOOL, BF16, U8, F16 and a 0-element tensor,
   written by testdata/layouts/gen_layouts.py's save_safetensors), and records in
   expected.json, for them and for the torch.save files of testdata/golden/torch (views that
   are not contiguous, shared storages, int64, bfloat16, complex), each tensor's element type
   (safetensors' names), shape and the SHA-256 of its elements as little-endian bytes in C
   order: what ReadRaw must return.
2. It loads the files the Go test wrote with WriteRaw (go/, made by
   `go test ./sessions/arrays -run TestRawGolden -update`) with torch.load(weights_only=True),
   numpy.load and gen_layouts.load_safetensors, and records under "written" whether each
   tensor has the name, dtype, shape and bytes of the tensor it was copied from.
"""
import collections
import hashlib
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_DIR = os.path.join(HERE, "..", "torch")
sys.path.insert(0, os.path.join(HERE, "..", "..", "layouts"))
import gen_layouts  # noqa: E402  (the safetensors writer and reader, and the bytes of a tensor)

NUMPY_NAMES = {"f8": "F64", "f4": "F32", "f2": "F16", "c8": "C64", "c16": "C128", "i8": "I64", "i4": "I32",
               "i2": "I16", "i1": "I8", "u8": "U64", "u4": "U32", "u2": "U16", "u1": "U8", "b1": "BOOL"}


def record(dtype, shape, data):
    return {"dtype": dtype, "shape": list(shape), "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def tensor_records(tensors):
    """name → (safetensors dtype, shape, little-endian C-order bytes) of torch tensors."""
    return {k: (gen_layouts.ST_NAMES[v.dtype], tuple(v.shape), gen_layouts.tensor_bytes(v)) for k, v in tensors.items()}


def main():
    rng = np.random.default_rng(5)
    expected = collections.OrderedDict()
    for fname in ("state.pt", "module.pt", "lightning.ckpt"):
        obj = torch.load(os.path.join(TORCH_DIR, fname), weights_only=False)  # our own files
        if "state_dict" in obj:
            obj = obj["state_dict"]
        expected["torch/" + fname] = {k: record(*r) for k, r in tensor_records(obj).items()}

    arrays = collections.OrderedDict([
        ("big", rng.standard_normal((2, 3)).astype(">f8")),
        ("fortran", np.asfortranarray(rng.integers(-9, 9, (3, 4)).astype("<i4"))),
        ("mask", rng.integers(0, 2, 5).astype("?")),
        ("bytes", rng.integers(0, 255, 4).astype("u1")),
        ("complex", (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(">c8")),
        ("f16", rng.standard_normal((2, 2)).astype("<f2")),
    ])
    np.savez(os.path.join(HERE, "raw.npz"), **arrays)
    expected["raw.npz"] = {k: record(NUMPY_NAMES[v.dtype.str[1:]], v.shape, gen_layouts.array_bytes(v)) for k, v in arrays.items()}

    # float32 said: importing gen_layouts made float64 torch's default, whose draws are not float32's.
    bf = torch.randn(2, 3, generator=torch.Generator().manual_seed(6), dtype=torch.float32).to(torch.bfloat16)
    st = collections.OrderedDict([
        ("w", torch.from_numpy(rng.standard_normal((2, 2)).astype("<f4"))),
        ("position_ids", torch.arange(4, dtype=torch.int64).reshape(1, 4)),
        ("mask", torch.tensor([True, False, True])),
        ("bf", bf),
        ("u8", torch.tensor([7, 250], dtype=torch.uint8)),
        ("half", torch.tensor([1.5], dtype=torch.float16)),
        ("empty", torch.zeros(0, 3, dtype=torch.float32)),
    ])
    gen_layouts.save_safetensors(os.path.join(HERE, "raw.safetensors"), st)
    expected["raw.safetensors"] = {k: record(*r) for k, r in tensor_records(st).items()}

    written = collections.OrderedDict()
    go = os.path.join(HERE, "go")
    for fname in sorted(os.listdir(go)) if os.path.isdir(go) else []:
        path = os.path.join(go, fname)
        src = fname.rsplit(".", 1)[0].replace("__", "/")  # the file it was copied from
        want = expected[src]
        if fname.endswith(".pt"):
            got = tensor_records(torch.load(path, weights_only=True))
        elif fname.endswith(".npz"):
            got = {k: (NUMPY_NAMES[v.dtype.str[1:]], v.shape, gen_layouts.array_bytes(v)) for k, v in np.load(path).items()}
        else:
            got = tensor_records(gen_layouts.load_safetensors(path))
        ok = set(got) == set(want) and all(
            got[k][0] == w["dtype"] and list(got[k][1]) == w["shape"] and hashlib.sha256(got[k][2]).hexdigest() == w["sha256"]
            for k, w in want.items())
        written[fname] = ok
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "numpy": np.__version__, "files": expected, "written": written}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
