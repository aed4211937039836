#!/usr/bin/env bash
# Builds the workspace: the puzzle rules and format, and puzzles.json (generated from a fixed seed: one has no
# solution).
set -euo pipefail
cat > PUZZLES.md <<'X'
# Skyscraper puzzles

An n x n grid (n from 4 to 7) gets a building in every cell, with heights 1 to n; every row and every column holds
each height exactly once. A clue outside the grid tells how many buildings you see looking from that edge along its
row or column: a building is seen when it is taller than every building in front of it.

A puzzle file is a JSON list of puzzles, each like

    {"n": 5,
     "clues": {"top": [...], "bottom": [...], "left": [...], "right": [...]},
     "givens": [[row, col, height], ...]}

top[c] looks down column c from above and bottom[c] looks up it from below; left[r] and right[r] look along row r
from the left and from the right. 0 means there is no clue there. Rows and columns count from 0, and givens are
cells whose height is already fixed. A puzzle can have several solutions (any one will do) or none at all.
X
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
python3 - <<'PY'
import json, random
def seen(line):
    count, top = 0, 0
    for h in line:
        if h > top: count, top = count + 1, h
    return count
def make(rng, n, keep, ngivens, broken=False):
    base = [[(r + c) % n + 1 for c in range(n)] for r in range(n)]
    rng.shuffle(base)
    cols = list(range(n)); rng.shuffle(cols)
    sym = list(range(1, n + 1)); rng.shuffle(sym)
    g = [[sym[row[c] - 1] for c in cols] for row in base]
    colv = [[g[r][c] for r in range(n)] for c in range(n)]
    clues = {"top": [seen(x) for x in colv], "bottom": [seen(x[::-1]) for x in colv],
             "left": [seen(x) for x in g], "right": [seen(x[::-1]) for x in g]}
    for side in clues:
        clues[side] = [v if rng.random() < keep else 0 for v in clues[side]]
    cells = rng.sample([(r, c) for r in range(n) for c in range(n)], ngivens)
    givens = [[r, c, g[r][c]] for r, c in sorted(cells)]
    if broken:
        c = rng.randrange(n)
        clues["top"][c], clues["bottom"][c] = n, 2
    return {"n": n, "clues": clues, "givens": givens}
rng = random.Random(31)
specs = [(4, 1.0, 0, False), (5, 0.7, 0, False), (6, 0.6, 1, False), (6, 0.5, 0, True), (7, 0.6, 2, False),
         (7, 0.45, 3, False)]
with open("puzzles.json", "w") as fh:
    json.dump([make(rng, *s) for s in specs], fh)
    fh.write("\n")
PY
