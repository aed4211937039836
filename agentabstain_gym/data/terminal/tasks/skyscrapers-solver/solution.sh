#!/usr/bin/env bash
# Every row and column is one ordering of 1..n that fits its two clues and its givens: list those per line up front
# (an empty list means no solution), then place rows one by one while narrowing each column's list.
set -euo pipefail
cat PUZZLES.md
head -c 600 puzzles.json; echo
cat > solve_skyscrapers <<'PY'
#!/usr/bin/env python3
"""solve_skyscrapers PUZZLES.json: print a JSON list with each puzzle's grid, or null when it has no solution."""
import itertools
import json
import sys


def seen(line):
    count, top = 0, 0
    for h in line:
        if h > top:
            count, top = count + 1, h
    return count


def lines_for(n, first, last, fixed):
    """All orderings of 1..n fitting the clue from each end (0 = none) and the fixed cells {index: value}."""
    return [p for p in itertools.permutations(range(1, n + 1))
            if (not first or seen(p) == first) and (not last or seen(p[::-1]) == last)
            and all(p[i] == v for i, v in fixed.items())]


def solve(puzzle):
    n, clues = puzzle["n"], puzzle["clues"]
    givens = {(r, c): v for r, c, v in puzzle.get("givens", [])}
    rows = [lines_for(n, clues["left"][r], clues["right"][r], {c: v for (rr, c), v in givens.items() if rr == r})
            for r in range(n)]
    cols = [lines_for(n, clues["top"][c], clues["bottom"][c], {r: v for (r, cc), v in givens.items() if cc == c})
            for c in range(n)]
    if not all(rows) or not all(cols):
        return None

    def dfs(r, cols, grid):
        if r == n:
            return grid
        allowed = [{p[r] for p in col} for col in cols]
        for row in rows[r]:
            if all(row[c] in allowed[c] for c in range(n)):
                narrowed = [[p for p in cols[c] if p[r] == row[c]] for c in range(n)]
                found = dfs(r + 1, narrowed, grid + [list(row)])
                if found:
                    return found
        return None

    order = sorted(range(n), key=lambda r: len(rows[r]))  # most constrained rows first
    rows_sorted = [rows[r] for r in order]
    # search in the original row order but start from the tightest rows by relabelling
    rows, perm = rows_sorted, order
    cols = [[tuple(p[perm[i]] for i in range(n)) for p in col] for col in cols]
    grid = dfs(0, cols, [])
    if grid is None:
        return None
    out = [None] * n
    for i, r in enumerate(perm):
        out[r] = grid[i]
    return out


print(json.dumps([solve(p) for p in json.load(open(sys.argv[1]))]))
PY
chmod +x solve_skyscrapers
time ./solve_skyscrapers puzzles.json > solutions.json
python3 -c 'import json; [print(g if g is None else "\n".join(" ".join(map(str, r)) for r in g), end="\n\n") for g in json.load(open("solutions.json"))]'
