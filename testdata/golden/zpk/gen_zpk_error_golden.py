#!/usr/bin/python3
"""What rounding does to the impulse response of zpk filters, measured in exact arithmetic,
for filters.ZPK.ImpulseError's estimate (TestZPKErrorEstimateGolden).

Each case is a zero-pole-gain filter given exactly by float64 numbers (conjugate-closed, the
members of a pair exact mirror images) and a window of L samples. For it the script writes

  impulse     h[0..L-1] of the stored numbers, exact (rounded to float64 at the end)
  perturbed   the largest relative error ||h' - h||_2 / ||h||_2 over the window among
              responses h' of the same filter with every stored real number (each part of a
              pole or zero that is not 0, the gain) moved by one unit in its last place: the
              signs of the first-order worst case (below) and of four random draws
  draws       those errors, the worst case's first

The worst case: the change each single move makes (v_k, exact) is computed for every number;
the signs s maximise ||sum_k s_k v_k||_2 as far as the leading singular vector of [v_1 ...]
and then single flips that increase it find; h' is then computed with all those moves at once.

The responses are computed with Python integers in fixed point (P = 1400 bits after the
point, every float64 here exact at that scale), as the cascade of first-order sections
(1 - z_i/z)/(1 - p_i/z) without the gain, which multiplies afterwards; each section rounds
at 2^-1400, far below anything measured. A pole's move is applied to the exact response as
the factor (1 - p/z)(1 - conj(p)/z)/((1 - p'/z)(1 - conj(p')/z)); a zero's as the response
of the filter without that zero (pair) times the difference of the factors. mpmath at 120
digits checks the first 96 samples of every exact response.

Cases:
  butter24, butter48,   scipy.signal.butter(N, 0.001/pi, output='zpk'): poles clustered near
  butter64              z = 1 (the analysis QA's finding 8: the old estimate was 7e-5, 2e18
                        and 3e36 for errors of 1e-15), L = 4096 (a report's longest window)
  cheby1_16             scipy.signal.cheby1(16, 1, 0.02/pi, output='zpk'), L = 4096
  hippo_legs16,         the HiPPO-LegS matrix (N = 16, 32; A_nk = -sqrt(2n+1)sqrt(2k+1) below
  hippo_legs32          the diagonal, -(n+1) on it), B_n = sqrt(2n+1), C normal (seed 7),
                        bilinear at dt = 0.05; zeros the finite generalised eigenvalues of
                        [[Ad, Bd], [C, 0]], L = 2048
  s4d_lin32             poles exp(dt*(-1/2 + i*pi*n)), n < 16, dt = 0.01, zeros normal in
                        [0.3, 1.6] in modulus (seed 11), L = 2048
  random12, random30    poles uniform in the disc of radius 0.95, zeros in the annulus
                        [0.3, 1.6] (seeds 3 and 5), L = 512

Run from the repository root:
    /usr/bin/python3 testdata/golden/zpk/gen_zpk_error_golden.py
"""
import json
import math
import os
import sys

import mpmath as mp
import numpy as np
import scipy
import scipy.linalg as la
from scipy import signal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import hippo as hippo_golden  # noqa: E402  (the HiPPO-LegS filter, shared with analysis/)

OUT = os.path.join(HERE, "zpk_error.json")
P = 1400
ONE = 1 << P


def fx(v):
    """v as an integer times 2^-P, exactly (every v here is a float64 above 2^-1300)."""
    if v == 0:
        return 0
    m, e = math.frexp(v)
    mi = int(m * (1 << 53))
    sh = e - 53 + P
    assert sh >= 0
    return mi << sh


def cascade(zeros, poles, L):
    """prod(1 - z_i/z)/prod(1 - p_i/z) z^-(n-m), the real part, in units of 2^-P."""
    n, m = len(poles), len(zeros)
    xr, xi = [0] * L, [0] * L
    if n - m < L:
        xr[n - m] = ONE
    for k in range(n):
        pr, pi = fx(poles[k].real), fx(poles[k].imag)
        zr, zi = (fx(zeros[k].real), fx(zeros[k].imag)) if k < m else (0, 0)
        yr, yi = [0] * L, [0] * L
        por = poi = vr = vi = 0
        for t in range(L):
            ar, ai = xr[t], xi[t]
            o_r = ar + ((pr * por - pi * poi - zr * vr + zi * vi) >> P)
            o_i = ai + ((pr * poi + pi * por - zr * vi - zi * vr) >> P)
            yr[t], yi[t] = o_r, o_i
            por, poi, vr, vi = o_r, o_i, ar, ai
        xr, xi = yr, yi
    return xr


def mp_check(zeros, poles, x, L=96):
    """The first L samples again, by mpmath at 120 digits."""
    mp.mp.dps = 120
    n, m = len(poles), len(zeros)
    y = [mp.mpc(0)] * L
    if n - m < L:
        y[n - m] = mp.mpc(1)
    for k in range(n):
        p = mp.mpc(poles[k].real, poles[k].imag)
        z = mp.mpc(zeros[k].real, zeros[k].imag) if k < m else mp.mpc(0)
        out, prev_in, prev_out = [], mp.mpc(0), mp.mpc(0)
        for v in y:
            o = v + p * prev_out - z * prev_in
            out.append(o)
            prev_in, prev_out = v, o
        y = out
    scale = max(abs(v) for v in y) or 1
    for a, b in zip(y, x[:L]):
        assert abs(mp.re(a) - mp.mpf(b) / ONE) <= mp.mpf(10) ** -60 * scale, (a, b)


def tofloat(x, sh):
    """x[t]·2^-(P+sh) as float64s (correctly rounded)."""
    d = 1 << (P + sh)
    return np.array([v / d for v in x])


def shift(x):
    """A power of two that brings the largest |x[t]|·2^-P near 1."""
    return max(abs(v).bit_length() for v in x) - P


def groups(roots):
    """Conjugate pairs (i, j), im > 0 at i, and real roots (i,)."""
    used, out = [False] * len(roots), []
    for i, q in enumerate(roots):
        if used[i]:
            continue
        used[i] = True
        if q.imag == 0:
            out.append((i,))
            continue
        j = next(j for j in range(len(roots)) if not used[j] and roots[j] == q.conjugate())
        used[j] = True
        out.append((i, j))
    return out


def bump(v, s):
    return float(np.nextafter(v, math.inf if s > 0 else -math.inf))


def params(zeros, poles):
    """Every stored real number that one ulp moves: (kind, group, part)."""
    out = [("gain", None, None)]
    for kind, roots in (("pole", poles), ("zero", zeros)):
        for g in groups(roots):
            q = roots[g[0]]
            if q.real != 0:
                out.append((kind, g, "re"))
            if q.imag != 0:
                out.append((kind, g, "im"))
    return out


def moved(roots, g, part, s):
    out = list(roots)
    q = roots[g[0]]
    nq = complex(bump(q.real, s), q.imag) if part == "re" else complex(q.real, bump(q.imag, s))
    out[g[0]] = nq
    if len(g) == 2:
        out[g[1]] = nq.conjugate()
    return out


def factor(q, pair):
    """Integer coefficients of 1 - c1/z + c2/z^2 (pair) or 1 - q/z, at 2^-P."""
    if pair:
        return [ONE, -2 * fx(q.real), (fx(q.real) ** 2 + fx(q.imag) ** 2) >> P]
    return [ONE, -fx(q.real)]


def fir(c, x):
    return [sum(c[j] * x[t - j] for j in range(len(c)) if t >= j) >> P for t in range(len(x))]


def iir(num, den, x):
    """num(1/z)/den(1/z) applied to x, den[0] = 2^P."""
    y = []
    for t in range(len(x)):
        v = sum(num[j] * x[t - j] for j in range(len(num)) if t >= j)
        v -= sum(den[j] * y[t - j] for j in range(1, len(den)) if t >= j)
        y.append(v >> P)
    return y


def effects(zeros, poles, gain, x, L):
    """The exact change of gain*x (relative to ||gain*x||, float) for each single move up."""
    sh = shift(x)
    norm = np.linalg.norm(tofloat(x, sh))
    out = []
    without = {}
    for kind, g, part in params(zeros, poles):
        if kind == "gain":
            d = (bump(gain, 1) - gain) / gain
            out.append(d * tofloat(x, sh) / norm)
            continue
        roots = poles if kind == "pole" else zeros
        q = roots[g[0]]
        nq = moved(roots, g, part, 1)[g[0]]
        pair = len(g) == 2
        if kind == "pole":
            y = iir(factor(q, pair), factor(nq, pair), x)
            diff = [a - b for a, b in zip(y, x)]
        else:
            key = (q, len(g))  # a repeated zero's rest is the same for each copy
            if key not in without:
                rest = [z for i, z in enumerate(zeros) if i not in g]
                without[key] = cascade(rest, poles, L + 2)
            # H = z^len(g) Q N with Q the cascade without the zero (its delay longer by
            # len(g)), so H' - H = z^len(g) Q (N' - N): Q advanced by len(g), filtered.
            dc = [a - b for a, b in zip(factor(nq, pair), factor(q, pair))]
            diff = fir(dc, without[key][len(g):len(g) + L])
        out.append(tofloat(diff, sh) / norm)
    return out


def worst_signs(V):
    M = np.array(V).T
    u, s, vt = np.linalg.svd(M, full_matrices=False)
    sg = np.where(vt[0] >= 0, 1, -1)
    best = np.linalg.norm(M @ sg)
    improved = True
    while improved:
        improved = False
        for k in range(len(sg)):
            sg[k] = -sg[k]
            v = np.linalg.norm(M @ sg)
            if v > best * (1 + 1e-12):
                best, improved = v, True
            else:
                sg[k] = -sg[k]
    return sg, best


def perturbed_error(zeros, poles, gain, x, L, signs):
    z2, p2, g2 = list(zeros), list(poles), gain
    for (kind, g, part), s in zip(params(zeros, poles), signs):
        if kind == "gain":
            g2 = bump(gain, s)
        elif kind == "pole":
            p2 = moved(p2, g, part, s)
        else:
            z2 = moved(z2, g, part, s)
    x2 = cascade(z2, p2, L)
    r = (g2 - gain) / gain
    sh = shift(x)
    d = tofloat([a - b for a, b in zip(x2, x)], sh) + r * tofloat(x2, sh)
    return float(np.linalg.norm(d) / np.linalg.norm(tofloat(x, sh)))


def closed(roots):
    """Pairs as exact mirror images (the member with im > 0 kept), reals exactly real."""
    roots = np.asarray(roots, complex)
    out = [complex(q.real, 0) for q in roots if abs(q.imag) <= 1e-14 * max(1, abs(q))]
    up = sorted((q for q in roots if q.imag > 1e-14 * max(1, abs(q))), key=lambda q: (abs(q), np.angle(q)))
    for q in up:
        out += [complex(q), complex(q).conjugate()]
    assert len(out) == len(roots)
    return out


def hippo(N, dt, seed):
    """hippo.legs(N, dt, seed) in zpk form: its poles, its zeros (the finite generalised
    eigenvalues of [[Ad, Bd], [C, 0]]) and the gain that matches it at z = 1.3."""
    Ad, Bd, C = hippo_golden.legs(N, dt, seed)
    I = np.eye(N)
    poles = closed(np.linalg.eigvals(Ad))
    M = np.zeros((N + 1, N + 1))
    M[:N, :N], M[:N, N], M[N, :N] = Ad, Bd, C
    E = np.zeros((N + 1, N + 1))
    E[:N, :N] = I
    w = la.eigvals(M, E)
    zeros = closed(w[np.isfinite(w) & (np.abs(w) < 1e8)])
    assert len(zeros) == N - 1, len(zeros)
    z0 = 1.3
    H = C @ np.linalg.solve(z0 * I - Ad, Bd)
    gain = float(np.real(H / (np.prod(z0 - np.array(zeros)) / np.prod(z0 - np.array(poles)))))
    return zeros, poles, gain


def random_filter(n, rho, seed):
    rng = np.random.default_rng(seed)
    poles, zeros = [], []
    while len(poles) < n:
        p = rho * math.sqrt(rng.random()) * np.exp(1j * math.pi * rng.random())
        poles += [complex(p), complex(p).conjugate()]
    while len(zeros) + 2 <= n - 1:
        z = (0.3 + 1.3 * rng.random()) * np.exp(1j * math.pi * rng.random())
        zeros += [complex(z), complex(z).conjugate()]
    return zeros, poles, float(rng.standard_normal())


def s4d(n, dt, seed):
    lam = -0.5 + 1j * math.pi * np.arange(n // 2)
    p = np.exp(dt * lam)
    poles = []
    for q in p:
        poles += [complex(q), complex(q).conjugate()]
    zeros, _, gain = random_filter(n, 0, seed)
    return zeros, poles, gain


def case(name, zeros, poles, gain, L):
    zeros, poles = [complex(z) for z in zeros], [complex(p) for p in poles]
    for roots in (zeros, poles):
        groups(roots)  # asserts conjugate closure
    x = cascade(zeros, poles, L)
    mp_check(zeros, poles, x)
    V = effects(zeros, poles, gain, x, L)
    sg, first = worst_signs(V)
    rng = np.random.default_rng(len(name))
    draws = [perturbed_error(zeros, poles, gain, x, L, sg)]
    for _ in range(4):
        draws.append(perturbed_error(zeros, poles, gain, x, L, rng.choice([-1, 1], len(V))))
    print(f"{name}: worst {draws[0]:.3g} (first order {first:.3g}), draws {[f'{d:.2g}' for d in draws[1:]]}", file=sys.stderr)
    return record(name, zeros, poles, gain, L, x, perturbed=max(draws), draws=draws)


def record(name, zeros, poles, gain, L, x, **extra):
    """A case as the JSON holds it: its numbers, L, the extra fields, and h = gain * x
    (x the exact cascade, in units of 2^-P) rounded to float64."""
    return {
        "name": name,
        "zeros": [[z.real, z.imag] for z in zeros],
        "poles": [[p.real, p.imag] for p in poles],
        "gain": gain,
        "length": L,
        **extra,
        "impulse": [float(v) for v in math.ldexp(gain, shift(x)) * tofloat(x, shift(x))],
    }


def main(only=None):
    cases = []
    for n in (24, 48, 64):
        z, p, k = signal.butter(n, 0.001 / math.pi, output="zpk")
        cases.append(case(f"butter{n}", closed(z), closed(p), float(k), 4096))
    z, p, k = signal.cheby1(16, 1, 0.02 / math.pi, output="zpk")
    cases.append(case("cheby1_16", closed(z), closed(p), float(k), 4096))
    for N in (16, 32):
        cases.append(case(f"hippo_legs{N}", *hippo(N, 0.05, 7), 2048))
    cases.append(case("s4d_lin32", *s4d(32, 0.01, 11), 2048))
    cases.append(case("random12", *random_filter(12, 0.95, 3), 512))
    cases.append(case("random30", *random_filter(30, 0.95, 5), 512))
    meta = {"numpy": np.__version__, "scipy": scipy.__version__, "mpmath": mp.__version__, "bits": P}
    with open(OUT, "w") as fh:
        json.dump({"meta": meta, "cases": cases}, fh)
        fh.write("\n")


if __name__ == "__main__":
    main()
