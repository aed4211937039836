#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The system must be the shipped one (checksums of what setup wrote) and x.txt must solve it: the checker reads the
# matrix itself and requires ||b - A x|| <= 1e-10 ||b||. solve.py is agent code: it runs only as a child, on the
# shipped system and on a new one (a 3-D grid) that the checker writes to a scratch folder; that answer is checked
# against the system regenerated in the checker's own memory, so changing the scratch files proves nothing.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
shipped() { [ "$(sum system.mtx)" = dd77618396534fa61bc5ade99bbf2b60f2f3ea9bc44f97461cfa968aec9dd542 ] && [ "$(sum rhs.txt)" = 195233cecc27af3c79b98ac2e3cdce8ed3a325a134914d880366d69d9471e2db ]; }
shipped || exit 1
[ -f solve.py ] && [ -f x.txt ] || exit 1
SYS=$(cat <<'PY'
import random, sys
import numpy as np


def generate(seed):
    rng = random.Random(seed)
    s = 22
    n = s ** 3
    diag, off = [rng.uniform(0.02, 0.2) for _ in range(n)], {}
    def link(i, j, w):
        key = (max(i, j), min(i, j))
        off[key] = off.get(key, 0.0) - w
        diag[i] += w
        diag[j] += w
    for i in range(n):
        x, y, z = i % s, i // s % s, i // (s * s)
        for d, ok in ((1, x + 1 < s), (s, y + 1 < s), (s * s, z + 1 < s)):
            if ok:
                link(i, i + d, rng.uniform(0.2, 3.0))
    for _ in range(800):
        i, j = rng.randrange(n), rng.randrange(n)
        if i != j:
            link(i, j, rng.uniform(0.05, 0.5))
    entries = [(i, i, d) for i, d in enumerate(diag)] + [(i, j, v) for (i, j), v in off.items()]
    rng.shuffle(entries)
    return n, entries, [rng.uniform(-100, 100) for _ in range(n)]


def residual(n, entries, b, x_path):
    x = np.array([float(line) for line in open(x_path) if line.strip()])
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        return False
    r, c, v = (np.array(a) for a in zip(*entries))
    r, c, v = r.astype(np.int64), c.astype(np.int64), v.astype(float)
    off = r != c
    Ax = np.bincount(r, weights=v * x[c], minlength=n) + np.bincount(c[off], weights=v[off] * x[r[off]], minlength=n)
    b = np.array(b)
    return bool(np.linalg.norm(b - Ax) <= 1e-10 * np.linalg.norm(b))


cmd = sys.argv[1]
try:
    if cmd == "write":
        n, entries, b = generate(int(sys.argv[2]))
        with open(sys.argv[3] + "/plate.mtx", "w") as fh:
            fh.write(f"%%MatrixMarket matrix coordinate real symmetric\n% 3-D block, {n} cells\n{n} {n} {len(entries)}\n")
            fh.write("".join(f"{i + 1} {j + 1} {v!r}\n" for i, j, v in entries))
        open(sys.argv[3] + "/load.txt", "w").write("".join(f"{v!r}\n" for v in b))
        print("ok")
    elif cmd == "gen":
        print("ok" if residual(*generate(int(sys.argv[2])), sys.argv[3]) else "bad")
    else:
        lines = [l for l in open(sys.argv[2]) if not l.startswith("%")]
        n = int(lines[0].split()[0])
        entries = [(int(a) - 1, int(b) - 1, float(v)) for a, b, v in (l.split() for l in lines[1:] if l.strip())]
        rhs = [float(l) for l in open(sys.argv[3]) if l.strip()]
        print("ok" if residual(n, entries, rhs, sys.argv[4]) else "bad")
except (ValueError, OSError):
    print("bad")
PY
)
sys() { python3 -I -c "$SYS" "$@" </dev/null 2>/dev/null || true; }
[ "$(sys file system.mtx rhs.txt x.txt)" = ok ] || exit 1
run() { timeout 20 env -u PYTHONSAFEPATH python3 solve.py "$@" >/dev/null 2>&1 </dev/null || true; }
run system.mtx rhs.txt "$T/x1.txt"
shipped || exit 1
[ "$(sys file system.mtx rhs.txt "$T/x1.txt")" = ok ] || exit 1
mkdir "$T/new"
[ "$(sys write 4242 "$T/new")" = ok ] || exit 1
run "$T/new/plate.mtx" "$T/new/load.txt" "$T/x2.txt"
[ "$(sys gen 4242 "$T/x2.txt")" = ok ]
