#!/usr/bin/python3
"""Generate SciPy golden Hankel singular values for analysis.ReduceMIMO.

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 testdata/golden/analysis/gen_mimo_hsv.py

Writes testdata/golden/analysis/mimo_hsv.json: a fixed random MIMO layer (the LRU/S5 form
x_t = diag(p) x_{t-1} + B u_t, y_t = Re(C x_t) + D u_t; one member of each conjugate pair
stored) and the Hankel singular values of its real realisation, sqrt(eig(P Q)) with
P = solve_discrete_lyapunov(A, B B^T) and Q = solve_discrete_lyapunov(A^T, C^T C), largest
first. The real realisation is the one ReduceMIMO documents: states [Re x_k, Im x_k] with
A_k = [[Re p, -Im p], [Im p, Re p]], B_k = [Re B_k; Im B_k], C_k = [Re C_k, -Im C_k], and
the single state [Re x_k] for a real pole with a real B row (its Im x_k is uncontrollable).
Deterministic: np.random.default_rng(31). Floats are written with repr, so the JSON holds
exactly the float64 values computed here. sqrt(eig(P Q)) is accurate to about eps*sigma_1^2/
sigma_i^2 relative, so only the leading values are references to 1e-9.
"""

import json
import os

import numpy as np
import scipy
import scipy.linalg as la

SEED = 31
N_MODES, INPUTS, OUTPUTS = 10, 4, 3

rng = np.random.default_rng(SEED)
radius = 0.3 + 0.65 * rng.random(N_MODES)
angle = np.pi * rng.random(N_MODES)
real_mode = np.arange(N_MODES) % 4 == 3  # modes 3 and 7: real poles, real B rows and C columns
poles = np.where(real_mode, radius * np.sign(rng.random(N_MODES) - 0.3), radius * np.exp(1j * angle))
B = rng.standard_normal((N_MODES, INPUTS)) + 1j * rng.standard_normal((N_MODES, INPUTS))
C = rng.standard_normal((OUTPUTS, N_MODES)) + 1j * rng.standard_normal((OUTPUTS, N_MODES))
B[real_mode] = B[real_mode].real
C[:, real_mode] = C[:, real_mode].real
D = rng.standard_normal((OUTPUTS, INPUTS))

blocks, rows_b, cols_c = [], [], []
for k in range(N_MODES):
    p = poles[k]
    if real_mode[k]:
        blocks.append(np.array([[p.real]]))
        rows_b.append(B[k].real[None, :])
        cols_c.append(C[:, k].real[:, None])
    else:
        blocks.append(np.array([[p.real, -p.imag], [p.imag, p.real]]))
        rows_b.append(np.vstack([B[k].real, B[k].imag]))
        cols_c.append(np.column_stack([C[:, k].real, -C[:, k].imag]))
A = la.block_diag(*blocks)
Br = np.vstack(rows_b)
Cr = np.hstack(cols_c)
P = la.solve_discrete_lyapunov(A, Br @ Br.T)
Q = la.solve_discrete_lyapunov(A.T, Cr.T @ Cr)
hsv = np.sort(np.sqrt(np.abs(np.linalg.eigvals(P @ Q).real)))[::-1]


def cx(a):
    return [[float(v.real), float(v.imag)] for v in np.asarray(a, dtype=complex).ravel()]


out = {
    "meta": {"seed": SEED, "scipy": scipy.__version__, "numpy": np.__version__},
    "inputs": INPUTS,
    "outputs": OUTPUTS,
    "poles": cx(poles),
    "B": cx(B),
    "C": cx(C),
    "D": [float(v) for v in D.ravel()],
    "hsv": [float(v) for v in hsv],
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mimo_hsv.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
