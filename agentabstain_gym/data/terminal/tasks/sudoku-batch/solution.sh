#!/usr/bin/env bash
# Constraint propagation by bitmasks and most-constrained-cell-first search: fast on puzzles built to defeat plain
# backtracking, and a full search proves "no solution"; malformed lines and givens that already clash (row, column
# or box) are "invalid".
set -euo pipefail
head -5 puzzles.txt
cat > sudoku <<'PY'
#!/usr/bin/env python3
"""sudoku FILE: one line per puzzle line: the solved 81 digits, `invalid` or `no solution`."""
import sys

PEERS = []
for i in range(81):
    r, c = divmod(i, 9)
    b = (r // 3) * 3 * 9 + (c // 3) * 3
    PEERS.append(sorted({r * 9 + k for k in range(9)} | {k * 9 + c for k in range(9)}
                        | {b + dr * 9 + dc for dr in range(3) for dc in range(3)} - {i}))
ALL = 0x3FE  # bits 1..9


def solve(cells):
    grid = list(cells)
    rows, cols, boxes = [0] * 9, [0] * 9, [0] * 9
    empty = []
    for i, v in enumerate(grid):
        r, c = divmod(i, 9)
        b = (r // 3) * 3 + c // 3
        if v:
            bit = 1 << v
            if (rows[r] | cols[c] | boxes[b]) & bit:
                return "invalid"
            rows[r] |= bit; cols[c] |= bit; boxes[b] |= bit
        else:
            empty.append((i, r, c, b))

    def search():
        if not empty:
            return True
        best, best_free, best_n = None, 0, 10
        for k, (i, r, c, b) in enumerate(empty):
            free = ALL & ~(rows[r] | cols[c] | boxes[b])
            n = bin(free).count("1")
            if n < best_n:
                best, best_free, best_n = k, free, n
                if n <= 1:
                    break
        if best_n == 0:
            return False
        i, r, c, b = empty.pop(best)
        while best_free:
            bit = best_free & -best_free
            best_free ^= bit
            rows[r] |= bit; cols[c] |= bit; boxes[b] |= bit
            grid[i] = bit.bit_length() - 1
            if search():
                return True
            rows[r] ^= bit; cols[c] ^= bit; boxes[b] ^= bit
        grid[i] = 0
        empty.insert(best, (i, r, c, b))
        return False

    return "".join(map(str, grid)) if search() else "no solution"


for line in open(sys.argv[1]).read().split("\n"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    if len(line) != 81 or any(ch not in "123456789.0" for ch in line):
        print("invalid")
        continue
    print(solve([0 if ch in ".0" else int(ch) for ch in line]))
PY
chmod +x sudoku
time ./sudoku puzzles.txt > solutions.txt
cat solutions.txt
