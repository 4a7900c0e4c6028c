#!/usr/bin/python3
"""Reference H-infinity norms max over w of |H(e^{jw})| for analysis.HInf (TestHInfGolden).

Each case is a stable filter given exactly by float64 numbers: zero-pole-gain ("zpk": zeros,
poles, gain, H = gain*prod(z - q)/prod(z - p)) or state space ("dense": A, B, C, D,
H = C (zI - A)^-1 B + D). The reference is found in two steps:

  1. candidates: |H| in float64 (numpy) on 2^18 + 1 equally spaced frequencies in [0, pi]
     (2^13 + 1 for the dense case, whose points each cost a solve),
     and at each pole's angle theta and theta +- (1 - |p|)*1.1^k (k >= 0, up to pi); every
     local maximum within a factor 8 of the largest is kept;
  2. each candidate is refined by golden-section search on |H| evaluated with mpmath at 60
     digits, between its neighbours, for 200 steps; the largest value is the norm.

Written: "hinf" (rounded to float64), "omega" (its frequency) and "omega_unique" (false where
another peak lies within 1e-12 of the norm, as the equal ripples of a Chebyshev filter, so
that the frequency is not checked), and "scipy_max", the largest |H| of scipy.signal.freqz
(zpk2tf or ss2tf, the transfer-function coefficients) on 2^16 points, which must lie below
the norm, close to it where the grid resolves the peak and the polynomial holds the poles.

Cases: butter8 (scipy butter(8, 0.3), peak 1 at w = 0), cheby1_6 (cheby1(6, 1, 0.4):
equal ripple peaks of 1), resonator (a pole pair at 0.999 e^{+-0.7i} with zeros at +-1: a
peak 0.002 wide), twopeaks (pairs at 0.9999 e^{+-1.0i} and 0.9995 e^{+-1.003i}, zeros
random: two narrow peaks 0.003 apart), hippo16 (HiPPO-LegS, N = 16, bilinear at dt = 0.05, C
normal seed 7, dense), random10 (poles in the disc of radius 0.95, zeros in [0.3, 1.6],
seed 3), butter12 (butter(12, 0.01/pi): poles clustered near z = 1), s4d16 (S4D-Lin pole
pairs exp(dt(-1/2 +- i pi k)), k = 1..7, dt = 0.1, two real poles near exp(-dt/2), zeros
random, seed 11).

Run from the repository root:  /usr/bin/python3 testdata/golden/analysis/gen_hinf_golden.py
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
sys.path.insert(0, os.path.dirname(HERE))
import hippo  # noqa: E402  (the HiPPO-LegS filter, shared with zpk/)

OUT = os.path.join(HERE, "hinf.json")
mp.mp.dps = 60


def closed(roots):
    roots = np.asarray(roots, complex)
    out = [complex(q.real, 0) for q in roots if abs(q.imag) <= 1e-14 * max(1, abs(q))]
    up = sorted((q for q in roots if q.imag > 1e-14 * max(1, abs(q))), key=lambda q: (abs(q), np.angle(q)))
    for q in up:
        out += [complex(q), complex(q).conjugate()]
    assert len(out) == len(roots)
    return out


class ZPK:
    def __init__(self, zeros, poles, gain):
        self.zeros, self.poles, self.gain = closed(zeros), closed(poles), float(gain)

    def poles_(self):
        return self.poles

    def mag(self, w):
        z = np.exp(1j * np.asarray(w))
        h = np.full(z.shape, self.gain, complex)
        for q in self.zeros:
            h *= z - q
        for p in self.poles:
            h /= z - p
        return np.abs(h)

    def mag_mp(self, w):
        z = mp.exp(1j * w)
        h = mp.mpf(self.gain)
        for q in self.zeros:
            h *= z - mp.mpc(q.real, q.imag)
        for p in self.poles:
            h /= z - mp.mpc(p.real, p.imag)
        return abs(h)

    def tf(self):
        return signal.zpk2tf(self.zeros, self.poles, self.gain)

    def json(self):
        return {"form": "zpk", "zeros": [[q.real, q.imag] for q in self.zeros],
                "poles": [[p.real, p.imag] for p in self.poles], "gain": self.gain}


class Dense:
    def __init__(self, A, B, C, D):
        self.A, self.B, self.C, self.D = np.asarray(A, float), np.asarray(B, float), np.asarray(C, float), float(D)
        self.Amp = mp.matrix(self.A.tolist())
        self.Bmp = mp.matrix(self.B.tolist())
        self.Cmp = mp.matrix([self.C.tolist()])

    def poles_(self):
        return list(np.linalg.eigvals(self.A))

    def mag(self, w):
        n = len(self.B)
        out = []
        for x in np.asarray(w):
            out.append(abs(self.C @ np.linalg.solve(np.exp(1j * x) * np.eye(n) - self.A, self.B) + self.D))
        return np.array(out)

    def mag_mp(self, w):
        n = len(self.B)
        M = mp.exp(1j * w) * mp.eye(n) - self.Amp
        return abs((self.Cmp * mp.lu_solve(M, self.Bmp))[0] + self.D)

    def tf(self):
        b, a = signal.ss2tf(self.A, self.B.reshape(-1, 1), self.C.reshape(1, -1), [[self.D]])
        return b[0], a

    def json(self):
        return {"form": "dense", "A": self.A.tolist(), "B": self.B.tolist(), "C": self.C.tolist(), "D": self.D}


def golden(g, a, b):
    phi = (mp.sqrt(5) - 1) / 2
    c, d = b - phi * (b - a), a + phi * (b - a)
    gc, gd = g(c), g(d)
    for _ in range(200):
        if gc >= gd:
            b, d, gd = d, c, gc
            c = b - phi * (b - a)
            gc = g(c)
        else:
            a, c, gc = c, d, gd
            d = a + phi * (b - a)
            gd = g(d)
    return (c, gc) if gc >= gd else (d, gd)


def reference(f):
    # Dense filters cost a float64 solve a point: fewer uniform points, the same pole grid.
    grid = list(np.linspace(0, math.pi, 2 ** (18 if isinstance(f, ZPK) else 13) + 1))
    for p in f.poles_():
        if p.imag < 0:
            continue
        th, d = np.angle(p), 1 - abs(p)
        grid.append(th)
        off = d
        while off < math.pi:
            grid += [min(math.pi, abs(th - off)), min(math.pi, th + off)]
            off *= 1.1
    grid = np.unique(np.asarray(grid))
    m = f.mag(grid)
    top = m.max()
    cands = [i for i in range(len(m)) if (i == 0 or m[i] >= m[i - 1]) and (i == len(m) - 1 or m[i] >= m[i + 1]) and m[i] >= top / 8]
    best = []
    for i in cands:
        lo, hi = mp.mpf(grid[max(i - 1, 0)]), mp.mpf(grid[min(i + 1, len(grid) - 1)])
        w, v = golden(f.mag_mp, lo, hi)
        best.append((v, w))
    best.sort(reverse=True)
    v, w = best[0]
    unique = all(abs(o[0] - v) > mp.mpf(10) ** -12 * v or abs(o[1] - w) < mp.mpf(10) ** -6 for o in best[1:])
    return float(v), float(w), unique


def case(name, f):
    v, w, unique = reference(f)
    b, a = f.tf()
    _, h = signal.freqz(b, a, worN=2 ** 16)
    c = f.json()
    c.update({"name": name, "hinf": v, "omega": w, "omega_unique": unique, "scipy_max": float(np.abs(h).max())})
    print(f"{name}: {v!r} at {w:.6g} (unique {unique}), scipy {c['scipy_max']!r}")
    return c


def pair(r, a):
    p = r * np.exp(1j * a)
    return [p, np.conj(p)]


def main():
    cases = []
    z, p, k = signal.butter(8, 0.3, output="zpk")
    cases.append(case("butter8", ZPK(z, p, k)))
    z, p, k = signal.cheby1(6, 1, 0.4, output="zpk")
    cases.append(case("cheby1_6", ZPK(z, p, k)))
    cases.append(case("resonator", ZPK([1, -1], pair(0.999, 0.7), 0.01)))
    rng = np.random.default_rng(5)
    zs = pair(0.5 + rng.random(), math.pi * rng.random()) + pair(0.5 + rng.random(), math.pi * rng.random())
    cases.append(case("twopeaks", ZPK(zs, pair(0.9999, 1.0) + pair(0.9995, 1.003), 1e-3)))
    cases.append(case("hippo16", Dense(*hippo.legs(16, 0.05, 7), 0.0)))
    rng = np.random.default_rng(3)
    ps, zs = [], []
    for _ in range(5):
        ps += pair(0.95 * math.sqrt(rng.random()), math.pi * rng.random())
    for _ in range(4):
        zs += pair(0.3 + 1.3 * rng.random(), math.pi * rng.random())
    cases.append(case("random10", ZPK(zs, ps, rng.standard_normal())))
    z, p, k = signal.butter(12, 0.01 / math.pi, output="zpk")
    cases.append(case("butter12", ZPK(z, p, k)))
    rng = np.random.default_rng(11)
    ps = []
    for k_ in range(8):
        ps += pair(math.exp(-0.05), 0.1 * math.pi * k_) if k_ else [math.exp(-0.05), math.exp(-0.05) * 0.999]
    zs = []
    for _ in range(7):
        zs += pair(0.3 + 1.3 * rng.random(), math.pi * rng.random())
    cases.append(case("s4d16", ZPK(zs, ps, 0.01)))
    meta = {"numpy": np.__version__, "scipy": scipy.__version__, "mpmath": mp.__version__, "dps": mp.mp.dps}
    with open(OUT, "w") as fh:
        json.dump({"meta": meta, "cases": cases}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
