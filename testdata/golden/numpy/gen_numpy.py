#!/usr/bin/python3
"""Write the NumPy and safetensors golden files of sessions/arrays' tests.

Run from the repository root with Debian's interpreter (python3-numpy, and python3-torch for
testdata/layouts/gen_layouts.py, whose safetensors writer it uses):

    /usr/bin/python3 testdata/golden/numpy/gen_numpy.py

Every array is written by NumPy itself (np.save, np.savez, np.savez_compressed,
np.lib.format.write_array for the 2.0 and 3.0 header versions, np.savetxt), except
the .safetensors files, which gen_layouts.save_safetensors builds byte by byte to the
published format (https://github.com/huggingface/safetensors, "Format"): an 8-byte
little-endian header length, a JSON header padded with spaces to a multiple of 8 bytes,
then the little-endian data. expected.json holds, for every file and array, the shape and
the values as float64 (Python's repr: the exact value), after the conversion the
Go reader must make (float32, float16 and bfloat16 widen exactly). The output is
deterministic: the values come from np.random.default_rng(SEED).
"""

import collections
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "layouts"))
import gen_layouts  # noqa: E402  (the safetensors writer)

SEED = 20240507
rng = np.random.default_rng(SEED)

expected = {}


def record(fname, name, arr):
    """Note the values the Go reader must return for arr (any float dtype)."""
    a = np.array(arr, dtype=np.float64, order="C")
    expected.setdefault(fname, {})[name] = {
        "shape": list(a.shape),
        "data": [float(x) for x in a.ravel(order="C")],
    }


def path(fname):
    return os.path.join(HERE, fname)


# --- .npy: every dtype and byte order, C and Fortran order, 0-D to 3-D -------------
kernel = rng.standard_normal(16) * 0.5
bank = rng.standard_normal((3, 5))
cube = rng.standard_normal((2, 3, 4))

for fname, arr in [
    ("k_f8_le.npy", kernel.astype("<f8")),
    ("k_f8_be.npy", kernel.astype(">f8")),
    ("k_f4_le.npy", kernel.astype("<f4")),
    ("k_f4_be.npy", kernel.astype(">f4")),
    ("k_f2_le.npy", kernel.astype("<f2")),
    ("k_f2_be.npy", kernel.astype(">f2")),
    ("bank_f8_c.npy", bank.astype("<f8")),
    ("bank_f8_f.npy", np.asfortranarray(bank.astype("<f8"))),
    ("bank_f4_be_f.npy", np.asfortranarray(bank.astype(">f4"))),
    ("cube_f8_f.npy", np.asfortranarray(cube)),
    ("scalar.npy", np.float64(0.25)),
    ("empty.npy", np.zeros(0)),
    ("empty_2x0.npy", np.zeros((2, 0))),
]:
    np.save(path(fname), arr)
    record(fname, "", arr)

assert np.isfortran(np.load(path("bank_f8_f.npy")))

for version in [(2, 0), (3, 0)]:
    fname = "bank_v%d.npy" % version[0]
    with open(path(fname), "wb") as f:
        np.lib.format.write_array(f, bank, version=version)
    record(fname, "", bank)

# Unsupported dtypes, for the error messages.
np.save(path("int64.npy"), np.arange(4, dtype="<i8"))
np.save(path("complex.npy"), np.array([1 + 2j, 3 - 1j]))

# --- .npz -------------------------------------------------------------------------------
np.savez(path("multi.npz"), kernel, bank=bank, bank_f4=bank.astype(">f4"), cube=np.asfortranarray(cube))
record("multi.npz", "arr_0", kernel)
record("multi.npz", "bank", bank)
record("multi.npz", "bank_f4", bank.astype(">f4"))
record("multi.npz", "cube", cube)

np.savez_compressed(path("multi_compressed.npz"), kernels=bank, long=np.zeros(1024))
record("multi_compressed.npz", "kernels", bank)
record("multi_compressed.npz", "long", np.zeros(1024))

# An RTF layer as a PyTorch user would save it: np.savez(ab=..., h_0=...) of float32
# parameters, D = 3 channels of order N = 4. The rows of ab are the D denominators
# (a_1..a_N) then the D numerators (b_1..b_N); h_0 has one entry per channel.
D, N = 3, 4
den = rng.uniform(-1, 1, (D, N)) / (2 * N)  # sum |a_k| <= 1/2: stable (Montel)
num = rng.standard_normal((D, N))
h0 = rng.standard_normal(D)
ab = np.concatenate([den, num]).astype(np.float32)
np.savez(path("rtf.npz"), ab=ab, h_0=h0.astype(np.float32))
record("rtf.npz", "ab", ab)
record("rtf.npz", "h_0", h0.astype(np.float32))

# --- np.savetxt: whitespace (its default) and comma-separated, with a header -------------
np.savetxt(path("bank_savetxt.txt"), bank)  # '%.18e', space-separated
record("bank_savetxt.txt", "", bank)
np.savetxt(path("bank.csv"), bank, delimiter=",", fmt="%.17g", header="three kernels of length 5")
record("bank.csv", "", bank)


# --- .safetensors, built to the published format by gen_layouts.save_safetensors ----
def bf16(a):
    """The bfloat16 tensor of float32 values, truncating their low 16 bits."""
    bits = (np.asarray(a, dtype="<f4").view("<u4") >> 16).astype("<u2").view("<i2")
    return torch.from_numpy(bits).view(torch.bfloat16)


prefix = "layers.0.filter."
norm = rng.standard_normal(D).astype("<f4")
gen_layouts.save_safetensors(  # each tensor in its own dtype
    path("rtf.safetensors"),
    collections.OrderedDict([
        (prefix + "ab", torch.from_numpy(ab)),
        (prefix + "h_0", torch.from_numpy(h0.astype("<f4"))),
        ("layers.0.norm.weight", torch.from_numpy(norm)),
        ("step", torch.tensor(1000, dtype=torch.int64)),
    ]),
    metadata={"format": "pt"},
)
record("rtf.safetensors", prefix + "ab", ab)
record("rtf.safetensors", prefix + "h_0", h0.astype(np.float32))
record("rtf.safetensors", "layers.0.norm.weight", norm)

halfs = (rng.standard_normal(6) * 4).astype("<f2")
bf = rng.standard_normal(5).astype("<f4")
gen_layouts.save_safetensors(
    path("dtypes.safetensors"),
    collections.OrderedDict([
        ("kernels", torch.from_numpy(bank)),
        ("half", torch.from_numpy(halfs)),
        ("brain", bf16(bf)),
        ("scalar", torch.tensor(-1.5, dtype=torch.float32)),
        ("empty", torch.zeros(0, 3, dtype=torch.float32)),
    ]),
)
record("dtypes.safetensors", "kernels", bank)
record("dtypes.safetensors", "half", halfs)
record("dtypes.safetensors", "brain", bf16(bf).to(torch.float32).numpy())  # widening is exact
record("dtypes.safetensors", "scalar", np.float32(-1.5))
record("dtypes.safetensors", "empty", np.zeros((0, 3)))

with open(path("expected.json"), "w") as f:
    json.dump({"numpy": np.__version__, "seed": SEED, "files": expected}, f, separators=(",", ":"), sort_keys=True)
    f.write("\n")
