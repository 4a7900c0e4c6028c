#!/usr/bin/python3
"""Generate SciPy golden values for the ssmlab Go tests.

Run from the repository root with the Debian interpreter:

    /usr/bin/python3 testdata/golden/gen_golden.py

Writes testdata/golden/golden.json. The output is deterministic: every random
quantity comes from np.random.default_rng(<fixed seed>), and the seeds are
recorded next to each case.

Conventions (matching the Go code):
  * discrete time, control convention x[t+1] = A x[t] + B u[t], y = C x + D u,
    so the impulse response is h[0] = D, h[t] = C A^(t-1) B for t >= 1;
  * frequencies are in rad/sample, z = exp(j*omega);
  * complex numbers are stored as [re, im] pairs, matrices as lists of rows;
  * SISO only: B is stored as a length-n list (the column), C as a length-n
    list (the row), D as a scalar.

Floats are written with Python's repr (shortest round-trip form), so the
values in the JSON are exactly the float64 values computed here.
"""

import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
import scipy.linalg
import scipy.signal as sig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden.json")

N_IMPULSE_SYS = 512
N_IMPULSE_TF = 256
N_OMEGA = 64
OMEGA = np.linspace(0.0, np.pi, N_OMEGA)


# ----------------------------------------------------------------------------
# JSON helpers
# ----------------------------------------------------------------------------

def fnum(x):
    """A finite Python float, or None (JSON null) for NaN/Inf (Go's
    encoding/json rejects NaN and Infinity)."""
    x = float(x)
    return x if math.isfinite(x) else None


def reals(a):
    """Real ndarray (any rank) -> nested lists of floats."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        if np.any(a.imag != 0):
            raise ValueError("unexpected complex values")
        a = a.real
    if a.ndim == 0:
        return fnum(a)
    return [reals(v) for v in a]


def cplx(a):
    """Complex 1-D array -> list of [re, im]."""
    a = np.asarray(a, dtype=complex).ravel()
    return [[fnum(v.real), fnum(v.imag)] for v in a]


def sort_complex(a):
    """Deterministic order (by real part, then imaginary part) so the JSON is
    stable; the Go tests should match roots as multisets anyway."""
    a = np.asarray(a, dtype=complex).ravel()
    return a[np.lexsort((a.imag, a.real))]


# ----------------------------------------------------------------------------
# Reference computations in plain numpy
# ----------------------------------------------------------------------------

def impulse_recurrence(A, B, C, D, n_samples):
    """h[0] = D, h[t] = C A^(t-1) B by the direct float64 recurrence."""
    h = np.empty(n_samples)
    h[0] = D
    x = B.astype(float).copy()
    for t in range(1, n_samples):
        h[t] = C @ x
        x = A @ x
    return h


def freq_resp_ss(A, B, C, D, omega):
    """H(e^{jw}) = D + C (zI - A)^{-1} B by direct complex solves."""
    n = A.shape[0]
    H = np.empty(len(omega), dtype=complex)
    for i, w in enumerate(omega):
        z = np.exp(1j * w)
        if n == 0:
            H[i] = D
        else:
            H[i] = D + C @ np.linalg.solve(z * np.eye(n) - A, B.astype(complex))
    return H


def invariant_zeros(A, B, C, D):
    """Finite generalized eigenvalues of the Rosenbrock pencil
    ([[A, B], [C, D]], [[I, 0], [0, 0]]) -- the transmission zeros computed
    without going through polynomial coefficients (a reference for
    ss2zpk, which is inaccurate at large n because it goes via ss2tf)."""
    n = A.shape[0]
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = A
    M[:n, n] = B
    M[n, :n] = C
    M[n, n] = D
    N = np.zeros((n + 1, n + 1))
    N[:n, :n] = np.eye(n)
    alpha, beta = scipy.linalg.eig(M, N, right=False, homogeneous_eigvals=True)
    finite = np.abs(beta) > 1e-12 * np.maximum(np.abs(alpha), 1.0)
    return alpha[finite] / beta[finite]


def rel_l2(x, ref):
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        return float("inf")
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def random_stable(rng, n, rho):
    """A = randn(n,n)/sqrt(n) rescaled to spectral radius rho; B, C randn(n);
    D randn()."""
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    A *= rho / np.max(np.abs(np.linalg.eigvals(A)))
    B = rng.standard_normal(n)
    C = rng.standard_normal(n)
    D = float(rng.standard_normal())
    return A, B, C, D


def scipy_impulse_ss(A, B, C, D, n_samples):
    _, (y,) = sig.dimpulse(
        (A, B.reshape(-1, 1), C.reshape(1, -1), np.array([[D]]), 1),
        n=n_samples)
    return y[:, 0]


def scipy_tf_impulse(num, den, n_samples):
    u = np.zeros(n_samples)
    u[0] = 1.0
    with np.errstate(all="ignore"):
        return sig.lfilter(num, den, u)


# ----------------------------------------------------------------------------
# 1. systems
# ----------------------------------------------------------------------------

def system_entry(name, A, B, C, D, seed=None, rho=None, notes=None):
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float).ravel()
    C = np.asarray(C, dtype=float).ravel()
    D = float(D)
    n = A.shape[0]

    h_ref = impulse_recurrence(A, B, C, D, N_IMPULSE_SYS)
    H = freq_resp_ss(A, B, C, D, OMEGA)

    if n == 0:
        # SciPy cannot build n = 0 state-space systems; everything by hand.
        h = h_ref
        poles = np.array([], dtype=complex)
        zeros = np.array([], dtype=complex)
        gain = D
        tf_b = np.array([D])
        tf_a = np.array([1.0])
        zeros_pencil = np.array([], dtype=complex)
        tf_err = 0.0
        rho_A = 0.0
    else:
        h = scipy_impulse_ss(A, B, C, D, N_IMPULSE_SYS)
        scale = max(np.max(np.abs(h_ref)), 1e-300)
        err = np.max(np.abs(h - h_ref)) / scale
        assert err < 1e-9, (name, err)
        assert h[0] == D, name  # dimpulse: y[0] = D, y[1] = C B

        poles = np.linalg.eigvals(A)
        rho_A = float(np.max(np.abs(poles)))
        with np.errstate(all="ignore"):
            num, den = sig.ss2tf(A, B.reshape(-1, 1), C.reshape(1, -1),
                                 np.array([[D]]))
            # tf2zpk warns (BadCoefficients) when it strips the exactly-zero
            # leading numerator coefficient of D_zero; that is expected.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", sig.BadCoefficients)
                zeros, _, gain = sig.ss2zpk(A, B.reshape(-1, 1),
                                            C.reshape(1, -1), np.array([[D]]))
        tf_b = np.asarray(num)[0]
        tf_a = np.asarray(den)
        zeros_pencil = invariant_zeros(A, B, C, D)
        tf_err = rel_l2(scipy_tf_impulse(tf_b, tf_a, N_IMPULSE_SYS), h_ref)

    e = {
        "name": name,
        "n": n,
        "A": reals(A) if n else [],
        "B": reals(B) if n else [],
        "C": reals(C) if n else [],
        "D": D,
        "impulse": reals(h),
        "omega": reals(OMEGA),
        "H": cplx(H),
        "poles": cplx(sort_complex(poles)),
        "zeros": cplx(sort_complex(zeros)),
        "gain": fnum(gain),
        "tf_b": reals(tf_b),
        "tf_a": reals(tf_a),
        "spectral_radius": rho_A,
        # Extras (not from the brief, for deciding how far to trust the
        # polynomial-based fields above):
        #   zeros_pencil: transmission zeros from the Rosenbrock pencil
        #     (scipy.linalg.eig), accurate at all n;
        #   ss2tf_impulse_rel_err: rel. L2 error over 512 samples of
        #     lfilter(tf_b, tf_a, impulse) vs the recurrence -- large values
        #     mean tf_b / tf_a / zeros / gain are polluted by ss2tf rounding.
        "zeros_pencil": cplx(sort_complex(zeros_pencil)),
        "ss2tf_impulse_rel_err": fnum(tf_err),
    }
    if seed is not None:
        e["seed"] = seed
    if rho is not None:
        e["rho"] = rho
    if notes:
        e["notes"] = notes
    return e


def gen_systems():
    out = []
    for n in [1, 2, 3, 5, 8, 16, 32, 64]:
        for k in range(2):
            seed = 1000 + 10 * n + k
            rng = np.random.default_rng(seed)
            rho = float(rng.uniform(0.5, 0.95))
            A, B, C, D = random_stable(rng, n, rho)
            out.append(system_entry(f"random_n{n}_s{k}", A, B, C, D,
                                    seed=seed, rho=rho))

    # order0: pure feedthrough, no state.
    out.append(system_entry("order0", np.zeros((0, 0)), np.zeros(0),
                            np.zeros(0), 1.5,
                            notes="n=0, D=1.5; computed by hand "
                                  "(scipy cannot build n=0 systems)"))

    # marginal: rotation by theta, spectral radius exactly 1.
    rng = np.random.default_rng(2001)
    th = 0.3
    c, s = math.cos(th), math.sin(th)
    A = np.array([[c, -s], [s, c]])
    B = rng.standard_normal(2)
    C = rng.standard_normal(2)
    D = float(rng.standard_normal())
    out.append(system_entry("marginal", A, B, C, D, seed=2001,
                            notes="2x2 rotation by 0.3 rad, |poles| = 1; "
                                  "omega[6] = 0.2992 is 8e-4 from the pole "
                                  "angle, so |H| there is ~1.6e3 (use a "
                                  "relative tolerance)"))

    # unstable: spectral radius 1.05, n = 4.
    rng = np.random.default_rng(2002)
    A, B, C, D = random_stable(rng, 4, 1.05)
    out.append(system_entry("unstable", A, B, C, D, seed=2002, rho=1.05,
                            notes="spectral radius 1.05; impulse grows ~1.05^t"))

    # uncontrollable: block-diagonal A, B has no component on the second
    # block, so its modes are not reached from the input (they cancel
    # between numerator and denominator in tf/zpk).
    rng = np.random.default_rng(2003)
    A1 = rng.standard_normal((2, 2)) / np.sqrt(2)
    A1 *= 0.8 / np.max(np.abs(np.linalg.eigvals(A1)))
    A2 = np.array([[0.6, 0.0], [0.0, -0.4]])
    A = scipy.linalg.block_diag(A1, A2)
    B = np.concatenate([rng.standard_normal(2), [0.0, 0.0]])
    C = rng.standard_normal(4)
    D = float(rng.standard_normal())
    out.append(system_entry("uncontrollable", A, B, C, D, seed=2003,
                            notes="A = blkdiag(A1, diag(0.6, -0.4)); B[2:] = 0 "
                                  "so poles 0.6 and -0.4 are uncontrollable "
                                  "and appear also among the zeros"))

    # D_zero: n = 6, strictly proper.
    rng = np.random.default_rng(2004)
    A, B, C, _ = random_stable(rng, 6, 0.85)
    out.append(system_entry("D_zero", A, B, C, 0.0, seed=2004, rho=0.85,
                            notes="D = 0: h[0] = 0, tf_b[0] = 0, only n-1 "
                                  "finite zeros"))
    return out


# ----------------------------------------------------------------------------
# 2. ss2tf accuracy at large n
# ----------------------------------------------------------------------------

def random_ring(rng, n, r):
    """n even: n/2 complex-conjugate pole pairs all at radius r with angles
    uniform in (0, pi) (an S4D/LRU-like diagonal SSM), hidden by a random
    orthogonal similarity: A = Q blkdiag(r R(theta_i)) Q^T; B, C randn(n);
    D randn()."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    th = rng.uniform(0.0, np.pi, n // 2)
    blocks = [r * np.array([[math.cos(t), -math.sin(t)],
                            [math.sin(t), math.cos(t)]]) for t in th]
    A = Q @ scipy.linalg.block_diag(*blocks) @ Q.T
    B = rng.standard_normal(n)
    C = rng.standard_normal(n)
    D = float(rng.standard_normal())
    return A, B, C, D


def accuracy_case(A, B, C, D, n, seed, rho, keep_matrices):
    h_ref = impulse_recurrence(A, B, C, D, N_IMPULSE_SYS)
    with np.errstate(all="ignore"):
        num, den = sig.ss2tf(A, B.reshape(-1, 1), C.reshape(1, -1),
                             np.array([[D]]))
    # dlti(num, den, dt=1) + dimpulse is the same filter as lfilter on a unit
    # impulse; lfilter is used because it tolerates diverging outputs.
    h_tf = scipy_tf_impulse(np.asarray(num)[0], den, N_IMPULSE_SYS)
    err = rel_l2(h_tf, h_ref)
    e = {"n": n, "seed": seed, "rho": rho,
         # null (with scipy_tf_diverged = true) when lfilter overflowed
         "scipy_tf_rel_err": fnum(err),
         "scipy_tf_diverged": not math.isfinite(err)}
    if keep_matrices:
        e.update({"A": reals(A), "B": reals(B), "C": reals(C), "D": D,
                  "impulse_ref": reals(h_ref)})
    return e, err


def gen_ss2tf_accuracy():
    """The brief's recipe (A = randn/sqrt(n) rescaled to rho = 0.9): its
    eigenvalues fill the disc (circular law) and, as it turns out, ss2tf stays
    accurate (~1e-11 or better) up to n = 128."""
    out, rows = [], []
    for n in [32, 64, 96, 128]:
        for k in range(3):
            seed = 5000 + 10 * n + k
            rng = np.random.default_rng(seed)
            A, B, C, D = random_stable(rng, n, 0.9)
            e, err = accuracy_case(A, B, C, D, n, seed, 0.9, n in (96, 128))
            e["recipe"] = "randn"
            out.append(e)
            rows.append(("randn", n, seed, err))
    return out, rows


def gen_ss2tf_accuracy_ring():
    """Extra (not in the brief): poles all on the circle |z| = 0.9 (random
    angles), where the characteristic-polynomial route of ss2tf does lose
    accuracy and, from n ~ 96, diverges. Matrices are kept only for seed
    index 0 at n in {96, 128} to bound the file size."""
    out, rows = [], []
    for n in [32, 64, 96, 128]:
        for k in range(3):
            seed = 7000 + 10 * n + k
            rng = np.random.default_rng(seed)
            A, B, C, D = random_ring(rng, n, 0.9)
            e, err = accuracy_case(A, B, C, D, n, seed, 0.9,
                                   n in (96, 128) and k == 0)
            e["recipe"] = "ring"
            out.append(e)
            rows.append(("ring", n, seed, err))
    return out, rows


# ----------------------------------------------------------------------------
# 3. discretization
# ----------------------------------------------------------------------------
# NOTE: scipy.signal.cont2discrete(method='gbt') also transforms C and D:
#   Cd = C (I - alpha dt A)^{-1},  Dd = D + alpha C (I - alpha dt A)^{-1} dt B
# (zoh leaves C, D unchanged). The Go code keeps C and D unchanged
# (LSSL-style), so only Ad and Bd are stored here:
#   gbt: Ad = (I - alpha dt A)^{-1} (I + (1 - alpha) dt A)
#        Bd = (I - alpha dt A)^{-1} dt B
#   zoh: Ad = expm(dt A), Bd = (int_0^dt expm(s A) ds) B

GBT = [("euler", 0.0), ("bilinear", 0.5), ("backward_euler", 1.0)]


def disc_cases(A, B, C, D, dt, seed, name, methods):
    out = []
    Bc, Cc, Dc = B.reshape(-1, 1), C.reshape(1, -1), np.array([[D]])
    n = A.shape[0]
    for mname, alpha in methods:
        if mname == "zoh":
            Ad, Bd, _, _, _ = sig.cont2discrete((A, Bc, Cc, Dc), dt,
                                                method="zoh")
            # cross-check against the augmented-matrix exponential
            M = np.zeros((n + 1, n + 1))
            M[:n, :n] = A * dt
            M[:n, n] = B * dt
            E = scipy.linalg.expm(M)
            assert np.allclose(Ad, E[:n, :n], rtol=1e-12, atol=1e-13)
            assert np.allclose(Bd[:, 0], E[:n, n], rtol=1e-12, atol=1e-13)
        else:
            Ad, Bd, _, _, _ = sig.cont2discrete((A, Bc, Cc, Dc), dt,
                                                method="gbt", alpha=alpha)
            I = np.eye(n)
            ima = I - alpha * dt * A
            assert np.allclose(Ad, np.linalg.solve(ima, I + (1 - alpha) * dt * A),
                               rtol=1e-12, atol=1e-13)
            assert np.allclose(Bd[:, 0], np.linalg.solve(ima, dt * B),
                               rtol=1e-12, atol=1e-13)
        out.append({
            "name": name, "seed": seed,
            "A": reals(A), "B": reals(B), "C": reals(C), "D": float(D),
            "dt": dt, "method": mname, "alpha": alpha,
            "Ad": reals(Ad), "Bd": reals(np.asarray(Bd)[:, 0]),
        })
    return out


def gen_discretization():
    out = []
    methods = GBT + [("zoh", None)]
    for k in range(3):
        seed = 3000 + k
        rng = np.random.default_rng(seed)
        n = 4
        A = rng.standard_normal((n, n)) / np.sqrt(n) - 1.0 * np.eye(n)
        B = rng.standard_normal(n)
        C = rng.standard_normal(n)
        D = float(rng.standard_normal())
        for dt in [0.1, 0.5]:
            out += disc_cases(A, B, C, D, dt, seed, f"cont_s{k}", methods)

    # zoh with a singular A: an integrator (zero row and column) plus a
    # stable 2x2 block, so A^{-1}(expm(dt A) - I) B cannot be used.
    seed = 3100
    rng = np.random.default_rng(seed)
    A = np.zeros((3, 3))
    A[1:, 1:] = np.array([[-0.5, 1.0], [-1.0, -0.5]])
    B = rng.standard_normal(3)
    C = rng.standard_normal(3)
    D = float(rng.standard_normal())
    assert abs(np.linalg.det(A)) == 0.0
    for dt in [0.1, 0.5]:
        out += disc_cases(A, B, C, D, dt, seed, "singular_integrator",
                          [("zoh", None)])
    return out


# ----------------------------------------------------------------------------
# 4. tf (RTF convention)
# ----------------------------------------------------------------------------

def gen_tf():
    out = []
    for n in [2, 4, 8]:
        for k in range(2):
            seed = 4000 + 10 * n + k
            rng = np.random.default_rng(seed)
            # n/2 conjugate pairs with radius in [0.3, 0.9]
            r = rng.uniform(0.3, 0.9, n // 2)
            th = rng.uniform(0.05, np.pi - 0.05, n // 2)
            p = r * np.exp(1j * th)
            poles_true = np.concatenate([p, p.conj()])
            a = np.real(np.poly(poles_true))[1:]
            b = rng.standard_normal(n)
            h0 = float(rng.standard_normal())
            den = np.concatenate([[1.0], a])
            num = h0 * den + np.concatenate([[0.0], b])
            u = np.zeros(N_IMPULSE_TF)
            u[0] = 1.0
            h = sig.lfilter(num, den, u)
            _, H = sig.freqz(num, den, worN=OMEGA)
            # cross-check H directly
            z = np.exp(1j * OMEGA)
            zi = 1.0 / z
            Hd = h0 + np.polyval(np.concatenate([b[::-1], [0.0]]), zi) / \
                np.polyval(den[::-1], zi)
            assert np.allclose(H, Hd, rtol=1e-10, atol=1e-12)
            assert h[0] == h0
            out.append({
                "name": f"tf_n{n}_s{k}", "seed": seed, "n": n,
                "a": reals(a), "b": reals(b), "h0": h0,
                "num": reals(num), "den": reals(den),
                "impulse": reals(h),
                "omega": reals(OMEGA), "H": cplx(H),
                "poles": cplx(sort_complex(np.roots(den))),
                "zeros": cplx(sort_complex(np.roots(num))),
                "gain": float(num[0]),
            })
    return out


# ----------------------------------------------------------------------------
# 5. zpk
# ----------------------------------------------------------------------------

def gen_zpk():
    out = []
    cases = [
        ("butter4", "scipy.signal.butter(4, 0.3, output='zpk')",
         sig.butter(4, 0.3, output="zpk")),
        ("cheby1_5", "scipy.signal.cheby1(5, 1, 0.2, output='zpk')",
         sig.cheby1(5, 1, 0.2, output="zpk")),
    ]
    for name, call, (z, p, k) in cases:
        num, den = sig.zpk2tf(z, p, k)
        u = np.zeros(N_IMPULSE_TF)
        u[0] = 1.0
        h = sig.lfilter(num, den, u)
        # cross-check with dimpulse of the zpk2ss realization
        A, B, C, D = sig.zpk2ss(z, p, k)
        _, (y,) = sig.dimpulse((A, B, C, D, 1), n=N_IMPULSE_TF)
        assert np.allclose(h, y[:, 0], rtol=1e-9, atol=1e-12)
        _, H = sig.freqz_zpk(z, p, k, worN=OMEGA)
        out.append({
            "name": name, "scipy_call": call,
            "zeros": cplx(sort_complex(z)), "poles": cplx(sort_complex(p)),
            "gain": float(k),
            "impulse": reals(h),
            "omega": reals(OMEGA), "H": cplx(H),
        })
    return out


# ----------------------------------------------------------------------------

def main():
    systems = gen_systems()
    acc, rows = gen_ss2tf_accuracy()
    acc_ring, rows_ring = gen_ss2tf_accuracy_ring()
    data = {
        "meta": {
            "generator": "testdata/golden/gen_golden.py",
            "command": "/usr/bin/python3 testdata/golden/gen_golden.py",
            "scipy_version": scipy.__version__,
            "numpy_version": np.__version__,
            "python_version": sys.version.split()[0],
            "conventions": (
                "discrete time; x[t+1]=Ax+Bu, y=Cx+Du; h[0]=D, "
                "h[t]=C A^(t-1) B; omega in rad/sample, z=exp(j omega); "
                "complex as [re, im]; matrices as lists of rows; SISO B, C "
                "stored as length-n lists; roots sorted by (re, im); "
                "null means a non-finite float"),
        },
        "systems": systems,
        "ss2tf_accuracy": acc,
        "ss2tf_accuracy_ring": acc_ring,
        "discretization": gen_discretization(),
        "tf": gen_tf(),
        "zpk": gen_zpk(),
    }
    with open(OUT, "w") as f:
        json.dump(data, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")

    print(f"scipy {scipy.__version__}, numpy {np.__version__}")
    print("scipy.signal.ss2tf impulse-response accuracy "
          f"(rel. L2 error over {N_IMPULSE_SYS} samples, rho = 0.9):")
    print(f"{'recipe':>6} {'n':>5} {'seed':>6} {'rel_err':>12}")
    for recipe, n, seed, err in rows + rows_ring:
        print(f"{recipe:>6} {n:>5} {seed:>6} {err:>12.3e}")
    print(f"wrote {os.path.relpath(OUT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
