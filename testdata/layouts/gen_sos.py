"""Golden files for ssmlab's sos layout (sessions/layouts/sos.go), from Debian's python3-scipy.

Run from the repository root:

    /usr/bin/python3 testdata/layouts/gen_sos.py

It designs three filters with scipy.signal (1.10) as second-order sections — a Butterworth
low-pass of order 8, an elliptic low-pass of odd order 7 (zpk2sos pads it with a pole and a
zero at the origin), and a bank of three channels of orders 6, 3 and 2 padded with identity
sections [1 0 0 1 0 0] to one width — stores each in .npz files (float64; the elliptic one
also float32, the bank behind the module prefix "filter."), and writes sos_expected.json:
per file the prefix, dtype and each channel's impulse response by scipy.signal.sosfilt over
`length` samples, computed in float64 from the stored (rounded) values, in the schema of gen_layouts.py's expected.json (TestGoldenLayouts
reads both); per design, scipy's
zeros, poles and gain and what zpk2sos makes of them, for ssmlab's pairing to match.

    /usr/bin/python3 testdata/layouts/gen_sos.py --check FILE LENGTH

prints, as JSON, the sosfilt impulse response over LENGTH samples of every tensor in the
.npz FILE whose name ends in "sos" (what ssmlab export wrote; the Go test
TestSOSExportInScipy runs it), after checking what scipy itself demands of an sos array:
two dimensions (a bank: one per channel), six columns, a0 = 1.
"""
import json
import os
import sys

import numpy as np
from scipy import signal

HERE = os.path.dirname(os.path.abspath(__file__))
L = 512  # samples of every reference impulse response


def impulse(sos, length):
    """scipy.signal.sosfilt of a unit impulse; sosfilt itself refuses a0 != 1 and non-2-D
    arrays (_validate_sos)."""
    x = np.zeros(length)
    x[0] = 1.0
    return signal.sosfilt(np.asarray(sos, dtype=np.float64), x)


def channels(sos):
    sos = np.asarray(sos)
    return [sos] if sos.ndim == 2 else list(sos)


def pad(sections, width):
    ident = np.array([[1.0, 0, 0, 1, 0, 0]] * (width - len(sections)))
    return np.concatenate([sections, ident]) if width > len(sections) else sections


def cplx(v):
    return [[float(np.real(x)), float(np.imag(x))] for x in np.atleast_1d(v)]


def generate():
    designs = {
        "butter8": signal.butter(8, 0.2, output="zpk"),
        "ellip7": signal.ellip(7, 0.5, 60, 0.35, output="zpk"),
        "cheby1_6": signal.cheby1(6, 1, 0.3, output="zpk"),
        "butter3": signal.butter(3, 0.4, btype="high", output="zpk"),
        "bessel2": signal.bessel(2, 0.1, output="zpk"),
    }
    sos = {k: signal.zpk2sos(*v) for k, v in designs.items()}
    bank = [sos["cheby1_6"], sos["butter3"], sos["bessel2"]]
    width = max(len(s) for s in bank)
    files = [
        ("sos_butter8_64.npz", "", np.float64, sos["butter8"]),
        ("sos_ellip7_64.npz", "", np.float64, sos["ellip7"]),
        ("sos_ellip7_32.npz", "", np.float32, sos["ellip7"]),
        ("sos_bank_64.npz", "filter.", np.float64, np.stack([pad(s, width) for s in bank])),
    ]
    out = {"scipy": __import__("scipy").__version__, "length": L, "cases": {}, "designs": {}}
    for name, prefix, dtype, s in files:
        stored = np.asarray(s, dtype=dtype)
        np.savez(os.path.join(HERE, name), **{prefix + "sos": stored})
        out["cases"][name] = {"layout": "sos", "prefix": prefix, "options": {}, "dtype": np.dtype(dtype).name,
                              "kernels": [impulse(c, L).tolist() for c in channels(stored.astype(np.float64))]}
    for k, (z, p, g) in designs.items():
        out["designs"][k] = {"zeros": cplx(z), "poles": cplx(p), "gain": float(g), "sos": sos[k].tolist()}
    with open(os.path.join(HERE, "sos_expected.json"), "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


def check(path, length):
    res = {}
    with np.load(path) as data:
        for name in data.files:
            if not name.endswith("sos"):
                continue
            a = data[name].astype(np.float64)
            if a.ndim not in (2, 3) or a.shape[-1] != 6:
                raise SystemExit(f"{name}: shape {a.shape}, want (sections, 6) or (channels, sections, 6)")
            res[name] = {"shape": list(a.shape), "kernels": [impulse(c, length).tolist() for c in channels(a)]}
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        check(sys.argv[2], int(sys.argv[3]))
    else:
        generate()
