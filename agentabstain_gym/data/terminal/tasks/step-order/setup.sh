#!/usr/bin/env bash
# Builds the workspace: four files of ordering statements collected from runbooks (generated from a fixed seed: one
# fixes a single order, one has a cycle, one leaves two steps undecided, one is large).
set -euo pipefail
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
mkdir steps
python3 - <<'PY'
import random
VERBS = "build test migrate seed index warm render sign upload verify compile link package notify backup restore scan lint".split()
NOUNS = "api db cache docs assets schema users orders search images reports config keys logs queue billing".split()
def names(rng, n):
    out, seen = [], set()
    while len(out) < n:
        v, o, k = rng.choice(VERBS), rng.choice(NOUNS), rng.randrange(1, 10 * n)
        style = rng.random()
        name = f"{v}-{o}-{k}" if style < 0.5 else f"{v}_{o}.{k}" if style < 0.8 else f"{v} {o} {k}"
        if name not in seen:
            seen.add(name); out.append(name)
    return out
def instance(rng, n, extra, kind):
    order = names(rng, n)
    pairs = [(order[i], order[i + 1]) for i in range(n - 1)]
    gap = None
    if kind == "ambiguous":
        gap = rng.randrange(1, n - 2)
        pairs.pop(gap)
    for _ in range(extra):
        i, j = sorted(rng.sample(range(n), 2))
        if kind == "ambiguous" and (i, j) == (gap, gap + 1):
            continue
        pairs.append((order[i], order[j]))
    if kind == "cycle":
        i = rng.randrange(0, n // 3); j = rng.randrange(2 * n // 3, n)
        pairs.append((order[j], order[i]))
    pairs += rng.sample(pairs, len(pairs) // 20)  # repeated statements
    rng.shuffle(pairs)
    lines = []
    for a, b in pairs:
        sp = " " * rng.choice([1, 1, 1, 2])
        lines.append(f"{a}{sp}before{sp}{b}" if rng.random() < 0.5 else f"{b}{sp}after{sp}{a}")
        if rng.random() < 0.01:
            lines.append("# checked by the release team")
        if rng.random() < 0.01:
            lines.append("")
    return "\n".join(lines) + "\n", order
rng = random.Random(2025)
for name, kind, n, extra in [("release", "unique", 40, 30), ("migrations", "cycle", 300, 400),
                             ("plugins", "ambiguous", 2500, 6000), ("platform", "unique", 4000, 10000)]:
    open(f"steps/{name}.txt", "w").write(instance(rng, n, extra, kind)[0])
PY
