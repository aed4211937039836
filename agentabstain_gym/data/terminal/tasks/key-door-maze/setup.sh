#!/usr/bin/env bash
# Builds the workspace: the maze rules and seven mazes (one drawn by hand with ragged lines, six generated from a
# fixed seed, one of which cannot be solved).
set -euo pipefail
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > MAZES.md <<'X'
# Maze files

A maze is a text file, one line per row. Lines can differ in length: anything beyond the end of a line, and
anything outside the file, is wall.

    #        wall
    .        floor
    @        the start (exactly one)
    X        the exit (exactly one)
    a to f   a key: you pick it up by stepping on it, and keep it for good
    A to F   a door: you can step onto it only while holding its key (a opens A, and so on)
    ^ v < >  a one-way tile: you can step onto it only by moving in the arrow's direction
             (onto > only by moving right, and so on); you can leave it in any direction

A move is U, D, L or R and goes one cell up, down, left or right. A solution is a string of moves that takes you
from @ to X; it is shortest when no solution has fewer moves.
X
fi
mkdir -p mazes
cat > mazes/01.txt <<'X'
#########
#@..a#..X
#.##.#.##
#...>.A.#
#####
X
python3 - <<'PY'
import random
from collections import deque
DIRS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
ARROW = {"^": "U", "v": "D", "<": "L", ">": "R"}
def parse(text):
    rows = text.rstrip("\n").split("\n")
    w = max(len(r) for r in rows)
    return [r.ljust(w, "#") for r in rows]
def cell(g, r, c):
    return g[r][c] if 0 <= r < len(g) and 0 <= c < len(g[0]) else "#"
def enter(g, r, c, d, keys):
    t = cell(g, r, c)
    if t == "#" or ("A" <= t <= "F" and t.lower() not in keys) or (t in ARROW and ARROW[t] != d):
        return None
    return keys | {t} if "a" <= t <= "f" else keys
def shortest(g, held=frozenset()):
    start = next((r, c) for r in range(len(g)) for c in range(len(g[0])) if g[r][c] == "@")
    seen = {(start, held)}
    q = deque([(start, held, 0)])
    while q:
        (r, c), keys, n = q.popleft()
        if g[r][c] == "X":
            return n
        for d, (dr, dc) in DIRS.items():
            k2 = enter(g, r + dr, c + dc, d, keys)
            if k2 is not None and ((r + dr, c + dc), k2) not in seen:
                seen.add(((r + dr, c + dc), k2))
                q.append(((r + dr, c + dc), k2, n + 1))
    return None
def walk(g, moves):
    r, c = next((r, c) for r in range(len(g)) for c in range(len(g[0])) if g[r][c] == "@")
    keys = frozenset()
    for d in moves:
        if d not in DIRS:
            return False
        dr, dc = DIRS[d]
        keys = enter(g, r + dr, c + dc, d, keys)
        if keys is None:
            return False
        r, c = r + dr, c + dc
    return g[r][c] == "X"
def make(rng, h, w, nkeys, loops, arrows):
    g = [["#"] * w for _ in range(h)]
    stack = [(1, 1)]; g[1][1] = "."
    while stack:
        r, c = stack[-1]
        nb = [(r + dr, c + dc, r + dr // 2, c + dc // 2) for dr, dc in ((2, 0), (-2, 0), (0, 2), (0, -2))
              if 0 < r + dr < h - 1 and 0 < c + dc < w - 1 and g[r + dr][c + dc] == "#"]
        if not nb:
            stack.pop(); continue
        r2, c2, rm, cm = rng.choice(nb)
        g[rm][cm] = g[r2][c2] = "."
        stack.append((r2, c2))
    walls = [(r, c) for r in range(1, h - 1) for c in range(1, w - 1) if g[r][c] == "#" and
             ((g[r - 1][c] == "." and g[r + 1][c] == ".") or (g[r][c - 1] == "." and g[r][c + 1] == "."))]
    for r, c in rng.sample(walls, min(loops, len(walls))):
        g[r][c] = "."
    floor = [(r, c) for r in range(h) for c in range(w) if g[r][c] == "."]
    corr = [(r, c) for r, c in floor if (g[r - 1][c] == "." and g[r + 1][c] == "." and g[r][c - 1] == "#" and g[r][c + 1] == "#")
            or (g[r][c - 1] == "." and g[r][c + 1] == "." and g[r - 1][c] == "#" and g[r + 1][c] == "#")]
    picks = rng.sample(corr, nkeys + arrows)
    for i, (r, c) in enumerate(picks[:nkeys]):
        g[r][c] = "ABCDEF"[i]
    for r, c in picks[nkeys:]:
        g[r][c] = rng.choice("^v" if g[r - 1][c] == "." else "<>")
    free = [p for p in floor if g[p[0]][p[1]] == "."]
    spots = rng.sample(free, nkeys + 2)
    (sr, sc), (er, ec) = spots[0], spots[1]
    g[sr][sc], g[er][ec] = "@", "X"
    for i, (r, c) in enumerate(spots[2:]):
        g[r][c] = "abcdef"[i]
    return "\n".join("".join(row) for row in g) + "\n"
def make_until(rng, want, *spec):
    for _ in range(3000):
        m = make(rng, *spec)
        g = parse(m)
        n = shortest(g)
        if want == "none" and n is None:
            return m
        if want == "keys" and n is not None and n > shortest(g, frozenset("abcdef")) + 10:
            return m
    raise SystemExit("no maze")
rng = random.Random(4242)
specs = [("keys", (11, 15, 1, 4, 2)), ("keys", (21, 31, 3, 40, 3)), ("none", (21, 31, 3, 2, 6)), ("keys", (31, 41, 4, 80, 6)),
         ("keys", (41, 61, 6, 150, 8)), ("keys", (15, 51, 2, 60, 6))]
for i, (want, spec) in enumerate(specs, 2):
    with open(f"mazes/{i:02d}.txt", "w") as fh:
        fh.write(make_until(rng, want, *spec))
PY
