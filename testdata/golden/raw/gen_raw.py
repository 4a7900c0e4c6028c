"""Golden files for ssmlab's raw tensors (sessions/arrays RawInfos, ReadRaw, WriteRaw), from
Debian's python3-torch and python3-numpy.

Run from the repository root:  /usr/bin/python3 testdata/golden/raw/gen_raw.py

1. It writes, next to this script, raw.npz (big-endian, Fortran-ordered, integer, boolean and
   complex arrays) and raw.safetensors (F32, I64, BOOL, BF16, U8, F16 and a 0-element tensor),
   and records in expected.json, for them and for the torch.save files of
   testdata/golden/torch (views that are not contiguous, shared storages, int64, bfloat16,
   complex), each tensor's element type (safetensors' names), shape and the SHA-256 of its
   elements as little-endian bytes in C order: what ReadRaw must return.
2. It loads the files the Go test wrote with WriteRaw (go/, made by
   `go test ./sessions/arrays -run TestRawGolden -update`) with torch.load(weights_only=True),
   numpy.load and a safetensors reader, and records under "written" whether each tensor has
   the name, dtype, shape and bytes of the tensor it was copied from.
"""
import collections
import hashlib
import json
import os
import struct

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_DIR = os.path.join(HERE, "..", "torch")

TORCH_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
               torch.complex64: "C64", torch.complex128: "C128", torch.int64: "I64", torch.int32: "I32",
               torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}
NUMPY_NAMES = {"f8": "F64", "f4": "F32", "f2": "F16", "c8": "C64", "c16": "C128", "i8": "I64", "i4": "I32",
               "i2": "I16", "i1": "I8", "u8": "U64", "u4": "U32", "u2": "U16", "u1": "U8", "b1": "BOOL"}
ST_NUMPY = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
            "U8": "u1", "BOOL": "?", "BF16": "<u2"}


def torch_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return numpy_bytes(t.numpy())


def numpy_bytes(a):
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes(order="C")


def record(dtype, shape, data):
    return {"dtype": dtype, "shape": list(shape), "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def save_safetensors(path, tensors):
    """(name, dtype, shape, bytes) in order, written by hand: Debian has no python3-safetensors."""
    header, off = {}, 0
    for name, dt, shape, b in tensors:
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(b for *_, b in tensors))


def load_safetensors(path, metadata=False):
    """name → (dtype, shape, bytes) in the file's order, and the metadata if asked for."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = collections.OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = (info["dtype"], tuple(info["shape"]), data[8 + n + a:8 + n + b])
    if metadata:
        return out, header.get("__metadata__", {})
    return out


def main():
    rng = np.random.default_rng(5)
    expected = collections.OrderedDict()
    for fname in ("state.pt", "module.pt", "lightning.ckpt"):
        obj = torch.load(os.path.join(TORCH_DIR, fname), weights_only=False)  # our own files
        if "state_dict" in obj:
            obj = obj["state_dict"]
        expected["torch/" + fname] = {k: record(TORCH_NAMES[v.dtype], v.shape, torch_bytes(v)) for k, v in obj.items()}

    arrays = collections.OrderedDict([
        ("big", rng.standard_normal((2, 3)).astype(">f8")),
        ("fortran", np.asfortranarray(rng.integers(-9, 9, (3, 4)).astype("<i4"))),
        ("mask", rng.integers(0, 2, 5).astype("?")),
        ("bytes", rng.integers(0, 255, 4).astype("u1")),
        ("complex", (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(">c8")),
        ("f16", rng.standard_normal((2, 2)).astype("<f2")),
    ])
    np.savez(os.path.join(HERE, "raw.npz"), **arrays)
    expected["raw.npz"] = {k: record(NUMPY_NAMES[v.dtype.str[1:]], v.shape, numpy_bytes(v)) for k, v in arrays.items()}

    bf = torch.randn(2, 3, generator=torch.Generator().manual_seed(6)).to(torch.bfloat16)
    st = [
        ("w", "F32", (2, 2), rng.standard_normal((2, 2)).astype("<f4").tobytes()),
        ("position_ids", "I64", (1, 4), np.arange(4, dtype="<i8").reshape(1, 4).tobytes()),
        ("mask", "BOOL", (3,), np.array([True, False, True]).tobytes()),
        ("bf", "BF16", (2, 3), torch_bytes(bf)),
        ("u8", "U8", (2,), np.array([7, 250], dtype="u1").tobytes()),
        ("half", "F16", (1,), np.array([1.5], dtype="<f2").tobytes()),
        ("empty", "F32", (0, 3), b""),
    ]
    save_safetensors(os.path.join(HERE, "raw.safetensors"), st)
    expected["raw.safetensors"] = {n: record(dt, shape, b) for n, dt, shape, b in st}

    written = collections.OrderedDict()
    go = os.path.join(HERE, "go")
    for fname in sorted(os.listdir(go)) if os.path.isdir(go) else []:
        path = os.path.join(go, fname)
        src = fname.rsplit(".", 1)[0].replace("__", "/")  # the file it was copied from
        want = expected[src]
        if fname.endswith(".pt"):
            got = {k: (TORCH_NAMES[v.dtype], tuple(v.shape), torch_bytes(v)) for k, v in torch.load(path, weights_only=True).items()}
        elif fname.endswith(".npz"):
            got = {k: (NUMPY_NAMES[v.dtype.str[1:]], v.shape, numpy_bytes(v)) for k, v in np.load(path).items()}
        else:
            got = dict(load_safetensors(path))
        ok = set(got) == set(want) and all(
            got[k][0] == w["dtype"] and list(got[k][1]) == w["shape"] and hashlib.sha256(got[k][2]).hexdigest() == w["sha256"]
            for k, w in want.items())
        written[fname] = ok
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "numpy": np.__version__, "files": expected, "written": written}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
