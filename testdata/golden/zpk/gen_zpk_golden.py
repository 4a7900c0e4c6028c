"""Reference impulse responses of FIR filters in zero-pole-gain form, whose cascade of
first-order sections cancels catastrophically in a bad order (filters.ZPK.Impulse).

Each case's zeros are numpy/scipy float64 roots, stored exactly (JSON floats round-trip);
its poles are as many zeros at the origin, so H(z) = gain·Π(1 − zᵢz⁻¹) and h[t] is gain
times the t-th coefficient of Π(z − zᵢ). The coefficients are expanded with mpmath at 600
bits from those exact float64 zeros, in two orders that must agree to 1e-40 (an expansion
loses log₂ of its partial products' growth, up to about 200 bits for the random polynomial
in numpy's order).

Run from the repository root:  /usr/bin/python3 testdata/golden/zpk/gen_zpk_golden.py
"""
import json
import warnings

import mpmath as mp
import numpy as np
import scipy
from scipy import signal

mp.mp.prec = 600


def expand(zeros):
    c = [mp.mpc(1)]
    for z in zeros:
        z = mp.mpc(z.real, z.imag)
        c = [a - z * b for a, b in zip(c + [mp.mpc(0)], [mp.mpc(0)] + c)]
    return c


def case(name, taps, extra):
    taps = np.asarray(taps, float)
    zeros, _, gain = signal.tf2zpk(taps, [1.0])
    c1, c2 = expand(list(zeros)), expand(list(zeros)[::-1])
    scale = max(abs(v) for v in c1)
    assert max(abs(a - b) for a, b in zip(c1, c2)) < mp.mpf(10) ** -40 * scale, name
    h = [float(mp.re(v) * gain) for v in c1] + [0.0] * extra
    return {
        "name": name,
        "zeros": [[float(z.real), float(z.imag)] for z in zeros],
        "poles": len(zeros),  # all at the origin
        "gain": float(gain),
        "impulse": h,
    }


# firwin(201, 0.3)'s end taps are -2.7e-18: tf2zpk warns, and the zpk form has a zero near
# -7.6e13 and one near its reciprocal, which the golden keeps as a case.
warnings.filterwarnings("ignore", category=signal.BadCoefficients)
rng = np.random.default_rng(20240601)
cases = [
    case("firwin(201, 0.3)", signal.firwin(201, 0.3), 8),
    case("random polynomial of degree 300 (seed 20240601)", rng.standard_normal(301), 8),
]
out = {"meta": {"scipy": scipy.__version__, "numpy": np.__version__, "mpmath": mp.__version__}, "cases": cases}
with open("testdata/golden/zpk/zpk_impulse.json", "w") as f:
    json.dump(out, f)
    f.write("\n")
