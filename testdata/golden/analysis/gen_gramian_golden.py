#!/usr/bin/python3
"""Generate mpmath golden H2 norms and Hankel singular values for hard Gramians.

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 testdata/golden/analysis/gen_gramian_golden.py

Writes testdata/golden/analysis/gramian.json. Each case is a single-input single-output
system given exactly by float64 numbers (a dense A, B, C, D, or a transfer function in the RTF
convention h0 + b(z^-1)/(1 + a(z^-1))); the references are the exact values for those
numbers, computed with mpmath at 300 bits:

  h2    sqrt(D^2 + C P C^T), P from the Kronecker form of A P A^T - P + B B^T = 0
  hsv   sqrt(eig(P Q)), Q from A^T Q A - Q + C^T C = 0, descending

each also as log10 ("h2_log10", "hsv_log10"): the float64 value is 0 or inf where the exact
one lies beyond float64's range, and the Go test then expects the refusal.

and, where float64 can compute them (not the scaled cases), SciPy's values for comparison
("scipy_hsv": sqrt(eig(P Q)) with P, Q from scipy.linalg.solve_discrete_lyapunov; those below
about sqrt(eps)*sigma_1 are rounding noise).

The cases:
  jordan5, jordan6      a Jordan block at 0.99 (A upper bidiagonal, ones above the diagonal),
                        B all ones, C = e_1: the Gramians span 22 and 27 orders of magnitude,
                        and factoring a computed P loses every Hankel singular value below
                        sqrt(eps)*sigma_1 (QA finding 2)
  cjordan3              the real Jordan form of a triple pair 0.99*exp(+-0.3i) (2x2 rotation
                        blocks, identity blocks above them)
  rotjordan5,           jordan5 and jordan6 in a random orthonormal basis (seed 1): the Schur
  rotjordan6            form rounds A, which moves the clustered poles by eps^(1/n); "refuse"
                        is true where that moves the results by more than 1e-6
  tfrepeated5           (1 - 0.99 z^-1)^-5 as a transfer function (refuse: true)
  scaled_*              A = [[0.5, -0.5], [0.5, 0.5]] with B = [s, 0] and C = [0, s] (or
                        C = [0, 1]), and tf b = [0, s]: gains far from 1 whose squares
                        leave float64's range (QA finding 3)
  butter12, butter20    scipy.signal.butter(N, 0.01/pi, output='zpk') (zeros, poles, gain):
                        pole pairs clustered near z = 1, which neither the modal form nor
                        polynomial coefficients hold in float64; the references come from
                        the modal form at 300 bits, residues r_i = k prod(p_i - z) /
                        prod_{j != i}(p_i - p_j), P_ij = 1/(1 - p_i conj(p_j)),
                        Q_ij = conj(r_i) r_j/(1 - conj(p_i) p_j), h2^2 = D^2 + sum_ij
                        r_i conj(r_j)/(1 - p_i conj(p_j)) (analysis QA finding 1)

Floats are written with repr; mpmath values are rounded to the nearest float64.
"""

import json
import os
import warnings

import mpmath as mp
import numpy as np
import scipy
import scipy.linalg as la
import scipy.signal as signal

# solve_discrete_lyapunov warns of its own ill-conditioning on the Jordan blocks; the warning
# is what the "scipy_hsv" comparison shows.
warnings.filterwarnings("ignore", category=la.LinAlgWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gramian.json")
mp.mp.prec = 300


def gram(A, b):
    """The exact solution of A X A^T - X + b b^T = 0 for the float64 A and b."""
    n = len(b)
    M = mp.matrix([[mp.mpf(float(v)) for v in row] for row in A])
    K = mp.matrix(n * n, n * n)
    for i in range(n):
        for j in range(n):
            for k in range(n):
                for l in range(n):
                    K[i * n + j, k * n + l] = M[i, k] * M[j, l]
    for i in range(n * n):
        K[i, i] -= 1
    w = mp.matrix(n * n, 1)
    for i in range(n):
        for j in range(n):
            w[i * n + j] = -mp.mpf(float(b[i])) * mp.mpf(float(b[j]))
    x = mp.lu_solve(K, w)
    return mp.matrix([[x[i * n + j] for j in range(n)] for i in range(n)])


def exact(A, B, C, D):
    A = np.asarray(A, dtype=float)
    P = gram(A, B)
    Q = gram(A.T, C)
    c = mp.matrix([mp.mpf(float(v)) for v in C])
    h2 = mp.sqrt(mp.mpf(float(D)) ** 2 + (c.T * P * c)[0])
    ev = mp.eig(P * Q, left=False, right=False)
    hsv = sorted((mp.sqrt(mp.re(e)) for e in ev), reverse=True)
    return h2, hsv


def scipy_hsv(A, B, C):
    A = np.asarray(A, dtype=float)
    P = la.solve_discrete_lyapunov(A, np.outer(B, B))
    Q = la.solve_discrete_lyapunov(A.T, np.outer(C, C))
    ev = np.sort(np.abs(np.linalg.eigvals(P @ Q)))[::-1]
    return [float(v) for v in np.sqrt(ev)]


def companion(a, b):
    """The controllable companion realisation of h0 + b(z^-1)/(1 + a(z^-1)) (its A is exact;
    only the references use it)."""
    n = len(a)
    A = np.zeros((n, n))
    A[0, :] = -np.asarray(a)
    A[1:, :-1] += np.eye(n - 1)
    B = np.zeros(n)
    B[0] = 1
    return A, B, np.asarray(b, dtype=float)


def jordan(n, r):
    return np.diag([r] * n) + np.diag([1.0] * (n - 1), 1), np.ones(n), np.eye(n)[0]


cases = []


def refs(h2, hsv):
    """The references as float64, with log10 of each (the scaled cases lie beyond float64)."""
    return {"h2": float(h2), "h2_log10": float(mp.log10(h2)), "hsv": [float(v) for v in hsv],
            "hsv_log10": [float(mp.log10(v)) for v in hsv]}


def dense_case(name, A, B, C, D=0.0, refuse=False, with_scipy=True):
    c = {"name": name, "A": [[float(v) for v in row] for row in np.asarray(A)], "B": [float(v) for v in B],
         "C": [float(v) for v in C], "D": float(D), "refuse": refuse}
    c.update(refs(*exact(A, B, C, D)))
    if with_scipy:
        c["scipy_hsv"] = scipy_hsv(A, B, C)
    cases.append(c)


def tf_case(name, a, b, h0=0.0, refuse=False):
    A, B, C = companion(a, b)
    c = {"name": name, "a": [float(v) for v in a], "b": [float(v) for v in b], "h0": float(h0), "refuse": refuse}
    c.update(refs(*exact(A, B, C, h0)))
    cases.append(c)


for n in (5, 6):
    dense_case("jordan%d" % n, *jordan(n, 0.99))

k, r, th = 3, 0.99, 0.3
A = np.zeros((2 * k, 2 * k))
rot = r * np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
for i in range(k):
    A[2 * i:2 * i + 2, 2 * i:2 * i + 2] = rot
    if i + 1 < k:
        A[2 * i:2 * i + 2, 2 * i + 2:2 * i + 4] = np.eye(2)
dense_case("cjordan3", A, np.ones(2 * k), np.eye(2 * k)[0])

for n in (5, 6):
    J, B, C = jordan(n, 0.99)
    V, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((n, n)))
    dense_case("rotjordan%d" % n, V @ J @ V.T, V @ B, C @ V.T, refuse=True)

tf_case("tfrepeated5", list(np.poly([0.99] * 5)[1:]), [0.0, 0.0, 0.0, 0.0, 1.0], refuse=True)

ROT = np.array([[0.5, -0.5], [0.5, 0.5]])
for s in (1e-170, 1e-150, 1e-100, 1e100, 1e150):
    dense_case("scaled_bc_%g" % s, ROT, [s, 0.0], [0.0, s], with_scipy=False)
    dense_case("scaled_b_%g" % s, ROT, [s, 0.0], [0.0, 1.0], with_scipy=False)
for s in (1e-200, 1e-100, 1e100, 1e200):
    tf_case("scaled_tf_%g" % s, [-1.0, 0.5], [0.0, s])

def zpk_exact(z, p, k, h0=0.0):
    """The exact H2 norm and Hankel singular values of h0 + k prod(z - z_i)/prod(z - p_i) for
    the float64 zeros, poles and gain, from its modal form (distinct poles)."""
    Z = [mp.mpc(complex(v).real, complex(v).imag) for v in z]
    P = [mp.mpc(complex(v).real, complex(v).imag) for v in p]
    K = mp.mpf(float(k))
    n = len(P)
    r = []
    for i in range(n):
        num = K
        for zz in Z:
            num *= P[i] - zz
        den = mp.mpc(1)
        for j in range(n):
            if j != i:
                den *= P[i] - P[j]
        r.append(num / den)
    D = mp.mpf(float(h0)) + (K if len(Z) == n else 0)
    G = mp.matrix(n, n)
    Qm = mp.matrix(n, n)
    s2 = mp.mpf(0)
    for i in range(n):
        for j in range(n):
            G[i, j] = 1 / (1 - P[i] * mp.conj(P[j]))
            Qm[i, j] = mp.conj(r[i]) * r[j] / (1 - mp.conj(P[i]) * P[j])
            s2 += mp.re(r[i] * mp.conj(r[j]) / (1 - P[i] * mp.conj(P[j])))
    ev = mp.eig(G * Qm, left=False, right=False)
    hsv = sorted((mp.sqrt(abs(mp.re(e))) for e in ev), reverse=True)
    return mp.sqrt(D ** 2 + s2), hsv


def pairs(v):
    return [[float(complex(x).real), float(complex(x).imag)] for x in v]


def zpk_case(name, z, p, k, refuse=False):
    c = {"name": name, "zeros": pairs(z), "poles": pairs(p), "gain": float(k), "refuse": refuse}
    c.update(refs(*zpk_exact(z, p, k)))
    cases.append(c)


for n in (12, 20):
    zpk_case("butter%d" % n, *signal.butter(n, 0.01 / np.pi, output="zpk"))

with open(OUT, "w") as f:
    json.dump({"meta": {"scipy": scipy.__version__, "numpy": np.__version__, "mpmath": mp.__version__,
                        "prec_bits": mp.mp.prec},
               "cases": cases}, f, indent=1)
    f.write("\n")
print("wrote", OUT, len(cases), "cases")
