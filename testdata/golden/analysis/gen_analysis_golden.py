#!/usr/bin/python3
"""Generate SciPy golden values for the Go tests of ssmlab's analysis/ package.

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 testdata/golden/analysis/gen_analysis_golden.py

Writes testdata/golden/analysis/analysis.json. Deterministic: every random quantity comes from
np.random.default_rng(<fixed seed>), recorded next to each case.

Conventions (matching the Go code): discrete time, x[t+1] = A x + B u, y = C x + D u, so
h[0] = D and h[t] = C A^(t-1) B; transfer functions in the RTF convention
H(z) = h0 + (b1 z^-1 + ... + bn z^-n) / (1 + a1 z^-1 + ... + an z^-n); frequencies in rad/sample;
complex numbers as [re, im]; matrices as lists of rows. Floats are written with repr, so the
JSON holds exactly the float64 values computed here.

What each reference is:
  impulse      scipy.signal.dimpulse (state space) or lfilter of a unit impulse (tf)
  step         scipy.signal.dstep (state space) or lfilter of a unit step (tf)
  H            direct solves D + C (zI - A)^-1 B (state space) or scipy.signal.freqz (tf)
  mag_db       20 log10 |H|
  phase        numpy.unwrap(numpy.angle(H))
  group_delay  scipy.signal.group_delay on (b, a); state-space cases go through ss2tf and
               are kept only up to n = 8, where ss2tf is accurate. At a zero on the unit
               circle SciPy's delay is 0 or rounding noise; those grid points (|H| at
               rounding level) are listed in "gd_singular" and the Go test skips them
  h2           sqrt(D^2 + C P C^T), P = solve_discrete_lyapunov(A, B B^T)
  hsv          sqrt(eig(P Q)), Q = solve_discrete_lyapunov(A^T, C^T C), descending
"""

import json
import math
import os
import warnings

import numpy as np
import scipy
import scipy.linalg as la
import scipy.signal as sig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "analysis.json")
N_OMEGA = 65
OMEGA = np.linspace(0.0, np.pi, N_OMEGA)


def fl(a):
    a = np.asarray(a, dtype=float)
    if a.ndim == 0:
        return float(a)
    return [fl(v) for v in a]


def cx(a):
    a = np.asarray(a, dtype=complex).ravel()
    return [[float(v.real), float(v.imag)] for v in a]


def random_stable(rng, n, rho):
    """A = G/sqrt(n) scaled to spectral radius rho; B, C, D standard normal (the filters
    package's randomStable recipe)."""
    a = rng.standard_normal((n, n)) / math.sqrt(n)
    a *= rho / max(abs(np.linalg.eigvals(a)))
    b = rng.standard_normal(n)
    c = rng.standard_normal(n)
    d = float(rng.standard_normal())
    return a, b, c, d


def ss_case(name, a, b, c, d, n_imp, seed=None, gd=True):
    n = a.shape[0]
    case = {"name": name, "A": fl(a), "B": fl(b), "C": fl(c), "D": d}
    if seed is not None:
        case["seed"] = seed
    sys = (a, b.reshape(n, 1), c.reshape(1, n), np.array([[d]]), 1)
    _, (y,) = sig.dimpulse(sys, n=n_imp)
    case["impulse"] = fl(y.ravel())
    _, (s,) = sig.dstep(sys, n=n_imp)
    case["step"] = fl(s.ravel())
    h = np.array([d + c @ np.linalg.solve(np.exp(1j * w) * np.eye(n) - a, b) for w in OMEGA])
    case["H"] = cx(h)
    case["mag_db"] = fl(20 * np.log10(np.abs(h)))
    case["phase"] = fl(np.unwrap(np.angle(h)))
    if gd and n <= 8:
        num, den = sig.ss2tf(a, b.reshape(n, 1), c.reshape(1, n), np.array([[d]]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, g = sig.group_delay((num[0], den), w=OMEGA)
        case["group_delay"] = fl(g)
    p = la.solve_discrete_lyapunov(a, np.outer(b, b))
    q = la.solve_discrete_lyapunov(a.T, np.outer(c, c))
    case["h2"] = math.sqrt(d * d + c @ p @ c)
    ev = np.linalg.eigvals(p @ q)
    case["hsv"] = fl(np.sort(np.sqrt(np.abs(ev.real)))[::-1])
    return case


def tf_case(name, a, b, h0, n_imp, seed=None):
    """RTF convention: den = [1, a1..an], num = h0*den + [0, b1..bn]."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    den = np.concatenate([[1.0], a])
    num = h0 * den + np.concatenate([[0.0], b])
    case = {"name": name, "a": fl(a), "b": fl(b), "h0": h0}
    if seed is not None:
        case["seed"] = seed
    x = np.zeros(n_imp)
    x[0] = 1
    case["impulse"] = fl(sig.lfilter(num, den, x))
    case["step"] = fl(sig.lfilter(num, den, np.ones(n_imp)))
    _, h = sig.freqz(num, den, worN=OMEGA)
    case["H"] = cx(h)
    with np.errstate(divide="ignore"):
        mag = 20 * np.log10(np.abs(h))
    case["mag_db"] = [float(v) if math.isfinite(v) else None for v in mag]
    case["phase"] = fl(np.unwrap(np.angle(h)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, g = sig.group_delay((num, den), w=OMEGA)
    case["group_delay"] = fl(g)
    # Grid points on a zero of H (|H| at rounding level): the phase jumps there, and SciPy's
    # delay is either 0 (its own singularity test) or rounding noise. The Go test skips them.
    case["gd_singular"] = [int(i) for i in np.nonzero(np.abs(h) <= 1e-12 * np.max(np.abs(h)))[0]]
    return case


def main():
    out = {
        "meta": {
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "omega": "numpy.linspace(0, pi, 65)",
            "generator": "testdata/golden/analysis/gen_analysis_golden.py",
        },
        "omega": fl(OMEGA),
        "systems": [],
        "tf": [],
    }
    for n in (1, 2, 3, 5, 8, 16, 32):
        for rho in (0.9, 0.99):
            seed = 4000 + 10 * n + int(rho * 100) % 10
            rng = np.random.default_rng(seed)
            a, b, c, d = random_stable(rng, n, rho)
            out["systems"].append(ss_case(f"random n={n} rho={rho}", a, b, c, d, 512, seed))
    # An uncontrollable mode: block diagonal with B = 0 on the second block (an HSV of 0).
    a = np.array([[0.5, 0.2, 0.0], [-0.2, 0.5, 0.0], [0.0, 0.0, 0.8]])
    out["systems"].append(ss_case("uncontrollable", a, np.array([1.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0]), 0.0, 128))
    # RTF transfer functions: Montel-constrained random denominators (RTF paper, eq. 17).
    for n in (2, 4, 8, 16):
        seed = 5000 + n
        rng = np.random.default_rng(seed)
        a = rng.standard_normal(n)
        a *= 0.95 / np.sum(np.abs(a))
        b = rng.standard_normal(n)
        out["tf"].append(tf_case(f"montel n={n}", a, b, float(rng.standard_normal()), 256, seed))
    # Zeros on the unit circle: a notch at w = pi/2 (grid point 32) and a zero at z = -1 (w = pi).
    r = 0.9
    num = np.array([1.0, 0.0, 1.0])  # zeros at +-i
    den = np.array([1.0, 0.0, r * r])  # poles at +-0.9i
    # h0 + b(z^-1)/a(z^-1) = num/den with h0 = 1, b = num - den (b0 = 0).
    out["tf"].append(tf_case("notch at pi/2", den[1:], (num - den)[1:], 1.0, 256))
    num = np.array([1.0, 1.0])
    den = np.array([1.0, -0.5])
    out["tf"].append(tf_case("zero at -1", den[1:], (num - den)[1:], 1.0, 256))
    with open(OUT, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
