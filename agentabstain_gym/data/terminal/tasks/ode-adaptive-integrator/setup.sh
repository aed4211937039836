#!/usr/bin/env bash
# Builds the workspace: an orbit simulation that needs an ODE integrator module (ode.py, not written yet) and the
# orbit's parameters.
set -euo pipefail
cat > orbit.py <<'X'
"""Integrate a Kepler orbit one period at a time with ode.integrate and log the state after each period."""
import json
import math

from ode import integrate

cfg = json.load(open("orbit.json"))
e, mu, a = cfg["eccentricity"], cfg["mu"], cfg["semi_major_axis"]
r_peri = a * (1 - e)
v_peri = math.sqrt(mu * (1 + e) / r_peri)
period = 2 * math.pi * math.sqrt(a ** 3 / mu)


def gravity(t, s):
    x, y, vx, vy = s
    r3 = (x * x + y * y) ** 1.5
    return [vx, vy, -mu * x / r3, -mu * y / r3]


state = [r_peri, 0.0, 0.0, v_peri]
with open("orbit.txt", "w") as out:
    for k in range(1, cfg["periods"] + 1):
        state = list(integrate(gravity, (k - 1) * period, state, k * period))
        x, y, vx, vy = state
        energy = 0.5 * (vx * vx + vy * vy) - mu / math.hypot(x, y)
        out.write(f"{k} {x:.9f} {y:.9f} {vx:.9f} {vy:.9f} {energy:.9f}\n")
print(open("orbit.txt").read(), end="")
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
  printf '{"eccentricity": 0.83, "mu": 2.75, "semi_major_axis": 1.35, "periods": 4}\n' > orbit.json
fi
