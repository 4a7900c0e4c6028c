"""Checks a checkpoint ssmlab distill wrote, with the reference code's kernel formulas.

Run:  /usr/bin/python3 testdata/scale/check_distilled.py INPUT OUTPUT...

INPUT is the checkpoint distilled, each OUTPUT a distilled one (its manifest is
OUTPUT.manifest.json). They are read as the model's code reads them: torch.load(weights_only=
True) for torch.save files, numpy.load for .npz, a safetensors reader for .safetensors. It
prints a JSON list, an object per OUTPUT:

  layers   per distilled layer (by prefix): whether its tensors have exactly the names and
           shapes the target layout's module loads with load_state_dict(strict=True), and per
           channel the relative L2 error of the module's kernel (computed with
           testdata/layouts/gen_layouts.py's formulas from the tensors as stored) against the
           input layer's kernel, beside the manifest's rel_error;
  copied   whether every other tensor of INPUT is in OUTPUT with the same dtype, shape and
           bytes, and which are not.
"""
import collections
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "layouts"))
sys.path.insert(0, os.path.join(HERE, "..", "golden", "raw"))
import gen_layouts  # noqa: E402
import gen_raw  # noqa: E402

ST_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
             "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
             "BOOL": torch.bool}


def load_safetensors(path):
    out = collections.OrderedDict()
    tensors, meta = gen_raw.load_safetensors(path, metadata=True)
    for name, (dtype, shape, data) in tensors.items():
        buf = bytearray(data)
        out[name] = torch.frombuffer(buf, dtype=ST_DTYPES[dtype]).reshape(shape) if buf else torch.zeros(shape, dtype=ST_DTYPES[dtype])
    return out, meta


def load(path):
    if path.endswith(".safetensors"):
        return load_safetensors(path)
    if path.endswith(".npz"):
        return collections.OrderedDict((k, torch.from_numpy(v)) for k, v in np.load(path).items()), {}
    return torch.load(path, weights_only=True), {}


def raw(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


MODULE_NAMES = {
    "stripedhyena": {"poles": 4, "residues": 4, "D": 1},
    "s4d": {"kernel.inv_dt": 2, "kernel.A_real": 2, "kernel.A_imag": 2, "kernel.B": 4, "kernel.C": 4, "D": 2},
    "rtf": {"ab": 2, "h_0": 1},
}


def module_kernel(layout, st, prefix, length):
    gen_layouts.L = length
    if layout == "stripedhyena":
        return gen_layouts.stripedhyena_kernel(st)
    if layout == "s4d":
        return gen_layouts.s4d_kernel(st)
    k = rtf_kernel(st, length)
    if prefix.endswith("filter_fn."):  # safari's Hyena-RTF wrapper adds h_0 again as the bias
        k[:, 0] += st["h_0"]
    return k


def rtf_kernel(st, trunc_len, max_periods=100000):
    """The RTF module's recurrent kernel for trunc_len L (ruke1ire/RTF rtf.py; RTF paper eq.
    13), h[t] for t < L with h_0 at t = 0, computed without the companion matrix power that
    gen_layouts.rtf_kernel's get_C solve takes (in float64 it loses digits for poles near the
    circle): the stored b̃ = b(I − Aᴸ) is the numerator of h̃[t] = h[t] − h[t + L] for t ≥ 1,
    so h[t] = Σⱼ h̃[t + jL] there, with h̃ the impulse response of b̃/a run by its recurrence
    (scipy.signal.lfilter), period after period until a period adds less than 1e-17 of the
    sum; b/a is strictly proper, so h[0] is h_0 alone."""
    import scipy.signal
    ab, h0 = st["ab"].numpy(), st["h_0"].numpy()
    D = h0.shape[0]
    out = []
    for c in range(D):
        b, a = np.concatenate([[0.0], ab[D + c]]), np.concatenate([[1.0], ab[c]])
        x = np.zeros(trunc_len)
        x[0] = 1
        zi = np.zeros(len(a) - 1)
        h = np.zeros(trunc_len)
        for _ in range(max_periods):
            y, zi = scipy.signal.lfilter(b, a, x, zi=zi)
            x[0] = 0
            h += y
            if np.abs(y).max() <= 1e-17 * np.abs(h).max():
                break
        h[0] = h0[c]
        out.append(h)
    return torch.tensor(np.array(out))


def source_kernel(layout, st, length):
    gen_layouts.L = length
    if layout == "hyena":
        return gen_layouts.hyena_kernel(st)[:, :length]
    if layout == "stripedhyena":
        return gen_layouts.stripedhyena_kernel(st)
    if layout == "s4d":
        return gen_layouts.s4d_kernel(st)
    raise ValueError("check_distilled.py reads hyena, stripedhyena and s4d layers, not " + layout)


def check(src, path):
    out, meta = load(path)
    manifest = json.load(open(path + ".manifest.json"))
    result = {"layers": {}, "metadata_manifest": "ssmlab_manifest" in meta}
    replaced = set()
    for layer in manifest["layers"]:
        p, L = layer["prefix"], layer["length"]
        old = collections.OrderedDict((k[len(p):], v.to(torch.float64)) for k, v in src.items() if k.startswith(p))
        replaced.update(p + k for k in old)
        new = collections.OrderedDict((k[len(p):], v) for k, v in out.items() if k.startswith(p))
        want = MODULE_NAMES[layer["to_layout"]]
        H = len(layer["channels"])
        names_ok = set(new) == set(want) and all(new[k].dim() == r for k, r in want.items())
        k_in = source_kernel(layer["layout"], old, L)
        st = collections.OrderedDict((k, v.to(torch.float64)) for k, v in new.items())
        k_out = module_kernel(layer["to_layout"], st, p, L)
        rel = (torch.linalg.norm(k_out - k_in, dim=1) / torch.linalg.norm(k_in, dim=1)).tolist()
        result["layers"][p] = {
            "to_layout": layer["to_layout"], "names_ok": names_ok and k_out.shape == (H, L),
            "names": sorted(new), "dtypes": sorted({str(v.dtype) for v in new.values()}),
            "rel_errors": rel, "manifest": [c["rel_error"] for c in layer["channels"]],
            "read_back_error": layer["read_back_error"],
        }
    bad = []
    for k, v in src.items():
        if k in replaced:
            continue
        w = out.get(k)
        if w is None or w.dtype != v.dtype or w.shape != v.shape or raw(w) != raw(v):
            bad.append(k)
    new_names = {p + n for p, l in result["layers"].items() for n in l["names"]}
    extra = [k for k in out if k not in src and k not in new_names]
    result["copied"] = {"count": len(src) - len(replaced), "bad": bad, "extra": extra}
    return result


def main():
    src, _ = load(sys.argv[1])
    json.dump([check(src, path) for path in sys.argv[2:]], sys.stdout)


if __name__ == "__main__":
    main()
