#!/usr/bin/env bash
# Breadth-first search over (cell, keys held) states, walls past ragged line ends, one-way tiles entered only along
# their arrow; then one answer line per maze.
set -euo pipefail
cat MAZES.md
head -30 mazes/01.txt mazes/03.txt
cat > solve_maze <<'PY'
#!/usr/bin/env python3
"""solve_maze FILE: print a shortest move string from @ to X, or `unreachable`.

Breadth-first search over (cell, keys held): the same cell with other keys is another state."""
import sys
from collections import deque

MOVES = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}
ONE_WAY = {"^": "U", "v": "D", "<": "L", ">": "R"}

rows = open(sys.argv[1]).read().split("\n")
grid = {(r, c): ch for r, line in enumerate(rows) for c, ch in enumerate(line.rstrip("\r"))}
start = next(p for p, ch in grid.items() if ch == "@")
first = (start, 0)
back = {first: None}
queue = deque([first])
goal = None
while queue:
    state = queue.popleft()
    (r, c), keys = state
    if grid[(r, c)] == "X":
        goal = state
        break
    for move, (dr, dc) in MOVES.items():
        nxt = (r + dr, c + dc)
        ch = grid.get(nxt, "#")
        if ch == "#" or (ch in ONE_WAY and ONE_WAY[ch] != move):
            continue
        if "A" <= ch <= "F" and not keys >> (ord(ch) - ord("A")) & 1:
            continue
        nkeys = keys | (1 << (ord(ch) - ord("a"))) if "a" <= ch <= "f" else keys
        s2 = (nxt, nkeys)
        if s2 not in back:
            back[s2] = (state, move)
            queue.append(s2)
if goal is None:
    print("unreachable")
else:
    path = []
    while back[goal] is not None:
        goal, move = back[goal]
        path.append(move)
    print("".join(reversed(path)))
PY
chmod +x solve_maze
for f in mazes/*.txt; do
  name=$(basename "$f" .txt)
  printf '%s %s\n' "$name" "$(timeout 20 ./solve_maze "$f")"
done > answers.txt
awk '{print $1, ($2 == "unreachable" ? $2 : length($2) " moves")}' answers.txt
