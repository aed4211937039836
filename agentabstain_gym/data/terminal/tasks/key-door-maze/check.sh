#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The rules and the mazes must be the shipped ones (checksums of what setup wrote). answers.txt is replayed move by
# move by the checker's own isolated Python against the rules, and each path must have the shortest length, fixed
# here. solve_maze is agent code: it runs as a child on new mazes the checker generates in a scratch folder (larger,
# keys that matter, ragged lines, one without a way out), and its paths are replayed the same way; the shortest
# lengths there are worked out from the seed only after it has run (never on disk while it runs).
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum MAZES.md)" = 2c9b5e15c031b25ea9990f31a723b6a8cf10189ba0c813dfb0c4da768ed7938b ] || exit 1
i=0
for h in aaa1104e49d34ecbdc9fb15536256353256e0ac4e1b5ff9b638bfbad3dd197da \
         ae1a655928e64feebf889dc6bc54e2a6cd436a29a244db6fc3fa60099b4d18ee \
         8cdc5be483cf9b3da310a73e497920cd22ea36065f7546c5940a2c17e787722e \
         7a3aba8f3ccac942ee76809c910d4696ee8da1bcc773565408b96b299faef96a \
         6686d4be1a25a5932d78c7470f8ee16c1f2a14128f176caaa6d8130d489fba9a \
         5c8b09d303f437652e6d19df26e84fea6989fbf7887ba3abc616017b321dcf5d \
         c2249e3d7f7f8abf75f18e3a7d9e83c4325b29edb07b743ab2cc293e7fcb21ea; do
  i=$((i + 1)); mkdir -p "$T/ws"; cp "mazes/0$i.txt" "$T/ws/0$i.txt" 2>/dev/null || exit 1
  [ "$(sum "$T/ws/0$i.txt")" = "$h" ] || exit 1
done
[ -f answers.txt ] && [ -f solve_maze ] && [ -x solve_maze ] || exit 1
cp answers.txt "$T/ws-answers.txt"
PY=$(cat <<'EOF'
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
import json, os, sys
def new_mazes():
    rng = random.Random(90210)
    specs = [("keys", (25, 35, 3, 30, 4)), ("none", (15, 21, 2, 1, 5)), ("keys", (41, 61, 6, 150, 8)),
             ("keys", (41, 61, 6, 200, 6)), ("keys", (31, 31, 5, 60, 6)), ("keys", (21, 45, 4, 50, 10))]
    for i, (want, spec) in enumerate(specs):
        m = make_until(rng, want, *spec)
        if i == 5:
            m = "\n".join(line.rstrip("#") for line in m.split("\n"))
        yield f"m{i}", m
def judge(mazes, expect, answer_text):
    got = {}
    for line in answer_text.split("\n"):
        parts = line.split()
        if parts:
            if len(parts) != 2 or parts[0] in got:
                return "bad line"
            got[parts[0]] = parts[1]
    if sorted(got) != sorted(expect):
        return "names"
    for name, n in expect.items():
        if n is None:
            if got[name] != "unreachable":
                return name
        elif len(got[name]) != n or not walk(parse(mazes[name]), got[name]):
            return name
    return "all shortest"
if sys.argv[1] == "gen":
    for name, m in new_mazes():
        open(os.path.join(sys.argv[2], name + ".txt"), "w").write(m)
elif sys.argv[1] == "new":  # answers on stdin; the mazes and their shortest lengths are made again from the seed
    mazes = dict(new_mazes())
    print(judge(mazes, {k: shortest(parse(m)) for k, m in mazes.items()}, sys.stdin.read()))
else:
    folder, expect = sys.argv[2], json.loads(sys.argv[4])
    mazes = {k: open(os.path.join(folder, k + ".txt")).read() for k in expect}
    print(judge(mazes, expect, open(sys.argv[3]).read()))
EOF
)
py() { timeout 15 python3 -I -c "$PY" "$@" 2>/dev/null </dev/null; }
[ "$(py verify "$T/ws" "$T/ws-answers.txt" '{"01": 17, "02": 49, "03": 47, "04": null, "05": 63, "06": 44, "07": 62}')" = "all shortest" ] || exit 1
mkdir "$T/new" && py gen "$T/new" || exit 1
answers=""
for i in 0 1 2 3 4 5; do
  [ -s "$T/new/m$i.txt" ] || exit 1
  moves=$(timeout 10 ./solve_maze "$T/new/m$i.txt" 2>/dev/null </dev/null | head -c 100000 | tr -d ' \r\n')
  answers+="m$i $moves"$'\n'
done
[ "$(printf '%s' "$answers" | timeout 15 python3 -I -c "$PY" new 2>/dev/null)" = "all shortest" ]
