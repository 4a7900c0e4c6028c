#!/usr/bin/python3
"""Search for the best order-n filter on each kernel, independently of ssmlab's fitting.

For fixed poles the kernel is linear in the residues, so the best residues solve a linear
least-squares problem and the search runs over the pole placement only (variable
projection). Each start places the poles at random (four distributions, one of them
clustered near z = 1 as S4 kernels want, and a quarter of the starts with some real poles)
and is refined by Levenberg-Marquardt (SciPy's least_squares). For every local optimum the
script also writes its poles as a float64 RTF -- denominator coefficients by multiplying out
the factors (numpy.poly), the least-squares numerator for that denominator, the kernel by
the recurrence (scipy.signal.lfilter) -- and keeps the best RTF whose coefficients hold all
roots inside the unit circle. Its figures are upper bounds on the optimum (a search, not a
proof); README.md's distillation section quotes them for S4 kernels at n = 16.

    ./ssmlab preset hippo-legs order=64 channels=16 seed=1 > s4.json
    ./ssmlab export s4.json --format npy --length 1024 -o s4.npy
    /usr/bin/python3 bench/pole_search.py s4.npy --order 16 --starts 80 --channels 0-7

Output: one line per channel, then the means, as JSON on stdout.
"""
import argparse
import json
import sys

import numpy as np
import scipy.optimize as so
import scipy.signal as ss


def basis(x, npair, nreal, t):
    # A pair is r = exp(-exp(u)) in (0, 1) at angle θ; a real pole is tanh(v) in (-1, 1).
    cols = []
    for i in range(npair):
        r, th = np.exp(-np.exp(x[2 * i])), x[2 * i + 1]
        pw = r ** t
        cols += [pw * np.cos(th * t), pw * np.sin(th * t)]
    for j in range(nreal):
        cols.append(np.tanh(x[2 * npair + j]) ** t)
    return np.array(cols).T


def residual(x, y, npair, nreal, t):
    # h[0] = D is free, so it is matched exactly; the rest is a least-squares fit.
    m = basis(x, npair, nreal, t)
    c, *_ = np.linalg.lstsq(m, y[1:], rcond=None)
    return (m @ c - y[1:]) / np.linalg.norm(y)


def poles(x, npair, nreal):
    p = []
    for i in range(npair):
        q = np.exp(-np.exp(x[2 * i])) * np.exp(1j * x[2 * i + 1])
        p += [q, np.conj(q)]
    return np.array(p + [complex(np.tanh(v)) for v in x[2 * npair:]])


def as_rtf(p, y):
    """Relative error of the float64 RTF with poles p and the least-squares numerator, and
    the largest root of its rounded denominator (inf error when that root is outside)."""
    a = np.real(np.poly(p))
    rmax = float(np.max(np.abs(np.roots(a))))
    if not rmax < 1:
        return float("inf"), rmax
    imp = np.zeros(len(y))
    imp[0] = 1
    g = ss.lfilter([1.0], a, imp)
    m = np.column_stack([np.concatenate([np.zeros(k), g[:len(y) - k]]) for k in range(len(a))])
    b, *_ = np.linalg.lstsq(m, y, rcond=None)
    return float(np.linalg.norm(m @ b - y) / np.linalg.norm(y)), rmax


def start(n, k, rng):
    """Start k: the layout (pairs, real poles) and a random placement."""
    nreal = (2 * int(rng.integers(1, n // 2)) if k % 4 == 3 and n >= 4 else 0) + n % 2
    npair = (n - nreal) // 2
    d = 10 ** rng.uniform(-4, -0.5, npair)  # distance from the unit circle
    kind = k % 3
    if kind == 0:
        th = rng.uniform(0, np.pi, npair)
    elif kind == 1:
        th = 10 ** rng.uniform(-4, 0.5, npair)
    else:  # clustered near z = 1
        th = np.abs(rng.normal(0, 0.05, npair))
        d = 10 ** rng.uniform(-3.5, -1, npair)
    x = np.column_stack([np.log(d), th]).ravel()
    return np.concatenate([x, rng.uniform(-1, 3, nreal)]), npair, nreal


def search(y, n, starts, rng):
    t = np.arange(len(y) - 1)
    best, best_rtf = float("inf"), float("inf")
    for k in range(starts):
        x0, npair, nreal = start(n, k, rng)
        try:
            r = so.least_squares(residual, x0, args=(y, npair, nreal, t), method="lm", max_nfev=1500)
        except (ValueError, np.linalg.LinAlgError):
            continue
        e = float(np.linalg.norm(r.fun))
        if not np.isfinite(e):
            continue
        best = min(best, e)
        best_rtf = min(best_rtf, as_rtf(poles(r.x, npair, nreal), y)[0])
    return best, best_rtf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", help=".npy file, one kernel per row")
    ap.add_argument("--order", type=int, default=16)
    ap.add_argument("--starts", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--channels", default="", help="a range such as 0-7 (default: all)")
    a = ap.parse_args()
    ys = np.atleast_2d(np.load(a.kernels)).astype(np.float64)
    chans = range(len(ys))
    if a.channels:
        lo, _, hi = a.channels.partition("-")
        chans = range(int(lo), int(hi or lo) + 1)
    rows = []
    for c in chans:
        best, best_rtf = search(ys[c], a.order, a.starts, np.random.default_rng([a.seed, c]))
        rows.append({"channel": c, "best_filter": best, "best_float64_rtf": best_rtf})
        print(json.dumps(rows[-1]), flush=True)
    mean = {k: float(np.mean([r[k] for r in rows])) for k in ("best_filter", "best_float64_rtf")}
    print(json.dumps({"order": a.order, "starts": a.starts, "channels": len(rows), "mean": mean}))


if __name__ == "__main__":
    sys.exit(main())
