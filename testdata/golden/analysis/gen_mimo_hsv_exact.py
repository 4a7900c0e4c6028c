#!/usr/bin/python3
"""Generate exact (mpmath) Hankel singular values of MIMO layers whose values span 1e-20 of
the largest, for analysis.ReduceMIMO.

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 testdata/golden/analysis/gen_mimo_hsv_exact.py

Writes testdata/golden/analysis/mimo_hsv_exact.json. Each case is a layer in the LRU/S5 form
x_t = diag(p) x_{t-1} + B u_t, y_t = Re(C x_t) + D u_t (one member of each conjugate pair
stored), given exactly by float64 numbers, and the Hankel singular values of the real
realisation that analysis.ReduceMIMO documents:

  a complex pole p        states [Re x, Im x]: A_k = [[Re p, -Im p], [Im p, Re p]],
                          B_k = [Re B_k; Im B_k], C_k = [Re C_k, -Im C_k]
  a real pole             the single state [Re x] where its B row or its C column is real
                          (Im x is then uncontrollable or unobservable), else both states

computed at 300 bits: P and Q in closed form from the modal form of A (Cauchy-like matrices,
see gramians), P = L L^T (Cholesky), and the values sqrt(eig(L^T Q L)) (a symmetric
eigenproblem), largest first; rounded to the nearest float64, with log10 of each. The poles are clustered near the unit circle, neighbours
1e-6 to 2e-8 apart, a pseudo-hyperbolic distance |p - q|/|1 - conj(p) q| of about 1e-5 (the
quantity that sets the decay of these Cauchy-like Gramians), so that the Hankel singular
values reach 2e-21 of the largest: forming P and Q in float64 and factoring them loses every
value below about sqrt(eps) of the largest.

The cases (deterministic: np.random.default_rng(SEED + case index), complex normal B and C):
  cluster_r90       6 complex modes at radius 0.9, angles 0.3 + 2e-6 k: 12 states, 2 in, 2 out
  near_circle       6 complex modes at radius 0.999 - 2e-8 k, angles 0.2 + 2e-8 k: 2 in, 3 out
  mixed_real        4 complex modes at 0.95 exp(i (0.1 + 1e-6 k)) and three real poles at
                    0.95 + 1e-6 k: one with a real B row (one state), one with a real C column
                    (one state), one with both complex (two states): 12 states, 3 in, 2 out
  conj_pair         the modes p and conj(p) both stored (S5 without conj_sym), p = 0.97 exp(0.4i),
                    with 3 more 1e-6 apart in angle: 10 states in which the eigenvalues p and
                    conj(p) appear twice, 2 in, 2 out
  wide              4 modes at 0.9 exp(i (0.7 + 1e-6 k)) (8 states), 10 inputs and 9 outputs:
                    more columns than states

Floats are written with repr, so the JSON holds exactly the float64 layer used here.
"""

import json
import os

import mpmath as mp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mimo_hsv_exact.json")
SEED = 2024
mp.mp.prec = 300


def mpf(v):
    return mp.mpf(float(v))


def two_states(p, brow, ccol):
    return p.imag != 0 or (np.any(brow.imag != 0) and np.any(ccol.imag != 0))


def realise(poles, B, C):
    """The real realisation's diagonal blocks (A_k, B_k, C_k) as mpmath matrices."""
    out = C.shape[0]
    blocks = []
    for k, p in enumerate(poles):
        a, b = mpf(p.real), mpf(p.imag)
        if two_states(p, B[k], C[:, k]):
            Ak = mp.matrix([[a, -b], [b, a]])
            Bk = mp.matrix([[mpf(v.real) for v in B[k]], [mpf(v.imag) for v in B[k]]])
            Ck = mp.matrix([[mpf(C[o, k].real), -mpf(C[o, k].imag)] for o in range(out)])
        else:
            Ak = mp.matrix([[a]])
            Bk = mp.matrix([[mpf(v.real) for v in B[k]]])
            Ck = mp.matrix([[mpf(C[o, k].real)] for o in range(out)])
        blocks.append((Ak, Bk, Ck))
    return blocks


def gramians(blocks):
    """P and Q of the real realisation from its modal form A = V diag(lam) V^-1 (a rotation
    block [[a, -b], [b, a]] has V = [[1, 1], [-i, i]] and lam = a + ib, a - ib): with
    F = V^-1 B and G = C V, P = V X V^H and Q = V^-H Y V^-1 for the Cauchy-like
    X_kl = F_k F_l^H / (1 - lam_k conj(lam_l)) and Y_kl = G_k^H G_l / (1 - conj(lam_k) lam_l)."""
    n = sum(Ak.rows for Ak, _, _ in blocks)
    V, W = mp.zeros(n, n), mp.zeros(n, n)  # W = V^-1
    lam = []
    i = 0
    for Ak, _, _ in blocks:
        if Ak.rows == 1:
            V[i, i] = W[i, i] = 1
            lam.append(Ak[0, 0])
        else:
            V[i, i], V[i, i + 1], V[i + 1, i], V[i + 1, i + 1] = 1, 1, -1j, 1j
            W[i, i], W[i, i + 1], W[i + 1, i], W[i + 1, i + 1] = 0.5, 0.5j, 0.5, -0.5j
            lam += [mp.mpc(Ak[0, 0], Ak[1, 0]), mp.mpc(Ak[0, 0], -Ak[1, 0])]
        i += Ak.rows
    Bm = mp.matrix(n, blocks[0][1].cols)
    Cm = mp.matrix(blocks[0][2].rows, n)
    i = 0
    for Ak, Bk, Ck in blocks:
        for r in range(Ak.rows):
            for j in range(Bk.cols):
                Bm[i + r, j] = Bk[r, j]
            for o in range(Ck.rows):
                Cm[o, i + r] = Ck[o, r]
        i += Ak.rows
    F, G = W * Bm, Cm * V
    X = mp.matrix(n, n)
    Y = mp.matrix(n, n)
    for k in range(n):
        for l in range(n):
            X[k, l] = sum(F[k, j] * mp.conj(F[l, j]) for j in range(F.cols)) / (1 - lam[k] * mp.conj(lam[l]))
            Y[k, l] = sum(mp.conj(G[o, k]) * G[o, l] for o in range(G.rows)) / (1 - mp.conj(lam[k]) * lam[l])
    P = V * X * V.H
    Q = W.H * Y * W
    return mp.matrix([[mp.re(P[k, l]) for l in range(n)] for k in range(n)]), \
        mp.matrix([[mp.re(Q[k, l]) for l in range(n)] for k in range(n)])


def hsv(poles, B, C):
    P, Q = gramians(realise(poles, B, C))
    L = mp.cholesky(P)
    M = L.T * Q * L
    M = (M + M.T) / 2
    ev = mp.eigsy(M, eigvals_only=True)
    return sorted((mp.sqrt(v) for v in ev), reverse=True)


def cx(a):
    return [[float(v.real), float(v.imag)] for v in np.asarray(a, dtype=complex).ravel()]


cases = []


def case(name, poles, inputs, outputs, real_b=(), real_c=()):
    rng = np.random.default_rng(SEED + len(cases))
    poles = np.asarray(poles, dtype=complex)
    n = len(poles)
    B = rng.standard_normal((n, inputs)) + 1j * rng.standard_normal((n, inputs))
    C = rng.standard_normal((outputs, n)) + 1j * rng.standard_normal((outputs, n))
    D = rng.standard_normal((outputs, inputs))
    for k in real_b:
        B[k] = B[k].real
    for k in real_c:
        C[:, k] = C[:, k].real
    s = hsv(poles, B, C)
    cases.append({"name": name, "inputs": inputs, "outputs": outputs, "poles": cx(poles), "B": cx(B), "C": cx(C),
                  "D": [float(v) for v in D.ravel()], "hsv": [float(v) for v in s],
                  "hsv_log10": [float(mp.log10(v)) for v in s]})
    print("%-12s %2d states: sigma_min/sigma_1 = %.3g" % (name, len(s), float(s[-1] / s[0])))


k = np.arange(6)
case("cluster_r90", 0.9 * np.exp(1j * (0.3 + 2e-6 * k)), 2, 2)
case("near_circle", (0.999 - 2e-8 * k) * np.exp(1j * (0.2 + 2e-8 * k)), 2, 3)
k = np.arange(4)
case("mixed_real", list(0.95 * np.exp(1j * (0.1 + 1e-6 * k))) + [0.95, 0.950001, 0.950002], 3, 2,
     real_b=(4,), real_c=(5,))
p = 0.97 * np.exp(0.4j)
case("conj_pair", [p, np.conj(p)] + list(0.97 * np.exp(1j * (0.4 + 1e-6 * np.arange(1, 4)))), 2, 2)
case("wide", 0.9 * np.exp(1j * (0.7 + 1e-6 * np.arange(4))), 10, 9)

with open(OUT, "w") as f:
    json.dump({"meta": {"numpy": np.__version__, "mpmath": mp.__version__, "prec_bits": mp.mp.prec, "seed": SEED},
               "cases": cases}, f, indent=1)
    f.write("\n")
print("wrote", OUT, len(cases), "cases")
