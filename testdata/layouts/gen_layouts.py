"""Golden files for ssmlab's model layouts (sessions/layouts), from Debian's python3-torch.

Run from the repository root:

    /usr/bin/python3 testdata/layouts/gen_layouts.py

1. For every layout it builds a small layer from a fixed seed, stores its state_dict under the
   reference code's own names (behind a module prefix) in float64 and float32, in a torch.save
   file, a .safetensors file and an .npz file, and computes the layer's impulse response with
   the reference code's kernel formula, re-implemented here (each function cites its source
   file and lines), in float64 from the stored (rounded) values. expected.json lists, per file,
   the layout, prefix and options to import it with, and the kernels (channel by channel,
   the direct term included at t = 0).
2. It loads the files the Go test wrote (testdata/layouts/export, made by
   `go test ./sessions/layouts -run TestExportGolden -update`) with torch.load(weights_only=True)
   (or the safetensors and numpy readers), checks that their names and shapes are exactly the
   module's (what load_state_dict(strict=True) demands), computes the module's kernel with the
   same formulas and records how far it is from the bank's impulse response (bank.json) in
   expected.json under "exports".

The reference repositories were read at: state-spaces/s4 e757cef, togethercomputer/stripedhyena
7e13f61, HazyResearch/safari 02220c6, ruke1ire/RTF 1d9e1e5, NicolasZucchet/minimal-LRU and
lindermanlab/S5 (HEAD of their default branches); RotRNN from the paper's Appendix C listing.
"""
import collections
import json
import math
import os
import struct

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
L = 48  # samples of every reference kernel
torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------------- containers

# The safetensors name of each torch dtype, and the torch dtype of each name.
ST_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
            torch.complex64: "C64", torch.complex128: "C128", torch.int64: "I64", torch.int32: "I32",
            torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}
ST_DTYPES = {name: dt for dt, name in ST_NAMES.items()}


def array_bytes(a):
    """A numpy array's elements as little-endian bytes in C order, whatever its byte order and layout."""
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes(order="C")


def tensor_bytes(t):
    """A tensor's elements as little-endian bytes in C order (bfloat16, which numpy lacks, by its bits)."""
    t = t.detach().contiguous()
    return array_bytes((t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy())


def save_safetensors(path, tensors, dtype=None, metadata=None):
    """The one safetensors writer of the scripts under testdata: the format (8-byte little-endian
    header length, JSON header padded with spaces to a multiple of 8 bytes, data) written by
    hand, as Debian has no python3-safetensors. tensors maps name → tensor in data order, each
    stored in dtype, or in its own dtype where dtype is None; metadata is the header's
    __metadata__ (string → string), written first."""
    header, blobs, off = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        if dtype is not None:
            t = t.to(dtype)
        b = tensor_bytes(t)
        header[name] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_safetensors(path, metadata=False):
    """The one safetensors reader of the scripts under testdata (the export checks here,
    testdata/golden/raw/gen_raw.py, testdata/scale/check_distilled.py): name → tensor in the
    file's order, in the file's dtype (bfloat16, integers and booleans too), and the metadata
    if asked for."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = collections.OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        dt, shape = ST_DTYPES[info["dtype"]], info["shape"]
        buf = bytearray(data[8 + n + a:8 + n + b])  # torch.frombuffer wants a writable buffer, and a non-empty one
        out[name] = torch.frombuffer(buf, dtype=dt).reshape(shape) if buf else torch.zeros(shape, dtype=dt)
    return (out, header.get("__metadata__", {})) if metadata else out


def rounded(state, dtype):
    """The state as stored in dtype, read back to float64 (what the reference sees)."""
    return collections.OrderedDict((k, v.to(dtype).to(torch.float64) if v.is_floating_point() else v) for k, v in state.items())


def write_case(cases, name, layout, prefix, state, kernel_fn, options=None, containers=("pt64", "pt32", "st32", "npz64")):
    """Stores state in each container and records the reference kernels of what was stored."""
    for c in containers:
        dtype = torch.float64 if c.endswith("64") else torch.float32
        ext = {"pt": "pt", "st": "safetensors", "np": "npz"}[c[:2]]
        fname = f"{name}_{c[-2:]}.{ext}"
        path = os.path.join(HERE, fname)
        stored = collections.OrderedDict((prefix + k, v.to(dtype) if v.is_floating_point() else v) for k, v in state.items())
        if ext == "pt":
            torch.save(stored, path)
        elif ext == "safetensors":
            save_safetensors(path, collections.OrderedDict((k, v) for k, v in stored.items() if v.is_floating_point()), dtype)
        else:
            np.savez(path, **{k: v.numpy() for k, v in stored.items() if v.is_floating_point()})
        opts = dict(options or {})
        if ext != "pt" and "kernel.l_kernel" in state:
            opts["length"] = str(int(state["kernel.l_kernel"]))  # only torch files hold the int buffer
        k = kernel_fn(rounded(state, dtype))
        cases[fname] = {"layout": layout, "prefix": prefix, "options": opts, "dtype": str(dtype).replace("torch.", ""),
                        "kernels": [[float(x) for x in row] for row in k]}


# ---------------------------------------------------------------- S4D

def param_transform(p, transform):
    """state-spaces/s4 src/models/sequence/kernels/ssm.py, lines 94-108."""
    if transform == "none":
        return p
    if transform == "exp":
        return torch.exp(p)
    if transform == "softplus":
        return torch.nn.functional.softplus(p)
    raise ValueError(transform)


def s4d_kernel(st, disc="zoh", dt_transform="exp", length=L):
    """SSMKernelDiag.forward (ssm.py lines 536-567 _get_params, 569-636 forward, with
    log_vandermonde_naive of src/models/functional/vandermonde.py lines 36-49) inside FFTConv,
    whose D is added to the output (fftconv.py line 119): the kernel with D at t = 0. A module
    built with is_real=True (no A_imag) holds A, B and C real (lines 526-529, 540-543) and
    runs the same formulas on them: 2·Re of a real sum, and for bilinear the logarithm of a
    real dA (NaN where it is negative)."""
    if "kernel.A_imag" not in st:  # is_real
        A = -param_transform(st["kernel.A_real"], "exp")  # (S N)
        B, C = st["kernel.B"], st["kernel.C"]  # (1 S N), (C H N)
    else:
        A = -param_transform(st["kernel.A_real"], "exp") - 1j * param_transform(st["kernel.A_imag"], "none")  # (S N)
        B = torch.view_as_complex(st["kernel.B"].contiguous())  # (1 S N)
        C = torch.view_as_complex(st["kernel.C"].contiguous())  # (C H N)
    H = C.shape[1]
    dt = param_transform(st["kernel.inv_dt"], dt_transform)  # (H 1)
    A = A.repeat(H // A.shape[0], 1)  # repeat 't n -> (v t) n'
    B = B.repeat(1, H // B.shape[1], 1)
    dtA = dt * A
    C = (B[:, None, :, :] * C).view(-1, H, A.shape[-1])
    if disc == "zoh":
        C = C * (torch.exp(dtA) - 1.) / A
        K = 2 * torch.einsum("...n,...nl->...l", C, torch.exp(dtA.unsqueeze(-1) * torch.arange(L))).real
    elif disc == "bilinear":
        C = C * (1. - dtA / 2).reciprocal() * dt
        dA = (1. + dtA / 2) / (1. - dtA / 2)
        K = 2 * torch.einsum("...n,...nl->...l", C, torch.exp(dA.log().unsqueeze(-1) * torch.arange(L))).real
    elif disc == "dss":  # lines 605-625, with the kernel's own length `length`
        P = dtA.unsqueeze(-1) * torch.arange(length)
        A_gt_0 = A.real > 0
        if A_gt_0.any():
            P_max = dtA * (A_gt_0 * (length - 1))
            P = P - P_max.unsqueeze(-1)
        S = P.exp()
        dtA_neg = dtA * (1 - 2 * A_gt_0)
        num = dtA_neg.exp() - 1
        den = (dtA_neg * length).exp() - 1
        x = den * A
        x_conj = x.conj()
        r = x_conj / (x * x_conj + 1e-7)
        C = C * num * r
        K = torch.einsum("chn,hnl->chl", C, S).real[..., :L]
    K = K.reshape(-1, H, L)
    D = st["D"].reshape(-1, H)
    K[:, :, 0] += D
    return K.reshape(-1, L)


def s4d_state(seed, H=3, N2=4, S=1):
    g = torch.Generator().manual_seed(seed)
    A_real = torch.log(0.3 + torch.rand(S, N2, generator=g))
    A_imag = math.pi * torch.rand(S, N2, generator=g) * 3
    A_imag[0, 0] = 0.0  # a real pole: merged with its conjugate into one mode
    return collections.OrderedDict([
        ("kernel.inv_dt", torch.log(0.05 + 0.3 * torch.rand(H, 1, generator=g))),
        ("kernel.A_real", A_real),
        ("kernel.A_imag", A_imag),
        ("kernel.B", torch.randn(1, S, N2, 2, generator=g)),
        ("kernel.C", torch.randn(1, H, N2, 2, generator=g)),
        ("D", torch.randn(1, H, generator=g)),
    ])


def s4d_real_state(seed, H=3, N=4):
    """An S4D layer built with is_real=True and n_ssm = H: real A_real (H, N), B (1, H, N)
    and C (1, H, N), no A_imag; Δt·A in (−0.5, 0), so that bilinear's poles are positive too."""
    g = torch.Generator().manual_seed(seed)
    return collections.OrderedDict([
        ("kernel.inv_dt", torch.log(0.05 + 0.3 * torch.rand(H, 1, generator=g))),
        ("kernel.A_real", torch.log(0.3 + torch.rand(H, N, generator=g))),
        ("kernel.B", torch.randn(1, H, N, generator=g)),
        ("kernel.C", torch.randn(1, H, N, generator=g)),
        ("D", torch.randn(1, H, generator=g)),
    ])


def s4d_minimal_kernel(st):
    """models/s4/s4d.py S4DKernel.forward (lines 31-47) and S4D.forward's D (line 102)."""
    dt = torch.exp(st["kernel.log_dt"])
    C = torch.view_as_complex(st["kernel.C"].contiguous())
    A = -torch.exp(st["kernel.log_A_real"]) + 1j * st["kernel.A_imag"]
    dtA = A * dt.unsqueeze(-1)
    K = dtA.unsqueeze(-1) * torch.arange(L)
    C = C * (torch.exp(dtA) - 1.) / A
    K = 2 * torch.einsum("hn, hnl -> hl", C, torch.exp(K)).real
    K[:, 0] += st["D"]
    return K


# ---------------------------------------------------------------- S4 (DPLR)

def _conj(x):
    return torch.cat([x, x.conj()], dim=-1)


def s4_dense(st):
    """The DPLR layer's discrete (dA, dB) by its bilinear step, SSMKernelDPLR._setup_linear and
    _step_state_linear (ssm.py lines 911-989), written densely: A = diag(Λ, Λ̄) − p pᴴ."""
    Lam = -param_transform(st["kernel.A_real"], "exp") - 1j * param_transform(st["kernel.A_imag"], "none")  # (S N)
    P = torch.view_as_complex(st["kernel.P"].contiguous())  # (R S N)
    B = torch.view_as_complex(st["kernel.B"].contiguous())[0]  # (S N)
    dt = param_transform(st["kernel.inv_dt"], "exp")  # (H 1)
    H = dt.shape[0]
    S = Lam.shape[0]
    out = []
    for h in range(H):
        s = h % S
        A = torch.diag(_conj(Lam[s]))
        for r in range(P.shape[0]):
            p = _conj(P[r, s])
            A = A - torch.outer(p, p.conj())
        n = A.shape[0]
        I = torch.eye(n, dtype=A.dtype)
        dA = torch.linalg.solve(I - dt[h, 0] / 2 * A, I + dt[h, 0] / 2 * A)
        dB = dt[h, 0] * torch.linalg.solve(I - dt[h, 0] / 2 * A, _conj(B[s]))
        out.append((dA, dB))
    return out


def s4_state(seed, H=2, N2=3, R=1, l_kernel=64):
    """Random DPLR parameters; C̃ = C(I − dAᴸ) made as _setup_C does (ssm.py lines 683-709)."""
    g = torch.Generator().manual_seed(seed)
    st = collections.OrderedDict([
        ("kernel.inv_dt", torch.log(0.05 + 0.2 * torch.rand(H, 1, generator=g))),
        ("kernel.A_real", torch.log(0.5 + torch.rand(H, N2, generator=g))),
        ("kernel.A_imag", math.pi * torch.arange(N2).repeat(H, 1) + 0.3 * torch.rand(H, N2, generator=g)),
        ("kernel.B", torch.randn(1, H, N2, 2, generator=g) * 0.5),
        ("kernel.P", torch.randn(R, H, N2, 2, generator=g) * 0.3),
    ])
    C = torch.view_as_complex(torch.randn(1, H, N2, 2, generator=g).contiguous())
    Ct = torch.zeros_like(C)
    for h, (dA, _) in enumerate(s4_dense(st)):
        c = _conj(C[0, h])
        prod = torch.linalg.matrix_power(dA, l_kernel).transpose(-1, -2) @ c
        Ct[0, h] = (c - prod)[:N2]
    st["kernel.C"] = torch.view_as_real(Ct)
    st["D"] = torch.randn(1, H, generator=g)
    st["kernel.l_kernel"] = torch.tensor(l_kernel)
    return st


def s4_kernel(st):
    """SSMKernelDPLR.forward (ssm.py lines 788-890) for rank 1 with cauchy_naive
    (src/models/functional/cauchy.py lines 32-43), at the stored l_kernel, plus FFTConv's D."""
    lk = int(st["kernel.l_kernel"])
    dt = param_transform(st["kernel.inv_dt"], "exp")  # (H 1)
    A = -param_transform(st["kernel.A_real"], "exp") - 1j * param_transform(st["kernel.A_imag"], "none")
    B = torch.view_as_complex(st["kernel.B"].contiguous())  # (1 H N)
    C = torch.view_as_complex(st["kernel.C"].contiguous())  # (1 H N)
    P = torch.view_as_complex(st["kernel.P"].contiguous())  # (1 H N)
    Q = P.conj()
    omega = torch.tensor(np.exp(-2j * np.pi / lk)) ** torch.arange(0, lk // 2 + 1)
    z = 2 * (1 - omega) / (1 + omega)
    A = A * dt
    Bc = torch.cat([B, P], dim=-3)
    Cc = torch.cat([C, Q], dim=-3)
    v = Bc.unsqueeze(-3) * Cc.unsqueeze(-4) * dt  # (2, 2, H, N)
    vv, ww = _conj(v), _conj(A)
    r = torch.sum(vv.unsqueeze(-1) / (z - ww.unsqueeze(-1)), dim=-2)  # (2, 2, H, L/2+1)
    k_f = r[:-1, :-1] - r[:-1, -1:] * r[-1:, :-1] / (1 + r[-1:, -1:])
    k_f = k_f * 2 / (1 + omega)
    k = torch.fft.irfft(k_f, n=lk)[..., :L]  # (1, 1, H, L)
    k = k[0, 0].clone()
    k[:, 0] += st["D"].reshape(-1)
    return k


# ---------------------------------------------------------------- StripedHyena

def stripedhyena_kernel(st):
    """ParallelHyenaFilter.compute_filter (stripedhyena/model.py lines 266-274) and the direct
    term D of HyenaInferenceEngine.parallel_iir (engine.py line 198)."""
    residues = torch.view_as_complex(st["residues"].contiguous())
    log_poles = torch.view_as_complex(st["poles"].contiguous()).log()
    t = torch.arange(L)[None, None]
    h = (residues * (log_poles * t).exp()).real.sum(1)  # (D, L)
    h[:, 0] += st["D"]
    return h


def stripedhyena_state(seed, D=3, N=4):
    g = torch.Generator().manual_seed(seed)
    r = 0.4 + 0.55 * torch.rand(D, N, 1, generator=g)
    th = math.pi * (2 * torch.rand(D, N, 1, generator=g) - 1)
    th[0, 0, 0] = 0.0  # a real pole
    poles = torch.stack([r * torch.cos(th), r * torch.sin(th)], dim=-1)
    return collections.OrderedDict([
        ("poles", poles),
        ("residues", torch.randn(D, N, 1, 2, generator=g)),
        ("D", torch.randn(D, generator=g)),
        ("short_filter_weight", torch.randn(3 * D, 1, 3, generator=g)),
    ])


def short_filter_kernel(st):
    """F.conv1d with padding L−1 cut to L samples (model.py ParallelHyenaFilter, engine.py
    parallel_fir): the impulse response of each of the 3·D channels is the weight reversed."""
    w = st["short_filter_weight"]
    x = torch.zeros(1, w.shape[0], L)
    x[..., 0] = 1
    y = torch.nn.functional.conv1d(x, w, groups=w.shape[0], padding=w.shape[-1] - 1)[..., :L]
    return y[0]


# ---------------------------------------------------------------- Hyena (safari)

def hyena_state(seed, d_model=3, emb_dim=5, order=8, seq_len=L):
    """HyenaFilter's parameters (safari src/models/sequence/hyena.py lines 55-171), with
    num_inner_mlps = 2 and a shared Sin: implicit_filter.1/.3/.5.freq are one tensor."""
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, seq_len)[None, :, None]  # PositionalEmbedding, lines 64-86
    bands = (emb_dim - 1) // 2
    t_rescaled = torch.linspace(0, seq_len - 1, seq_len)[None, :, None]
    w = 2 * math.pi * t_rescaled / seq_len
    f = torch.linspace(1e-4, bands - 1, bands)[None, None]
    zz = torch.exp(-1j * f * w)
    z = torch.cat([t, zz.real, zz.imag], dim=-1)
    freq = 1 + torch.rand(1, order, generator=g)
    deltas = torch.linspace(math.log(1e-2) / 1.5, math.log(1e-2) / 0.3, d_model)[None, None]  # ExponentialModulation
    return collections.OrderedDict([
        ("bias", torch.randn(d_model, generator=g)),
        ("pos_emb.z", z),
        ("pos_emb.t", t),
        ("implicit_filter.0.weight", torch.randn(order, emb_dim, generator=g) / math.sqrt(emb_dim)),
        ("implicit_filter.0.bias", torch.randn(order, generator=g) * 0.1),
        ("implicit_filter.1.freq", freq),
        ("implicit_filter.2.weight", torch.randn(order, order, generator=g) / math.sqrt(order)),
        ("implicit_filter.2.bias", torch.randn(order, generator=g) * 0.1),
        ("implicit_filter.3.freq", freq),
        ("implicit_filter.4.weight", torch.randn(order, order, generator=g) / math.sqrt(order)),
        ("implicit_filter.4.bias", torch.randn(order, generator=g) * 0.1),
        ("implicit_filter.5.freq", freq),
        ("implicit_filter.6.weight", torch.randn(d_model, order, generator=g) / math.sqrt(order)),
        ("modulation.deltas", deltas),
    ])


def hyena_filter(st):
    """HyenaFilter.filter's h before any normalisation (hyena.py lines 179-187):
    implicit_filter(z), then the modulation by exp(−t·|deltas|) (lines 109-113); (L, d_model)."""
    h = st["pos_emb.z"][0]
    for i in range(7):
        if f"implicit_filter.{i}.weight" in st:
            h = h @ st[f"implicit_filter.{i}.weight"].T
            if f"implicit_filter.{i}.bias" in st:
                h = h + st[f"implicit_filter.{i}.bias"]
        else:
            h = torch.sin(st[f"implicit_filter.{i}.freq"] * h)
    return h * torch.exp(-st["pos_emb.t"][0] * st["modulation.deltas"][0].abs())


def hyena_kernel(st):
    """HyenaFilter.filter (hyena_filter) and fftconv_ref's bias term u·D (lines 28-47)."""
    h = hyena_filter(st)
    k = h.T.clone()  # (d_model, L)
    k[:, 0] += st["bias"]
    return k


# ---------------------------------------------------------------- LRU, S5, RotRNN (MIMO)

def impulse_mimo(step, n_in, pairs, anticausal=False):
    """Feeds a unit impulse into input j and records output i for each pair (i, j); with
    anticausal, the impulse at the last sample and the output read backwards: the kernel at
    lag k ≥ 0 that an anti-causal layer applies to u[t + k]."""
    out = []
    for i, j in pairs:
        u = torch.zeros(L, n_in)
        u[-1 if anticausal else 0, j] = 1
        y = step(u)[:, i]
        out.append(y.flip(0) if anticausal else y)
    return torch.stack(out)


def lru_state(seed, H=3, P=4):
    g = torch.Generator().manual_seed(seed)
    nu = torch.log(-0.5 * torch.log(0.4 + 0.5 * torch.rand(P, generator=g)))  # nu_init
    theta = torch.log(6.28 * torch.rand(P, generator=g))  # theta_init
    lam = torch.exp(-torch.exp(nu) + 1j * torch.exp(theta))
    return collections.OrderedDict([
        ("nu_log", nu), ("theta_log", theta),
        ("gamma_log", torch.log(torch.sqrt(1 - lam.abs() ** 2))),  # gamma_log_init
        ("B_re", torch.randn(P, H, generator=g) / math.sqrt(2 * H)),
        ("B_im", torch.randn(P, H, generator=g) / math.sqrt(2 * H)),
        ("C_re", torch.randn(H, P, generator=g) / math.sqrt(P)),
        ("C_im", torch.randn(H, P, generator=g) / math.sqrt(P)),
        ("D", torch.randn(H, generator=g)),
    ])


def lru_run(st, u):
    """LRU.__call__ (minimal-LRU lru/model.py lines 82-95), as a sequential scan."""
    lam = torch.exp(-torch.exp(st["nu_log"]) + 1j * torch.exp(st["theta_log"]))
    B = (st["B_re"] + 1j * st["B_im"]) * torch.exp(st["gamma_log"])[:, None]
    C = st["C_re"] + 1j * st["C_im"]
    x = torch.zeros(lam.shape[0], dtype=lam.dtype)
    ys = []
    for t in range(u.shape[0]):
        x = lam * x + B @ u[t].to(lam.dtype)
        ys.append((C @ x).real + st["D"] * u[t])
    return torch.stack(ys)


def s5_state(seed, H=3, P=4):
    g = torch.Generator().manual_seed(seed)
    return collections.OrderedDict([
        ("Lambda_re", -0.1 - torch.rand(P, generator=g)),
        ("Lambda_im", math.pi * torch.rand(P, generator=g)),
        ("B", torch.randn(P, H, 2, generator=g) / math.sqrt(H)),
        ("C", torch.randn(H, P, 2, generator=g) / math.sqrt(P)),
        ("D", torch.randn(H, generator=g)),
        ("log_step", torch.log(0.1 + 0.5 * torch.rand(P, 1, generator=g))),
    ])


def s5_bidir_state(seed, H=3, P=4):
    """A bidirectional S5SSM's parameters: C1 and C2 in place of C (s5/ssm.py lines 193-203)."""
    g = torch.Generator().manual_seed(seed + 1000)
    st = collections.OrderedDict()
    for k, v in s5_state(seed, H, P).items():
        if k == "C":
            st["C1"], st["C2"] = v, torch.randn(H, P, 2, generator=g) / math.sqrt(P)
        else:
            st[k] = v
    return st


def s5_bidir_cn_state(seed, H=3, P=4):
    """A bidirectional S5SSM built with C_init="complex_normal": one C of (H, 2P, 2), C1's
    columns then C2's (s5/ssm.py lines 183-186)."""
    st = s5_bidir_state(seed, H, P)
    c = torch.cat([st.pop("C1"), st.pop("C2")], dim=1)
    return collections.OrderedDict([(k, st[k]) for k in ("Lambda_re", "Lambda_im", "B")] + [("C", c)] +
                                   [(k, st[k]) for k in ("D", "log_step")])


def forward_only(st):
    """A complex_normal bidirectional layer with the reverse scan's columns of C zeroed."""
    c = st["C"].clone()
    c[:, st["Lambda_re"].shape[0]:] = 0
    return collections.OrderedDict(st, C=c)


def s5_run(st, u, disc="zoh", conj_sym=True, step_rescale=1.0, clip_eigs=False):
    """S5SSM (lindermanlab/S5 s5/ssm.py lines 11-42 discretize_*, 60-88 apply_ssm with
    conj_sym, 139-247 setup and __call__: clip_eigs at lines 154-155, step_rescale at 219), as a
    sequential scan. A bidirectional layer (C1 and C2, lines 193-203) scans again in reverse
    over the same Λ̄ and B̄ (associative_scan with reverse=True, lines 79-83) and applies the
    concatenation of C1 and C2 to both states."""
    re = torch.clamp(st["Lambda_re"], max=-1e-4) if clip_eigs else st["Lambda_re"]
    Lam = re + 1j * st["Lambda_im"]
    Bt = st["B"][..., 0] + 1j * st["B"][..., 1]
    bidir = "C1" in st or st["C"].shape[1] == 2 * st["Lambda_re"].shape[0]
    Cs = [st["C1"], st["C2"]] if "C1" in st else [st["C"]]
    Ct = torch.cat([c[..., 0] + 1j * c[..., 1] for c in Cs], dim=-1)
    step = step_rescale * torch.exp(st["log_step"][:, 0])
    if disc == "zoh":
        Lb = torch.exp(Lam * step)
        Bb = (1 / Lam * (Lb - 1))[..., None] * Bt
    else:
        BL = 1 / (1 - (step / 2.0) * Lam)
        Lb = BL * (1 + (step / 2.0) * Lam)
        Bb = (BL * step)[..., None] * Bt
    xs = []
    x = torch.zeros(Lam.shape[0], dtype=Lam.dtype)
    for t in range(u.shape[0]):
        x = Lb * x + Bb @ u[t].to(Lam.dtype)
        xs.append(x)
    if bidir:
        x2 = torch.zeros(Lam.shape[0], dtype=Lam.dtype)
        for t in reversed(range(u.shape[0])):
            x2 = Lb * x2 + Bb @ u[t].to(Lam.dtype)
            xs[t] = torch.cat([xs[t], x2])
    return torch.stack([(2 if conj_sym else 1) * (Ct @ x).real + st["D"] * u[t] for t, x in enumerate(xs)])


def s5_bidir_kernels(st, **kw):
    """A bidirectional S5 layer's kernels (2H, H, L), each by the module's own scan (s5_run):
    rows 0..H-1 causal, of the layer with C2 (or C's last P columns) zeroed; rows H..2H-1
    anti-causal (lag k ≥ 0 on u[t + k]), of the layer with C1 (C's first P columns) and D
    zeroed, fed an impulse at the last sample and read
    backwards."""
    H, P = st["D"].shape[0], st["Lambda_re"].shape[0]
    pairs = [(i, j) for i in range(H) for j in range(H)]
    if "C1" in st:
        fwd = collections.OrderedDict(st, C2=torch.zeros_like(st["C2"]))
        bwd = collections.OrderedDict(st, C1=torch.zeros_like(st["C1"]), D=torch.zeros_like(st["D"]))
    else:  # one C of (H, 2P, 2) (C_init complex_normal): its first P columns act forward
        fwd = forward_only(st)
        c = st["C"].clone()
        c[:, :P] = 0
        bwd = collections.OrderedDict(st, C=c, D=torch.zeros_like(st["D"]))
    kf = impulse_mimo(lambda u: s5_run(fwd, u, **kw), H, pairs).reshape(H, H, -1)
    kb = impulse_mimo(lambda u: s5_run(bwd, u, **kw), H, pairs, anticausal=True).reshape(H, H, -1)
    return torch.cat([kf, kb])


def rotrnn_state(seed, heads=2, k=4, du=3):
    g = torch.Generator().manual_seed(seed)
    return collections.OrderedDict([
        ("thetas", 3 * torch.rand(heads, k // 2, generator=g)),
        ("gamma_log", torch.log(-0.5 * torch.log(0.5 + 0.4 * torch.rand(heads, 1, generator=g)))),
        ("M", torch.randn(heads, k, k, generator=g) * 0.5),
        ("B", torch.randn(heads, k, du, generator=g) / math.sqrt(du)),
        ("C", torch.randn(du, heads * k, generator=g) / math.sqrt(heads * k)),
        ("D", torch.randn(du, generator=g)),
    ])


def rotrnn_run(st, u):
    """The RotRNN forward of the paper's Appendix C listing (lines 8-52 there), with the scan
    written sequentially: x ← γ·Θ(θ)x + b per head, rotations on consecutive pairs."""
    gam = torch.exp(-torch.exp(st["gamma_log"]))[:, 0]
    B = st["B"]
    tr = torch.einsum("hij,hij->h", B, B)
    xi = torch.sqrt((1 - gam ** 2) / tr)
    Bn = xi[:, None, None] * B
    M = st["M"]
    Pm = torch.matrix_exp(M - M.transpose(1, 2))
    th = st["thetas"]
    heads, k = M.shape[0], M.shape[1]
    x = torch.zeros(heads, k)
    ys = []
    for t in range(u.shape[0]):
        b = torch.einsum("hdi,i->hd", Bn, u[t])
        b = torch.einsum("hid,hi->hd", Pm, b)  # P^T b: (P^T)_{d i} = P_{i d}
        off = torch.stack([-x[:, 1::2], x[:, 0::2]], dim=-1).reshape(heads, k)
        thr = th.repeat_interleave(2, dim=-1)
        x = gam[:, None] * (torch.cos(thr) * x + torch.sin(thr) * off) + b
        xo = torch.einsum("hdi,hi->hd", Pm, x).reshape(-1)
        ys.append(st["C"] @ xo + st["D"] * u[t])
    return torch.stack(ys)


# ---------------------------------------------------------------- RTF

def rtf_state(seed, D=2, N=3, trunc_len=32):
    """An RTF layer (ruke1ire/RTF rtf.py, class RTF lines 16-76) with stable denominators and
    numerators stored as the module trains them, b̃ = b(I − Aᴸ) (get_C inverts it)."""
    g = torch.Generator().manual_seed(seed)
    dens = []
    for _ in range(D):
        roots = torch.complex(0.3 + 0.5 * torch.rand(1, generator=g), 0.4 * torch.rand(1, generator=g))
        poly = np.poly([roots.item(), roots.conj().item(), 0.5 * torch.rand(1, generator=g).item()]).real
        dens.append(torch.tensor(poly[1:]))
    a = torch.stack(dens)
    b = torch.randn(D, N, generator=g)
    bt = []
    for c in range(D):
        A = torch.roll(torch.eye(N), 1, 0)
        A[0] = -a[c]
        bt.append(b[c] @ (torch.eye(N) - torch.linalg.matrix_power(A, trunc_len)))
    return collections.OrderedDict([("ab", torch.cat([a, torch.stack(bt)])), ("h_0", torch.randn(D, generator=g))]), trunc_len


def rtf_get_k(st, trunc_len, length=None):
    """RTF.get_k (rtf.py lines 78-95; num_a = D, no constraint): the coefficients zero-padded
    to M = trunc_len + trunc_len % 2, K = rfft(b̃)/rfft(a) + h_0, irfft cut to length samples
    (trunc_len by default). What the module's forward pass convolves with."""
    ab, h0 = st["ab"].clone(), st["h_0"]
    D, N = h0.shape[0], ab.shape[1]
    ab = torch.nn.functional.pad(ab, (1, trunc_len - N - 1 + trunc_len % 2))
    ab[:D, 0] = 1.0
    AB = torch.fft.rfft(ab, dim=-1)
    K = AB[D:] / AB[:D] + h0[:, None]
    return torch.fft.irfft(K, dim=-1)[:, :length or trunc_len]


def rtf_kernel(st, trunc_len):
    """The filter ssmlab reads from an RTF layer with trunc_len, for L samples: the module's
    get_k kernel (rtf_get_k) for t < trunc_len, continued by the recurrent inference of
    RTF.get_k_step with correct_C (rtf.py lines 127-167), with c from b̃ = c(I − Aᴸ) as the
    RTF paper's eq. 13 and RTF2.get_C_prime (rtf.py lines 291-301) form it. The two agree
    for 1 ≤ t < trunc_len (checked here); at t = 0 get_k holds h_0 + h[M], the sample its
    FFT folds, and get_k_step h_0. (RTF.get_C, lines 139-151, solves (I − Aᴸ)c = b̃, the
    transpose: it agrees with its own get_k only where Aᴸ vanishes; ssmlab follows eq. 13.)"""
    ab, h0 = st["ab"], st["h_0"]
    D, N = h0.shape[0], ab.shape[1]
    a, bt = ab[:D], ab[D:]
    k_fft = rtf_get_k(st, trunc_len)
    out = []
    for c in range(D):
        A = torch.roll(torch.eye(N), 1, 0)
        A[0] = -a[c]
        cc = torch.linalg.solve((torch.eye(N) - torch.linalg.matrix_power(A, trunc_len)).T, bt[c])  # get_C
        x = torch.zeros(N)
        k = []
        for t in range(L):
            u = 1.0 if t == 0 else 0.0
            k.append(x @ cc + h0[c] * u)
            xf = torch.roll(x, 1)
            xf[0] = -a[c] @ x + u
            x = xf
        k = torch.stack(k)
        err = float(torch.max(torch.abs(k[1:trunc_len] - k_fft[c, 1:])) / torch.max(torch.abs(k_fft[c])))
        assert err < 1e-12, ("get_k and get_k_step differ away from t = 0", c, err)
        k[0] = k_fft[c, 0]
        out.append(k)
    return torch.stack(out)


# ---------------------------------------------------------------- export checks

def check_exports(results):
    """Loads what the Go test exported, checks the names and shapes the module's
    load_state_dict(strict=True) expects, and measures its kernel against bank.json."""
    d = os.path.join(HERE, "export")
    if not os.path.isdir(d):
        return
    banks = json.load(open(os.path.join(d, "bank.json")))
    for fname in sorted(os.listdir(d)):
        if fname == "bank.json":
            continue
        path = os.path.join(d, fname)
        layout, prefix, dt = fname.split(".")[0].split("_")[0], "blocks.1.filter.", None
        if fname.endswith(".pt"):
            st = torch.load(path, weights_only=True)
        elif fname.endswith(".safetensors"):
            st = load_safetensors(path)
        else:
            st = collections.OrderedDict((k, torch.from_numpy(v)) for k, v in np.load(path).items())
        dtypes = sorted({str(v.dtype).replace("torch.", "") for v in st.values()})
        st = collections.OrderedDict((k[len(prefix):], v.to(torch.float64)) for k, v in st.items())
        if layout in ("lru", "s5", "s5bil", "s5bidir", "rotrnn"):
            check_mimo_export(results, fname, layout, st, dtypes, banks)
            continue
        want = banks["impulse"]
        if layout.startswith("rtftrunc") or layout.startswith("rtffold"):
            check_rtf_trunc_export(results, fname, layout, st, dtypes, banks)
            continue
        if layout in ("s4dshared", "s4dsharedbil"):  # n_ssm SSMs (A, B) tiled over the channels
            want = banks[layout[3:] + "_impulse"]  # shared_impulse, sharedbil_impulse
        H = len(want)
        if layout in ("s4dshared", "s4dsharedbil"):
            S = banks["shared_ssms"]
            names = {"kernel.inv_dt": (H, 1), "kernel.A_real": (S, -1), "kernel.A_imag": (S, -1),
                     "kernel.B": (1, S, -1, 2), "kernel.C": (1, H, -1, 2), "D": (1, H)}
            k = s4d_kernel(st, disc="bilinear" if layout == "s4dsharedbil" else "zoh")
        elif layout == "stripedhyena":
            names = {"poles": (H, -1, 1, 2), "residues": (H, -1, 1, 2), "D": (H,)}
            k = stripedhyena_kernel(st)
        elif layout == "s4d":
            names = {"kernel.inv_dt": (H, 1), "kernel.A_real": (H, -1), "kernel.A_imag": (H, -1),
                     "kernel.B": (1, H, -1, 2), "kernel.C": (1, H, -1, 2), "D": (1, H)}
            k = s4d_kernel(st)
        else:
            names = {"ab": (2 * H, -1), "h_0": (H,)}
            k = rtf_plain_kernel(st)
        assert set(st) == set(names), (fname, sorted(st), sorted(names))
        for n, shape in names.items():
            got = tuple(st[n].shape)
            assert len(got) == len(shape) and all(s in (-1, g) for s, g in zip(shape, got)), (fname, n, got, shape)
        w = torch.tensor(want)
        err = float(torch.linalg.norm(k - w) / torch.linalg.norm(w))
        results[fname] = {"dtypes": dtypes, "rel_error": err}


def check_rtf_trunc_export(results, fname, layout, st, dtypes, banks):
    """An RTF layer written with trunc_len (the digits after rtftrunc or rtffold): the module's
    names and shapes, and its get_k kernel (rtf_get_k) over trunc_len samples against
    bank.json's slow_impulse."""
    trunc_len = int("".join(ch for ch in layout if ch.isdigit()))
    w = torch.tensor(banks["slow_impulse"])[:, :trunc_len]
    H = w.shape[0]
    names = {"ab": (2 * H, -1), "h_0": (H,)}
    assert set(st) == set(names), (fname, sorted(st), sorted(names))
    for n, shape in names.items():
        got = tuple(st[n].shape)
        assert len(got) == len(shape) and all(s in (-1, g) for s, g in zip(shape, got)), (fname, n, got, shape)
    k = rtf_get_k(st, trunc_len)
    err = max(float(torch.linalg.norm(k[c] - w[c]) / torch.linalg.norm(w[c])) for c in range(H))
    results[fname] = {"dtypes": dtypes, "rel_error": err}


def check_mimo_export(results, fname, layout, st, dtypes, banks):
    """A MIMO layer written by ExportMIMO: its names and shapes the module's parameters'
    (LRU.setup, lru/model.py lines 46-80; S5SSM.setup, s5/ssm.py lines 175-241; the RotRNN
    listing's, heads of two states), and every pair's response by lru_run, s5_run or
    rotrnn_run, with the S5SSM settings the Go test wrote it for,
    against the layer's (bank.json's mimo_impulse, (outputs, inputs, L))."""
    bidir = layout == "s5bidir"  # a layer of 2H outputs: C1's rows, then C2's anti-causal ones
    w = torch.tensor(banks["bidir_impulse" if bidir else "mimo_impulse"])
    H = w.shape[1]
    opts = banks["mimo_options"].get(fname) or {}
    if layout == "lru":
        names = {"nu_log": (-1,), "theta_log": (-1,), "gamma_log": (-1,), "B_re": (-1, H), "B_im": (-1, H),
                 "C_re": (H, -1), "C_im": (H, -1), "D": (H,)}
        step = lambda u: lru_run(st, u)
    elif layout == "rotrnn":  # heads of two states: C is (H, 2·heads)
        names = {"thetas": (-1, 1), "gamma_log": (-1, 1), "M": (-1, 2, 2), "B": (-1, 2, H), "C": (H, 2 * st["M"].shape[0]), "D": (H,)}
        step = lambda u: rotrnn_run(st, u)
    else:
        names = {"Lambda_re": (-1,), "Lambda_im": (-1,), "B": (-1, H, 2), "C": (H, -1, 2), "D": (H,), "log_step": (-1, 1)}
        if bidir:
            del names["C"]
            names["C1"], names["C2"] = (H, -1, 2), (H, -1, 2)
        kw = dict(disc=opts.get("disc", "zoh"), conj_sym=opts.get("conj-sym", "true") == "true",
                  step_rescale=float(opts.get("step-rescale", "1")), clip_eigs=opts.get("clip-eigs", "false") == "true")
        step = lambda u: s5_run(st, u, **kw)
    assert set(st) == set(names), (fname, sorted(st), sorted(names))
    P = st[next(iter(names))].shape[0]
    for n, shape in names.items():
        got = tuple(st[n].shape)
        assert len(got) == len(shape) and all(s in (-1, g) for s, g in zip(shape, got)), (fname, n, got, shape)
        assert all(g == P for s, g in zip(shape, got) if s == -1), (fname, n, got, P)
    if bidir:
        k = s5_bidir_kernels(st, **kw)
    else:
        k = impulse_mimo(step, H, [(i, j) for i in range(H) for j in range(H)]).reshape(H, H, -1)
    err = float(torch.linalg.norm(k - w) / torch.linalg.norm(w))
    results[fname] = {"dtypes": dtypes, "rel_error": err}


def rtf_plain_kernel(st):
    """RTF.get_k_step without the correction (rtf.py lines 127-137 with correct_C=False), the
    recurrence of the stored b: what an export without --trunc-len means."""
    ab, h0 = st["ab"], st["h_0"]
    D, N = h0.shape[0], ab.shape[1]
    a, b = ab[:D], ab[D:]
    out = []
    for c in range(D):
        x = torch.zeros(N)
        k = []
        for t in range(L):
            u = 1.0 if t == 0 else 0.0
            k.append(x @ b[c] + h0[c] * u)
            xf = torch.roll(x, 1)
            xf[0] = -a[c] @ x + u
            x = xf
        out.append(torch.stack(k))
    return torch.stack(out)


def main():
    cases = collections.OrderedDict()
    write_case(cases, "s4d", "s4d", "layers.0.layer.", s4d_state(1), s4d_kernel)
    write_case(cases, "s4d_bilinear", "s4d", "layer.", s4d_state(2, H=2, S=2), lambda s: s4d_kernel(s, disc="bilinear"),
               options={"disc": "bilinear"}, containers=("pt64", "pt32"))
    write_case(cases, "s4d_dss", "s4d", "", s4d_state(3, H=2), lambda s: s4d_kernel(s, disc="dss", length=64),
               options={"disc": "dss", "length": "64"}, containers=("pt64", "pt32"))
    write_case(cases, "s4d_real", "s4d", "layers.1.layer.", s4d_real_state(14), s4d_kernel, containers=("pt64", "pt32"))
    g = torch.Generator().manual_seed(4)
    minimal = collections.OrderedDict([
        ("kernel.log_dt", torch.log(0.01 + 0.1 * torch.rand(3, generator=g))),
        ("kernel.C", torch.randn(3, 4, 2, generator=g)),
        ("kernel.log_A_real", torch.log(0.5 * torch.ones(3, 4))),
        ("kernel.A_imag", math.pi * torch.arange(4).repeat(3, 1)),
        ("D", torch.randn(3, generator=g)),
    ])
    write_case(cases, "s4d_minimal", "s4d", "model.s4.", minimal, s4d_minimal_kernel)
    write_case(cases, "s4", "s4", "encoder.layers.2.layer.", s4_state(5), s4_kernel)
    write_case(cases, "stripedhyena", "stripedhyena", "blocks.1.filter.", stripedhyena_state(6), stripedhyena_kernel)
    write_case(cases, "stripedhyena_fir", "stripedhyena", "blocks.1.filter.", stripedhyena_state(6), short_filter_kernel,
               options={"short-filter": "true"}, containers=("pt64",))
    write_case(cases, "hyena", "hyena", "backbone.layers.0.mixer.filter_fn.", hyena_state(7), hyena_kernel)
    pairs = [(0, 0), (1, 1), (2, 2)]
    write_case(cases, "lru", "lru", "layers_0.seq.", lru_state(8), lambda s: impulse_mimo(lambda u: lru_run(s, u), 3, pairs))
    pairs2 = [(0, 2), (2, 1)]
    write_case(cases, "lru_pairs", "lru", "", lru_state(9), lambda s: impulse_mimo(lambda u: lru_run(s, u), 3, pairs2),
               options={"pairs": "0,2;2,1"}, containers=("pt64",))
    write_case(cases, "s5", "s5", "layers.1.seq.", s5_state(10), lambda s: impulse_mimo(lambda u: s5_run(s, u), 3, pairs))
    write_case(cases, "s5_bilinear", "s5", "", s5_state(11), lambda s: impulse_mimo(lambda u: s5_run(s, u, "bilinear"), 3, pairs),
               options={"disc": "bilinear"}, containers=("pt64",))
    bidir = s5_bidir_state(15)  # the bank is the forward pairs: the layer with C2 zeroed
    write_case(cases, "s5_bidir", "s5", "encoder.layers.0.seq.", bidir,
               lambda s: impulse_mimo(lambda u: s5_run(collections.OrderedDict(s, C2=torch.zeros_like(s["C2"])), u), 3, pairs),
               containers=("pt64",))
    cn = s5_bidir_cn_state(16)  # the forward pairs: C's last P columns zeroed
    write_case(cases, "s5_bidir_cn", "s5", "encoder.layers.0.seq.", cn,
               lambda s: impulse_mimo(lambda u: s5_run(forward_only(s), u), 3, pairs),
               containers=("pt64",))
    write_case(cases, "rotrnn", "rotrnn", "layers.0.", rotrnn_state(12), lambda s: impulse_mimo(lambda u: rotrnn_run(s, u), 3, pairs))
    st, tl = rtf_state(13)
    write_case(cases, "rtf", "rtf", "layers.0.filter.", st, lambda s: rtf_kernel(s, tl), options={"trunc-len": str(tl)})
    exports = {}
    check_exports(exports)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "length": L, "cases": cases, "exports": exports}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
