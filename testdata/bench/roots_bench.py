"""Times numpy.roots (LAPACK's QR iteration on the companion matrix) on polynomials like those
of filters' BenchmarkPolesTF: monic, coefficients uniform in ±1/n. Run with /usr/bin/python3."""
import time
import numpy as np

rng = np.random.default_rng(7)
for n in (512, 1024, 4096):
    a = (2 * rng.random(n) - 1) / n
    t = time.perf_counter()
    r = np.roots(np.concatenate(([1.0], a)))
    print(f"n={n}: numpy.roots {time.perf_counter() - t:.3f} s, radius {np.abs(r).max():.6f}")
