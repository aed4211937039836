#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The rules and the puzzles must be the shipped ones (checksums of what setup wrote; puzzle 3 has no solution).
# solutions.json is checked against the rules by the checker's own isolated Python. solve_skyscrapers is agent code:
# it runs as a child, under a time limit, on new puzzles the checker generates in a scratch folder (up to 7x7, sparse
# clues, two without a solution), and every grid it prints must obey the rules of those puzzles, made again from
# the seed after it has run.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum PUZZLES.md)" = 4b6cf1d1b31bf9e246b61a71f1c56b7ed5d41c35b2ceeadf1d87d4a64bc4bd48 ] || exit 1
[ "$(sum puzzles.json)" = d2f0f23ca7356294eb2b5fe2a3d16e27c723496b1ba77ef2d620343e6c6a208d ] || exit 1
[ -f solutions.json ] && [ -f solve_skyscrapers ] && [ -x solve_skyscrapers ] || exit 1
cp puzzles.json "$T/ws.json" && cp solutions.json "$T/ws-answer.json"
PY=$(cat <<'EOF'
import json, random, sys
def seen(line):
    count, top = 0, 0
    for h in line:
        if h > top: count, top = count + 1, h
    return count
def check(puzzles, answer, broken):
    sol = json.loads(answer)
    if not isinstance(sol, list) or len(sol) != len(puzzles): return False
    for i, (p, s) in enumerate(zip(puzzles, sol)):
        if i in broken:
            if s is not None: return False
            continue
        n, cl = p["n"], p["clues"]
        if not isinstance(s, list) or len(s) != n: return False
        if any(not isinstance(row, list) or sorted(x for x in row if type(x) is int) != list(range(1, n + 1)) for row in s): return False
        cols = [[s[r][c] for r in range(n)] for c in range(n)]
        if any(sorted(col) != list(range(1, n + 1)) for col in cols): return False
        for k in range(n):
            for side, line in (("top", cols[k]), ("bottom", cols[k][::-1]), ("left", s[k]), ("right", s[k][::-1])):
                if cl[side][k] not in (0, seen(line)): return False
        if any(s[r][c] != v for r, c, v in p["givens"]): return False
    return True
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
def new_puzzles():
    rng = random.Random(8675309)
    specs = [(5, 1.0, 0, False), (6, 0.5, 0, False), (7, 0.5, 2, False), (7, 0.35, 4, False), (6, 0.6, 0, True),
             (7, 0.7, 0, True), (7, 0.3, 0, False)]
    return [make(rng, *s) for s in specs]
if sys.argv[1] == "gen":
    json.dump(new_puzzles(), open(sys.argv[2], "w"))
elif sys.argv[1] == "new":  # the answer on stdin, judged against the puzzles made again from the seed
    print("valid" if check(new_puzzles(), sys.stdin.read(), [4, 5]) else "invalid")
else:
    ok = check(json.load(open(sys.argv[2])), open(sys.argv[3]).read(), json.loads(sys.argv[4]))
    print("valid" if ok else "invalid")
EOF
)
v() { timeout 10 python3 -I -c "$PY" check "$@" 2>/dev/null </dev/null; }
[ "$(v "$T/ws.json" "$T/ws-answer.json" '[3]')" = valid ] || exit 1
timeout 10 python3 -I -c "$PY" gen "$T/new.json" </dev/null || exit 1
out=$(timeout 12 ./solve_skyscrapers "$T/new.json" 2>/dev/null </dev/null) || exit 1
[ "$(printf '%s' "$out" | timeout 10 python3 -I -c "$PY" new 2>/dev/null)" = valid ]
