"""Checks a checkpoint ssmlab distill wrote, with the reference code's kernel formulas.

Run:  /usr/bin/python3 testdata/scale/check_distilled.py INPUT OUTPUT...
      /usr/bin/python3 testdata/scale/check_distilled.py --pairs INPUT OUTPUT [INPUT OUTPUT]...

INPUT is the checkpoint distilled, each OUTPUT a distilled one (its manifest is
OUTPUT.manifest.json); --pairs checks each OUTPUT against the INPUT before it, in one process.
They are read as the model's code reads them: torch.load(weights_only=True) for torch.save
files, numpy.load for .npz, a safetensors reader for .safetensors (every dtype, bfloat16 too).
It prints a JSON list, an object per OUTPUT:

  layers   per distilled layer (by prefix): whether its tensors have exactly the names and
           ranks the target layout's module loads with load_state_dict(strict=True), and per
           channel the relative L2 error of the module's kernel against the input layer's
           kernel, beside the manifest's rel_error. Both kernels are computed with
           testdata/layouts/gen_layouts.py's formulas of the layer's family (hyena, s4 (NPLR),
           s4d (SSMKernelDiag with zoh, bilinear or dss, complex or is_real, or
           models/s4/s4d.py), stripedhyena,
           rtf; lru and s5 by their scans, every pair, a channel being an output over every
           input, a bidirectional S5 layer's 2H channels its forward outputs then its backward
           ones, each by the module's scan with the other C zeroed) from the tensors as stored, with the settings the layer's module is built with
           (the manifest's layout options, and those distill keeps for a layer written back in
           its own layout); a setting those formulas do not take is refused;
  copied   whether every other tensor of INPUT is in OUTPUT with the same dtype, shape and
           bytes, and which are not;
  tied, tied_input
           the names that torch.load gives one tensor (the same storage, offset, shape and
           strides), in groups, of OUTPUT and of INPUT: a tied embedding and LM head of a
           torch.save file (none in a safetensors or .npz file, which share none).

A layer's own tensors in INPUT are those its family's formula reads; the others under its
prefix (a StripedHyena filter's short_filter_weight) are its module's neighbours, which distill
copies: they count among the copied, not among the layer's names.
"""
import collections
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "layouts"))
import gen_layouts  # noqa: E402


def load(path):
    if path.endswith(".safetensors"):
        return gen_layouts.load_safetensors(path, metadata=True)
    if path.endswith(".npz"):
        return collections.OrderedDict((k, torch.from_numpy(v)) for k, v in np.load(path).items()), {}
    return torch.load(path, weights_only=True), {}


def raw(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


# The names and ranks each target module loads (s4d: SSMKernelDiag in FFTConv, or with
# is_real=True for an S4D layer built so, or models/s4/s4d.py's S4D for an S4D layer of that
# variant, or --variant minimal, written back in its own layout).
MODULE_NAMES = {
    "stripedhyena": {"poles": 4, "residues": 4, "D": 1},
    "s4d": {"kernel.inv_dt": 2, "kernel.A_real": 2, "kernel.A_imag": 2, "kernel.B": 4, "kernel.C": 4, "D": 2},
    "s4d real": {"kernel.inv_dt": 2, "kernel.A_real": 2, "kernel.B": 3, "kernel.C": 3, "D": 2},
    "s4d minimal": {"kernel.log_dt": 1, "kernel.log_A_real": 2, "kernel.A_imag": 2, "kernel.C": 3, "D": 1},
    "rtf": {"ab": 2, "h_0": 1},
    "lru": {"nu_log": 1, "theta_log": 1, "gamma_log": 1, "B_re": 2, "B_im": 2, "C_re": 2, "C_im": 2, "D": 1},
    "s5": {"Lambda_re": 1, "Lambda_im": 1, "B": 3, "C": 3, "D": 1, "log_step": 2},
    "rotrnn": {"thetas": 2, "gamma_log": 2, "M": 3, "B": 3, "C": 2, "D": 1},
    "s5 bidirectional": {"Lambda_re": 1, "Lambda_im": 1, "B": 3, "C1": 3, "C2": 3, "D": 1, "log_step": 2},
    "s5 bidirectional complex_normal": {"Lambda_re": 1, "Lambda_im": 1, "B": 3, "C": 3, "D": 1, "log_step": 2},
}

# Layout options whose reference default is the only value gen_layouts.py's formulas compute.
FIXED = {"real-transform": "exp", "imag-transform": "none", "modulate": "true", "shift": "0",
         "normalized": "false", "bias": "true", "short-filter": "false"}


class Reads(collections.OrderedDict):
    """A layer's tensors that records which of them a formula reads."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)


def settings(opts):
    for k, v in opts.items():
        if k in FIXED and v.lower() not in (FIXED[k], FIXED[k] + ".0"):
            raise ValueError(f"--{k} {v}: gen_layouts.py's formulas compute only {FIXED[k]}")
    return opts


def h0_twice(prefix, opts):
    """An RTF layer's direct term is 2·h_0 under a Hyena operator's filter_fn. (safari's
    Hyena-RTF wrapper adds h_0 again as the bias), unless --h0 says otherwise."""
    if "h0" in opts:
        return opts["h0"] == "twice"
    return prefix.endswith("filter_fn.") or prefix.endswith("filter_fn/")


def minimal(st):
    return "kernel.log_dt" in st  # models/s4/s4d.py's names, as import tells the variants apart


def family_kernel(layout, st, prefix, length, opts, trunc_len):
    """The kernel (channels, length) of a layer of `layout` with tensors st, its module built
    with the settings opts, by gen_layouts.py's formula of that family."""
    opts = settings(opts)
    gen_layouts.L = length
    if layout == "hyena":
        return gen_layouts.hyena_kernel(st)[:, :length]
    if layout == "stripedhyena":
        return gen_layouts.stripedhyena_kernel(st)
    if layout == "s4d":
        if minimal(st):
            if opts.get("disc", "zoh") != "zoh" or opts.get("dt-transform", "exp") != "exp":
                raise ValueError("models/s4/s4d.py's S4D discretises by zoh with exp(log_dt)")
            return gen_layouts.s4d_minimal_kernel(st)
        disc = opts.get("disc", "zoh")  # dss without a length option: distill's length
        return gen_layouts.s4d_kernel(st, disc=disc, dt_transform=opts.get("dt-transform", "exp"),
                                      length=int(opts.get("length", length)))
    if layout == "s4":
        if opts.get("dt-transform", "exp") != "exp":
            raise ValueError("gen_layouts.s4_kernel takes dt_transform exp")
        if "kernel.l_kernel" not in st:  # a file without the buffer: the length distill took
            st["kernel.l_kernel"] = torch.tensor(int(opts.get("length", length)))
        return gen_layouts.s4_kernel(st)
    if layout == "rtf":
        if st["ab"].shape[0] != 2 * st["h_0"].shape[0]:
            raise ValueError("gen_layouts.py's RTF formulas take num_a = D")
        k = gen_layouts.rtf_kernel(st, trunc_len) if trunc_len > 0 else gen_layouts.rtf_plain_kernel(st)
        if h0_twice(prefix, opts):
            k[:, 0] += st["h_0"]
        return k
    if layout in ("lru", "s5", "rotrnn"):
        # Every pair's impulse response (outputs, inputs, length), by the module's own scan;
        # a bidirectional S5 layer's causal kernels then its anti-causal ones (2H, H, length).
        H = st["D"].shape[0]
        pairs = [(i, j) for i in range(H) for j in range(H)]
        if layout in ("lru", "rotrnn"):
            run = gen_layouts.lru_run if layout == "lru" else gen_layouts.rotrnn_run
            step = lambda u: run(st, u)  # noqa: E731
            return gen_layouts.impulse_mimo(step, H, pairs).reshape(H, H, length)
        kw = dict(disc=opts.get("disc", "zoh"), conj_sym=opts.get("conj-sym", "true") == "true",
                  step_rescale=float(opts.get("step-rescale", "1")), clip_eigs=opts.get("clip-eigs", "false") == "true")
        if "C1" in st or st["C"].shape[1] == 2 * st["Lambda_re"].shape[0]:
            return gen_layouts.s5_bidir_kernels(st, **kw)
        step = lambda u: gen_layouts.s5_run(st, u, **kw)  # noqa: E731
        return gen_layouts.impulse_mimo(step, H, pairs).reshape(H, H, length)
    raise ValueError("check_distilled.py reads hyena, s4, s4d, stripedhyena, rtf, lru, s5 and rotrnn layers, not " + layout)


def module_kernel(layer, st, opts):
    """The kernel of the layer as written, in its target module. A layer written back in its
    own layout keeps its module's settings (the options given); one written in another layout
    is for that layout's plain module, but an S4 layer written as s4d, which is for
    SSMKernelDiag with the S4 layer's disc (bilinear) and transforms (the manifest's module).
    The RTF module's kernel is rtf_kernel's, for trunc_len = the length distilled, h_0 counted
    twice under a Hyena operator's filter_fn. unless an RTF layer's own --h0 says otherwise
    (distill writes it so)."""
    lay, p, L = layer["to_layout"], layer["prefix"], layer["length"]
    own = opts if lay == layer["layout"] else {}
    if lay == "s4d" and layer["layout"] == "s4":
        own = {n: v for n, v in opts.items() if n in ("dt-transform", "real-transform", "imag-transform")}
        own["disc"] = "bilinear"
    if lay == "rtf":
        k = rtf_kernel(st, L)
        if h0_twice(p, {n: v for n, v in own.items() if n == "h0"}):
            k[:, 0] += st["h_0"]  # the wrapper's bias: h_0 again, not the fold
        return k
    return family_kernel(lay, st, p, L, own, 0)


def rtf_kernel(st, trunc_len, max_periods=100000):
    """The RTF module's convolution kernel for trunc_len L (ruke1ire/RTF rtf.py get_k, lines
    78-95; RTF paper eq. 13), the M-periodic sum (M = L + L mod 2) of the response of
    (a, b̃, h_0), computed without get_k's FFT division (in float64 it loses digits for poles
    near the circle, 1e-6 of an order-4 Hyena fit at L = 1024): the impulse response of b̃/a
    run by its recurrence (scipy.signal.lfilter), period after period until a period adds
    less than 1e-17 of the sum. For b̃ = b(I − Aᴹ), h̃[t] = h[t] − h[t + M] for t ≥ 1, so
    the sum is h[t] for 1 ≤ t < M and h_0 + h[M] at t = 0 (the sample get_k folds; the
    recurrent step gives h_0 there)."""
    import scipy.signal
    ab, h0 = st["ab"].numpy(), st["h_0"].numpy()
    D, M = h0.shape[0], trunc_len + trunc_len % 2
    out = []
    for c in range(D):
        b, a = np.concatenate([[0.0], ab[D + c]]), np.concatenate([[1.0], ab[c]])
        x = np.zeros(M)
        x[0] = 1
        zi = np.zeros(len(a) - 1)
        h = np.zeros(M)
        for _ in range(max_periods):
            y, zi = scipy.signal.lfilter(b, a, x, zi=zi)
            x[0] = 0
            h += y
            if np.abs(y).max() <= 1e-17 * np.abs(h).max():
                break
        h[0] += h0[c]
        out.append(h[:trunc_len])
    return torch.tensor(np.array(out))


def ties(st):
    """The groups of names in st that are one tensor: the same storage, offset, shape and
    strides (an empty tensor has no storage to share)."""
    groups = collections.OrderedDict()
    for k, v in st.items():
        if v.numel() == 0:
            continue
        s = v.untyped_storage() if hasattr(v, "untyped_storage") else v.storage()
        groups.setdefault((s.data_ptr(), v.storage_offset(), tuple(v.shape), v.stride(), v.dtype), []).append(k)
    return [g for g in groups.values() if len(g) > 1]


def check(src, src_meta, path):
    out, meta = load(path)
    manifest = json.load(open(path + ".manifest.json"))
    opts = manifest["options"].get("layout_options") or {}
    result = {"layers": {}, "metadata_manifest": "ssmlab_manifest" in meta}
    replaced = set()
    for layer in manifest["layers"]:
        p, L = layer["prefix"], layer["length"]
        old = Reads((k[len(p):], v.to(torch.float64)) for k, v in src.items() if k.startswith(p))
        trunc_len = int(opts.get("trunc-len", src_meta.get("trunc_len", 0)))
        k_in = family_kernel(layer["layout"], old, p, L, opts, trunc_len)
        own = {p + k for k in old.read if p + k in src}  # not an l_kernel the file lacks
        replaced.update(own)
        neighbours = {k for k in src if k.startswith(p) and k not in own}
        new = collections.OrderedDict((k[len(p):], v) for k, v in out.items() if k.startswith(p) and k not in neighbours)
        module = layer["to_layout"]
        if module == "s4d" == layer["layout"] and opts.get("variant", "minimal" if minimal(old) else "ssm") == "minimal":
            module = "s4d minimal"  # written back for models/s4/s4d.py, which loads its own names
        if module == "s4d" == layer["layout"] and opts.get("is-real", str("kernel.A_imag" not in old).lower()) == "true":
            module = "s4d real"  # written back for SSMKernelDiag(is_real=True): no A_imag
        if module == "s5" == layer["layout"] and "C1" in old:
            module = "s5 bidirectional"  # S5SSM(bidirectional=True): C1 and C2
        elif module == "s5" == layer["layout"] and old["C"].shape[1] == 2 * old["Lambda_re"].shape[0]:
            module = "s5 bidirectional complex_normal"  # one C of (H, 2P, 2)
        want = MODULE_NAMES[module]
        H = len(layer["channels"])
        names_ok = set(new) == set(want) and all(new[k].dim() == r for k, r in want.items())
        st = collections.OrderedDict((k, v.to(torch.float64)) for k, v in new.items())
        k_out = module_kernel(layer, st, opts) if names_ok else None
        # A channel is a kernel, or an output of a MIMO layer over every input.
        flat = lambda k: k.reshape(k.shape[0], -1)  # noqa: E731
        rel = (torch.linalg.norm(flat(k_out - k_in), dim=1) / torch.linalg.norm(flat(k_in), dim=1)).tolist() if names_ok else []
        result["layers"][p] = {
            "layout": layer["layout"], "to_layout": layer["to_layout"], "module": module,
            "names_ok": names_ok and k_in.shape == k_out.shape and (k_in.shape[0], k_in.shape[-1]) == (H, L),
            "names": sorted(new), "neighbours": sorted(k[len(p):] for k in neighbours),
            "dtypes": sorted({str(v.dtype) for v in new.values()}),
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
    result["tied"], result["tied_input"] = ties(out), ties(src)
    return result


def main():
    args = sys.argv[1:]
    if args and args[0] == "--pairs":
        if len(args) % 2 != 1:
            sys.exit("--pairs takes INPUT OUTPUT pairs")
        pairs = list(zip(args[1::2], args[2::2]))
    else:
        pairs = [(args[0], o) for o in args[1:]]
    loaded = {}
    results = []
    for i, o in pairs:
        if i not in loaded:
            loaded[i] = load(i)
        results.append(check(*loaded[i], o))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
