"""The HiPPO-LegS test filter that several golden scripts share, in one place.

Imported by zpk/gen_zpk_error_golden.py (and through it zpk/gen_zpk_cascade_golden.py) and
analysis/gen_hinf_golden.py, each of which puts this folder on sys.path first, so they run
from the repository root or from their own folder alike.
"""
import numpy as np


def legs(N, dt, seed):
    """HiPPO-LegS of order N (LSSL paper, B.2 and E.2, as presets.LegS: A_nk =
    -sqrt(2n+1)sqrt(2k+1) below the diagonal, -(n+1) on it, B_n = sqrt(2n+1)), C standard
    normal from np.random.default_rng(seed), discretised by the bilinear transform at step dt.
    Returns (Ad, Bd, C) in float64."""
    n = np.arange(N)
    A = -np.sqrt(2 * n[:, None] + 1) * np.sqrt(2 * n[None, :] + 1)
    A = np.tril(A, -1) - np.diag(n + 1.0)
    B = np.sqrt(2 * n + 1.0)
    C = np.random.default_rng(seed).standard_normal(N)
    I = np.eye(N)
    Ad = np.linalg.solve(I - dt / 2 * A, I + dt / 2 * A)
    Bd = np.linalg.solve(I - dt / 2 * A, dt * B)
    return Ad, Bd, C
