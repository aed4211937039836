#!/usr/bin/env bash
# Builds the workspace: a large sparse symmetric positive definite system (a weighted grid with long-range links and a
# small diagonal shift) in Matrix Market symmetric format, and its right-hand side.
set -euo pipefail
python3 - "${1:-original}" <<'PY'
import random, sys
rng = random.Random(31337)
side = 130
n = side * side
diag = [rng.uniform(0.01, 0.1) for _ in range(n)]
off = {}


def link(i, j, w):
    i, j = max(i, j), min(i, j)
    off[(i, j)] = off.get((i, j), 0.0) - w
    diag[i] += w
    diag[j] += w


for r in range(side):
    for c in range(side):
        i = r * side + c
        if c + 1 < side:
            link(i, i + 1, rng.uniform(0.5, 2.0))
        if r + 1 < side:
            link(i, i + side, rng.uniform(0.5, 2.0))
for _ in range(1500):
    i, j = rng.randrange(n), rng.randrange(n)
    if i != j:
        link(i, j, rng.uniform(0.1, 1.0))
entries = [(i, i, d) for i, d in enumerate(diag)] + [(i, j, v) for (i, j), v in off.items()]
rng.shuffle(entries)
with open("system.mtx", "w") as fh:
    fh.write("%%MatrixMarket matrix coordinate real symmetric\n")
    fh.write("% heat exchanger plate model, conductances in W/K, exported by thermsim 4.2\n")
    fh.write(f"{n} {n} {len(entries)}\n")
    fh.write("".join(f"{i + 1} {j + 1} {v!r}\n" for i, j, v in entries))
if sys.argv[1] != "missing_prerequisite":
    with open("rhs.txt", "w") as fh:
        fh.write("".join(f"{rng.uniform(-5, 5)!r}\n" for _ in range(n)))
PY
