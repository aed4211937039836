#!/usr/bin/env bash
# A bracketing root finder (bisection: always converges, 40-odd calls to 1e-12), then the Colebrook equation per
# pipe in SI units (mm -> m, L/s -> m3/s), laminar pipes by 64/Re, and the Darcy-Weisbach pressure drop.
set -euo pipefail
head -n 5 pipes.csv
cat fluid.json
cat > roots.py <<'PY'
"""Bracketing root finder and Colebrook friction factors for a pipe survey."""
import csv
import json
import math
import sys


def find_root(f, a, b, xtol=1e-12):
    """A root of f in [a, b] within xtol; f(a) and f(b) must not have the same sign."""
    fa, fb = f(a), f(b)
    if fa == 0:
        return a
    if fb == 0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError("f(a) and f(b) have the same sign")
    while b - a > xtol:
        m = a + (b - a) / 2
        if m <= a or m >= b:
            break
        fm = f(m)
        if fm == 0:
            return m
        if (fm > 0) == (fa > 0):
            a, fa = m, fm
        else:
            b = m
    return a + (b - a) / 2


def friction(re, rel_rough):
    if re < 2300:
        return 64 / re
    return find_root(lambda f: 1 / math.sqrt(f) + 2 * math.log10(rel_rough / 3.7 + 2.51 / (re * math.sqrt(f))),
                     1e-4, 1.0, 1e-14)


def main(pipes_path, fluid_path):
    fluid = json.load(open(fluid_path))
    rho, mu = fluid["density_kg_m3"], fluid["viscosity_pa_s"]
    print("pipe_id,reynolds,friction,dp_pa")
    with open(pipes_path, newline="") as fh:
        for row in csv.DictReader(fh):
            d = float(row["diameter_mm"]) / 1000
            eps = float(row["roughness_mm"]) / 1000
            v = float(row["flow_lps"]) / 1000 / (math.pi * d * d / 4)
            re = rho * v * d / mu
            f = friction(re, eps / d)
            dp = f * float(row["length_m"]) / d * rho * v * v / 2
            print(f"{row['pipe_id']},{re:.12g},{f:.12g},{dp:.12g}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
PY
python3 -c 'from roots import find_root; import math; print(find_root(lambda x: math.cos(x) - x, 0, 1))'
python3 roots.py pipes.csv fluid.json > friction.csv
head -n 8 friction.csv
