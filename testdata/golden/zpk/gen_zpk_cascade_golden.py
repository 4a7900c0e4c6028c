#!/usr/bin/python3
"""Exact impulse responses of zpk filters whose cascade of first-order sections loses digits
in a careless order, for filters.ZPK.Impulse (TestZPKCascadeGolden).

Each case is a zero-pole-gain filter given exactly by float64 numbers and a window of L
samples; the script writes its zeros, poles, gain, L and h[0..L-1] of those numbers, computed
as gen_zpk_error_golden.py computes them (Python integers in fixed point at 1400 bits, the
first 96 samples checked against mpmath at 120 digits), rounded to float64 at the end.

  hippo_legs64_preset,  the zpk forms ssmlab wrote for its presets HiPPO-LegS of orders 64
  hippo_legs512_preset, and 512 and HiPPO-LagT of order 384 (cascade_presets.json, each made
  hippo_lagt384_preset  by the command in its "made_by", at ssmlab 55e48d7). HiPPO-LegS of
                       order 64: 64 real poles from 0.911 to 0.9985, 64 zeros, most near the
                       unit circle at angles up to 0.77; its cascade was wrong by 3.96
                       relative; order 512 by 1e122. HiPPO-LagT: one pole of multiplicity 384
                       at 0.99927, whose response needs 5e5 samples to settle; wrong by 2e7.
                       L = 4096
  hippo_legs64         the HiPPO-LegS matrix of order 64 discretised by the bilinear transform
                       at dt = 0.01, C normal (seed 7), as in gen_zpk_error_golden.py: wrong by
                       9e-4. L = 4096
  butter48             scipy.signal.butter(48, 0.001/pi, output='zpk'), poles clustered near
                       z = 1, 48 zeros at -1. L = 4096
  butter300            scipy.signal.butter(300, 0.5/pi, output='zpk'): 300 zeros at -1, wrong
                       by 1e-4. L = 1500
  near_cancel32        32 real poles 1 - 0.002k (k = 1..32) and 16 conjugate pairs of zeros,
                       each a normal offset of about twice the poles' spacing from every other
                       pole (seed 1), so that which zero goes with which pole is a close call.
                       L = 4096

Run from the repository root (about 2 minutes):
    /usr/bin/python3 testdata/golden/zpk/gen_zpk_cascade_golden.py
"""
import json
import math
import os
import sys

import mpmath as mp
import numpy as np
import scipy
from scipy import signal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_zpk_error_golden as ge  # noqa: E402  (the exact cascade, closed, hippo, record)

OUT = os.path.join(HERE, "zpk_cascade.json")


def case(name, zeros, poles, gain, L):
    zeros, poles = [complex(z) for z in zeros], [complex(p) for p in poles]
    for roots in (zeros, poles):
        ge.groups(roots)  # asserts conjugate closure
    x = ge.cascade(zeros, poles, L)
    ge.mp_check(zeros, poles, x)
    print(f"{name}: n = {len(poles)}, L = {L}", file=sys.stderr)
    return ge.record(name, zeros, poles, gain, L, x)


def presets():
    """(name, zeros, poles, gain) of each case of cascade_presets.json."""
    with open(os.path.join(HERE, "cascade_presets.json")) as fh:
        cases = json.load(fh)["cases"]
    pairs = lambda v: [complex(a, b) for a, b in v]
    return [(c["name"], pairs(c["zeros"]), pairs(c["poles"]), float(c["gain"])) for c in cases]


def near_cancel(n, spread, seed):
    rng = np.random.default_rng(seed)
    poles = [complex(1 - 0.002 * (k + 1)) for k in range(n)]
    zeros = []
    for k in range(n // 2):
        c = poles[2 * k] + spread * 0.002 * (rng.standard_normal() + 1j * abs(rng.standard_normal()))
        zeros += [complex(c), complex(c).conjugate()]
    # ssmlab's order: by decreasing modulus, then |angle|, the member with im > 0 first
    key = lambda q: (-abs(q), abs(np.angle(q)), -q.imag)
    return sorted(zeros, key=key), sorted(poles, key=key), 1.0


def main():
    cases = [case(name + "_preset", z, p, k, 4096) for name, z, p, k in presets()]
    cases.append(case("hippo_legs64", *ge.hippo(64, 0.01, 7), 4096))
    for n, wc, L in ((48, 0.001, 4096), (300, 0.5, 1500)):
        z, p, k = signal.butter(n, wc / math.pi, output="zpk")
        cases.append(case(f"butter{n}", ge.closed(z), ge.closed(p), float(k), L))
    cases.append(case("near_cancel32", *near_cancel(32, 2, 1), 4096))
    meta = {"numpy": np.__version__, "scipy": scipy.__version__, "mpmath": mp.__version__, "bits": ge.P}
    with open(OUT, "w") as fh:
        json.dump({"meta": meta, "cases": cases}, fh)
        fh.write("\n")


if __name__ == "__main__":
    main()
