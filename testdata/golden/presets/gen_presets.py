#!/usr/bin/python3
"""Generate SciPy golden values for the classic IIR presets of ssmlab (presets/dsp.go).

Run from the repository root with the Debian interpreter (pyenv's python3 has no SciPy):

    /usr/bin/python3 testdata/golden/presets/gen_presets.py

Writes testdata/golden/presets/presets.json. Nothing here is random: every case is a fixed
design, so the output is deterministic.

Each case is scipy.signal.butter(N, Wn, btype, output=...) or
scipy.signal.cheby1(N, rp, Wn, btype, output=...), digital, with Wn the edge(s) as a fraction
of the Nyquist frequency (Wn = omega / pi for omega in rad/sample). Stored per case:

  * zeros, poles (complex, as [re, im] pairs, sorted by (re, im): compare them as multisets)
    and gain k, from output='zpk';
  * H: freqz_zpk at the 64 frequencies of "omega" (0 to pi inclusive);
  * impulse: 64 samples of the impulse response, from sosfilt(zpk2sos(z, p, k));
  * b, a: output='ba' (np.poly of the roots), only for filters of at most 8 poles, where
    the coefficients are well conditioned.

Floats are written with Python's repr (shortest round-trip form), so the JSON holds exactly
the float64 values SciPy computed.
"""

import json
import math
import os
import sys

import numpy as np
import scipy
import scipy.signal as sig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "presets.json")

N_OMEGA = 64
N_IMPULSE = 64
MAX_BA_POLES = 8
OMEGA = np.linspace(0.0, np.pi, N_OMEGA)


def fnum(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("non-finite value")
    return x


def cpairs(v):
    v = sorted(np.asarray(v, dtype=complex).ravel(), key=lambda c: (c.real, c.imag))
    return [[fnum(c.real), fnum(c.imag)] for c in v]


def reals(v):
    return [fnum(x) for x in np.asarray(v).ravel()]


def case(kind, n, btype, wn, rp=None):
    wn_arr = np.atleast_1d(np.asarray(wn, dtype=float))
    wn_arg = float(wn_arr[0]) if wn_arr.size == 1 else [float(x) for x in wn_arr]
    if kind == "butter":
        design = lambda out: sig.butter(n, wn_arg, btype=btype, output=out)
    else:
        design = lambda out: sig.cheby1(n, rp, wn_arg, btype=btype, output=out)
    z, p, k = design("zpk")
    _, h = sig.freqz_zpk(z, p, k, worN=OMEGA)
    x = np.zeros(N_IMPULSE)
    x[0] = 1.0
    imp = sig.sosfilt(sig.zpk2sos(z, p, k), x)
    c = {
        "kind": kind,
        "order": n,
        "band": btype,
        "wn": reals(wn_arr),
        "zeros": cpairs(z),
        "poles": cpairs(p),
        "gain": fnum(k),
        "H": cpairs_ordered(h),
        "impulse": reals(imp),
    }
    if rp is not None:
        c["ripple"] = fnum(rp)
    if len(p) <= MAX_BA_POLES:
        b, a = design("ba")
        c["b"], c["a"] = reals(b), reals(a)
    return c


def cpairs_ordered(v):
    return [[fnum(c.real), fnum(c.imag)] for c in np.asarray(v, dtype=complex).ravel()]


def main():
    cases = []
    for n in (1, 2, 3, 4, 5, 8, 16):
        cases.append(case("butter", n, "lowpass", 0.25))
        cases.append(case("butter", n, "highpass", 0.6))
    for n in (1, 2, 3, 4, 6):
        cases.append(case("butter", n, "bandpass", [0.2, 0.45]))
        cases.append(case("butter", n, "bandstop", [0.3, 0.7]))
    cases.append(case("butter", 4, "lowpass", 0.02))
    cases.append(case("butter", 32, "lowpass", 0.5))
    for n in (1, 2, 3, 4, 5, 8, 12):
        cases.append(case("cheby1", n, "lowpass", 0.3, rp=1.0))
        cases.append(case("cheby1", n, "highpass", 0.4, rp=0.5))
    for n in (1, 2, 3, 4):
        cases.append(case("cheby1", n, "bandpass", [0.15, 0.35], rp=3.0))
        cases.append(case("cheby1", n, "bandstop", [0.5, 0.8], rp=0.1))
    doc = {
        "meta": {
            "generator": "testdata/golden/presets/gen_presets.py",
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        },
        "omega": reals(OMEGA),
        "cases": cases,
    }
    # One line per case keeps the file small and its diffs readable.
    with open(OUT, "w") as f:
        f.write("{\n")
        f.write(' "meta": %s,\n' % json.dumps(doc["meta"]))
        f.write(' "omega": %s,\n' % json.dumps(doc["omega"]))
        f.write(' "cases": [\n  ')
        f.write(",\n  ".join(json.dumps(c) for c in cases))
        f.write("\n ]\n}\n")
    print("wrote %s: %d cases" % (OUT, len(cases)))


if __name__ == "__main__":
    main()
