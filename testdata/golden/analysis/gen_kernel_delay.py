#!/usr/bin/python3
"""Generate SciPy golden values for analysis.KernelResponse and analysis.KernelGroupDelay.

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 testdata/golden/analysis/gen_kernel_delay.py

Writes testdata/golden/analysis/kernel_delay.json: for each kernel h (the FIR filter
H(z) = sum h[t] z^-t), H = scipy.signal.freqz(h, 1, omega) and the group delay
scipy.signal.group_delay((h, [1]), omega). Grid points where |H| is at rounding level (a zero
of H on the unit circle: SciPy's delay is 0 or noise there) are listed in "singular".
Deterministic: random kernels come from np.random.default_rng(<seed>). Floats are written
with repr, so the JSON holds exactly the float64 values computed here.
"""

import json
import os
import warnings

import numpy as np
import scipy.signal as sig

omega = np.linspace(0, np.pi, 65)

rng = np.random.default_rng(20)
cases = [
    ("random-32", rng.standard_normal(32)),
    ("decaying-64", 0.9 ** np.arange(64) * np.cos(0.3 * np.arange(64))),
    ("symmetric-9", np.array([1, 2, 3, 4, 5, 4, 3, 2, 1], dtype=float)),
    # zeros on the unit circle at ω = π (double) and at ω = π/2
    ("zeros-on-circle", np.convolve([1, 2, 1], [1, 0, 1])),
]

out = {"omega": [float(w) for w in omega], "kernels": []}
for name, h in cases:
    _, H = sig.freqz(h, 1, worN=omega)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, gd = sig.group_delay((h, [1.0]), w=omega)
    singular = [i for i, v in enumerate(H) if abs(v) <= 64 * np.finfo(float).eps * np.abs(h).sum()]
    out["kernels"].append({
        "name": name,
        "h": [float(v) for v in h],
        "H": [[float(v.real), float(v.imag)] for v in H],
        "group_delay": [float(v) for v in gd],
        "singular": singular,
    })

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_delay.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
