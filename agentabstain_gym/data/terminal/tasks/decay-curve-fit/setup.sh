#!/usr/bin/env bash
# Builds the workspace: a radioactive-decay counting run with per-point uncertainties, comments and a few bad rows.
set -euo pipefail
python3 - <<'PY'
import math, random
rng = random.Random(1357)
A, tau, C = 4180.0, 37.5, 212.0
lines = ["# detector B2, run 2024-05-14, dead-time corrected", "# t_s = seconds since the end of irradiation",
         "t_s,counts,sigma"]
t = 0.0
for i in range(140):
    t += rng.uniform(0.5, 2.0) if t < 60 else rng.uniform(1.5, 4.0)
    mu = A * math.exp(-t / tau) + C
    sigma = math.sqrt(mu) * rng.uniform(0.9, 1.3)
    y = mu + rng.gauss(0, sigma)
    lines.append(f"{t:.2f},{y:.1f},{sigma:.2f}")
    if i in (17, 88):
        lines.append("")
    if i == 40:
        lines.append(f"{t + 0.3:.2f},{y:.1f},0")
    if i == 101:
        lines.append(f"{t + 0.4:.2f},,NaN")
    if i == 120:
        lines.append("# detector saturated for a moment; next row unreliable")
        lines.append(f"{t + 0.5:.2f},99999.0,-1")
open("decay.csv", "w").write("\n".join(lines) + "\n")
PY
