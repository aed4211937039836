#!/usr/bin/env bash
# Weighted least squares for y = A exp(-t/tau) + C: for a fixed tau, A and C solve a linear weighted problem, so scan
# tau on a log grid, refine the best bracket by golden-section search, polish all three with Gauss-Newton, and take
# the standard errors from the inverse of J^T W J at the optimum.
set -euo pipefail
head -n 6 decay.csv
grep -vc '^#' decay.csv
cat > fit.py <<'PY'
"""Weighted least-squares fit of y = A*exp(-t/tau) + C; prints parameters, standard errors and chi-square."""
import math
import sys

import numpy as np


def load(path):
    t, y, s = [], [], []
    for line in open(path):
        parts = line.strip().split(",")
        if line.startswith("#") or len(parts) != 3:
            continue
        try:
            ti, yi, si = (float(p) for p in parts)
        except ValueError:
            continue
        if all(map(math.isfinite, (ti, yi, si))) and si > 0:
            t.append(ti), y.append(yi), s.append(si)
    return np.array(t), np.array(y), np.array(s)


def linear(tau, t, y, w):
    X = np.column_stack([np.exp(-t / tau), np.ones_like(t)]) * w[:, None]
    coef, *_ = np.linalg.lstsq(X, y * w, rcond=None)
    r = X @ coef - y * w
    return float(r @ r), coef


def main(path):
    t, y, s = load(path)
    w = 1 / s
    span = t.max() - t.min()
    grid = np.geomspace(span / 1000, span * 1000, 2000)
    costs = [linear(tau, t, y, w)[0] for tau in grid]
    i = int(np.argmin(costs))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if linear(a, t, y, w)[0] < linear(b, t, y, w)[0]:
            hi = b
        else:
            lo = a
    tau = (lo + hi) / 2
    (A, C) = linear(tau, t, y, w)[1]
    p = np.array([A, tau, C])
    for _ in range(20):  # Gauss-Newton polish
        e = np.exp(-t / p[1])
        r = (p[0] * e + p[2] - y) * w
        J = np.column_stack([e, p[0] * t / p[1] ** 2 * e, np.ones_like(t)]) * w[:, None]
        p = p - np.linalg.solve(J.T @ J, J.T @ r)
    e = np.exp(-t / p[1])
    J = np.column_stack([e, p[0] * t / p[1] ** 2 * e, np.ones_like(t)]) * w[:, None]
    err = np.sqrt(np.diag(np.linalg.inv(J.T @ J)))
    chi2 = float(np.sum(((p[0] * e + p[2] - y) * w) ** 2))
    for name, v, dv in zip(("A", "tau", "C"), p, err):
        print(f"{name} {v:.10g} {dv:.10g}")
    print(f"chi2 {chi2:.10g} {len(t) - 3}")


if __name__ == "__main__":
    main(sys.argv[1])
PY
python3 fit.py decay.csv > fit.txt
cat fit.txt
