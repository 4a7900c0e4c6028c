#!/usr/bin/python3
"""Times square-root balanced truncation of a MIMO layer in SciPy, beside ssmlab's
analysis.ReduceMIMO on the same layer (BenchmarkReduceMIMOFile).

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 bench/mimo_bt_scipy.py /tmp/lru_layer.json
    SSMLAB_MIMO_JSON=/tmp/lru_layer.json go test ./analysis -run '^$' -bench ReduceMIMOFile

The layer is an LRU layer as minimal-LRU initialises it for the LRA tasks (lru/model.py's
init: |λ| uniform in the ring 0.9–0.999, phase up to π/10, B and C normal over √(2H) and √P),
P = 256 modes, H = 128 inputs and outputs, seed 5; it is written to the path given in the
format of testdata/golden/analysis/mimo_hsv.json. SciPy reduces it to order 64 as a SciPy
user would: the real realisation (2P states), the Gramians by solve_discrete_lyapunov, their
Cholesky factors (eigh where Cholesky fails on a semi-definite Gramian), the SVD of Rᵀ·S,
the projections and the eigenvalues of the reduced A. One thread (OMP/OPENBLAS set before
numpy loads), best of three. It prints the seconds and the five leading Hankel singular
values, which the Go benchmark's match.
"""

import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.linalg as la  # noqa: E402

P, H, ORDER = 256, 128, 64

rng = np.random.default_rng(5)
r = np.sqrt(rng.uniform(0.9**2, 0.999**2, P))
poles = r * np.exp(1j * rng.uniform(0, np.pi / 10, P))
gamma = np.sqrt(1 - np.abs(poles) ** 2)
B = (rng.standard_normal((P, H)) + 1j * rng.standard_normal((P, H))) / np.sqrt(2 * H) * gamma[:, None]
C = (rng.standard_normal((H, P)) + 1j * rng.standard_normal((H, P))) / np.sqrt(P)
D = np.diag(rng.standard_normal(H))


def cx(a):
    return [[float(v.real), float(v.imag)] for v in np.asarray(a, dtype=complex).ravel()]


with open(sys.argv[1], "w") as f:
    json.dump({"inputs": H, "outputs": H, "poles": cx(poles), "B": cx(B), "C": cx(C), "D": [float(v) for v in D.ravel()]}, f)


def factor(x):
    try:
        return la.cholesky(x, lower=True)
    except la.LinAlgError:
        w, v = la.eigh(x)
        return v * np.sqrt(np.maximum(w, 0))


def reduce():
    blocks = [np.array([[p.real, -p.imag], [p.imag, p.real]]) for p in poles]
    A = la.block_diag(*blocks)
    Br = np.empty((2 * P, H))
    Br[0::2], Br[1::2] = B.real, B.imag
    Cr = np.empty((H, 2 * P))
    Cr[:, 0::2], Cr[:, 1::2] = C.real, -C.imag
    Pg = la.solve_discrete_lyapunov(A, Br @ Br.T)
    Qg = la.solve_discrete_lyapunov(A.T, Cr.T @ Cr)
    S, R = factor(Pg), factor(Qg)
    U, s, Vt = la.svd(R.T @ S)
    w = 1 / np.sqrt(s[:ORDER])
    Tl = (U[:, :ORDER].T @ R.T) * w[:, None]
    Tr = (S @ Vt[:ORDER].T) * w[None, :]
    Ar = Tl @ A @ Tr
    la.eig(Ar)
    return s


best = float("inf")
for _ in range(3):
    t0 = time.perf_counter()
    s = reduce()
    best = min(best, time.perf_counter() - t0)
print(f"scipy {scipy.__version__}, numpy {np.__version__}, 1 thread: balanced truncation of {P} modes, {H} inputs and outputs to order {ORDER}: {best:.3f} s (best of 3)")
print("leading Hankel singular values:", " ".join(f"{v:.10g}" for v in s[:5]))
