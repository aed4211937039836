#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The data must be the shipped file (checksum of what setup wrote). The checker fits it itself (its own weighted
# least squares in plain Python: a tau scan, golden-section search, Gauss-Newton polish, errors from (J^T W J)^-1),
# and likewise two data sets it writes in a scratch folder (one a rising curve, A < 0); fit.py is agent code and
# runs only as a child whose numbers are compared with the checker's: parameters and chi2 within 1e-6 (relative),
# standard errors within 1e-4, degrees of freedom exact.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum decay.csv)" = 01eccac2ff423d095b49539d8948dee539b7752a30e7df806c68743e81531330 ] || exit 1
[ -f fit.py ] && [ -f fit.txt ] || exit 1
REF=$(cat <<'PY'
import json, math, sys
pts = []
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if line.startswith("#") or len(f) != 3:
        continue
    try:
        t, y, s = map(float, f)
    except ValueError:
        continue
    if math.isfinite(t) and math.isfinite(y) and math.isfinite(s) and s > 0:
        pts.append((t, y, 1 / (s * s)))


def lin(tau):
    S = lambda g: math.fsum(w * g(t, y) for t, y, w in pts)
    see, se1, s11 = S(lambda t, y: math.exp(-2 * t / tau)), S(lambda t, y: math.exp(-t / tau)), S(lambda t, y: 1.0)
    sey, s1y = S(lambda t, y: y * math.exp(-t / tau)), S(lambda t, y: y)
    det = see * s11 - se1 * se1
    A, C = (sey * s11 - se1 * s1y) / det, (see * s1y - se1 * sey) / det
    return math.fsum(w * (A * math.exp(-t / tau) + C - y) ** 2 for t, y, w in pts), A, C


ts = [p[0] for p in pts]
span = max(ts) - min(ts)
grid = [span / 1000 * 10 ** (6 * k / 799) for k in range(800)]
k = min(range(800), key=lambda k: lin(grid[k])[0])
lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, 799)]
g = (math.sqrt(5) - 1) / 2
for _ in range(120):
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    lo, hi = (lo, b) if lin(a)[0] < lin(b)[0] else (a, hi)
tau = (lo + hi) / 2
_, A, C = lin(tau)


def normal(A, tau, C):
    M, v = [[0.0] * 3 for _ in range(3)], [0.0] * 3
    for t, y, w in pts:
        e = math.exp(-t / tau)
        j = (e, A * t / tau ** 2 * e, 1.0)
        r = A * e + C - y
        for a in range(3):
            v[a] += w * j[a] * r
            for b in range(3):
                M[a][b] += w * j[a] * j[b]
    return M, v


def inv(M):
    a, b, c = M
    det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])
    cof = [[(M[(j + 1) % 3][(i + 1) % 3] * M[(j + 2) % 3][(i + 2) % 3] - M[(j + 1) % 3][(i + 2) % 3] * M[(j + 2) % 3][(i + 1) % 3])
            for j in range(3)] for i in range(3)]
    return [[cof[i][j] / det for j in range(3)] for i in range(3)]


p = [A, tau, C]
for _ in range(30):
    M, v = normal(*p)
    Mi = inv(M)
    p = [p[i] - sum(Mi[i][j] * v[j] for j in range(3)) for i in range(3)]
Mi = inv(normal(*p)[0])
chi2 = math.fsum(w * (p[0] * math.exp(-t / p[1]) + p[2] - y) ** 2 for t, y, w in pts)
print(json.dumps({"p": p, "err": [math.sqrt(Mi[i][i]) for i in range(3)], "chi2": chi2, "dof": len(pts) - 3}))
PY
)
CMP=$(cat <<'PY'
import json, os
exp = json.loads(os.environ["EXP"])
rows = [line.split() for line in os.environ["GOT"].splitlines() if line.strip()]
try:
    ok = [r[0] for r in rows] == ["A", "tau", "C", "chi2"] and all(len(r) == 3 for r in rows)
    for r, v, e in zip(rows, exp["p"], exp["err"]):
        ok = ok and abs(float(r[1]) - v) <= 1e-6 * (abs(v) + e) and abs(float(r[2]) - e) <= 1e-4 * e
    ok = ok and abs(float(rows[3][1]) - exp["chi2"]) <= 1e-6 * exp["chi2"] and int(rows[3][2]) == exp["dof"]
except (ValueError, IndexError):
    ok = False
print("ok" if ok else "mismatch")
PY
)
same() { [ "$(EXP="$1" GOT="$2" python3 -I -c "$CMP" </dev/null 2>/dev/null)" = ok ]; }
run() { timeout 15 env -u PYTHONSAFEPATH python3 fit.py "$@" 2>/dev/null </dev/null | head -c 10000 || true; }
expected=$(python3 -I -c "$REF" decay.csv </dev/null) || exit 1
same "$expected" "$(head -c 10000 fit.txt)" || exit 1
same "$expected" "$(run decay.csv)" || exit 1
python3 -I -c '
import math, random, sys
rng = random.Random(97)
for name, A, tau, C, n, dt in (("a", 950.0, 6.2, 48.5, 90, 0.35), ("b", -730.0, 140.0, 1025.0, 120, 2.5)):
    lines, t = ["# generated", "t_s,counts,sigma"], 0.0
    for i in range(n):
        t += rng.uniform(0.3, 1.7) * dt
        mu = A * math.exp(-t / tau) + C
        s = math.sqrt(abs(mu)) * rng.uniform(0.8, 1.5)
        lines.append(f"{t:.3f},{mu + rng.gauss(0, s):.2f},{s:.3f}")
        if i % 29 == 5:
            lines.append(rng.choice([f"{t:.3f},{mu:.2f},0", f"{t:.3f},nan,1.0", f"{t:.3f},{mu:.2f},-2", "", "# gap"]))
    open(f"{sys.argv[1]}/{name}.csv", "w").write("\n".join(lines) + "\n")
' "$T" </dev/null || exit 1
for f in a b; do
  expected=$(python3 -I -c "$REF" "$T/$f.csv" </dev/null) || exit 1
  same "$expected" "$(run "$T/$f.csv")" || exit 1
done
