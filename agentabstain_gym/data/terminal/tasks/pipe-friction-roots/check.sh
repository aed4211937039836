#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The survey and the fluid must be the shipped ones (checksums of what setup wrote). The checker solves Colebrook
# itself (its own bisection, written here) for the shipped survey and for a survey and fluid it writes in a scratch
# folder; roots.py is agent code and runs only as a child: its CSV is compared with those values (relative 1e-9),
# and a driver child imports its find_root and runs it on functions this checker picks (roots checked within xtol,
# at most 100 calls of f each, ValueError without a sign change).
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum pipes.csv)" = 6091eccb2991bb7c5add13765fe99c7128d775ded88f74d2d5e2f6afc159d589 ] || exit 1
[ "$(sum fluid.json)" = 7b766ebbfba43668ed353072cfa186f10fd49631e2665de0060d953f66e5b1a4 ] || exit 1
[ -f roots.py ] && [ -f friction.csv ] || exit 1
REF=$(cat <<'PY'
import csv, json, math, sys
fluid = json.load(open(sys.argv[2]))
rho, mu = fluid["density_kg_m3"], fluid["viscosity_pa_s"]
out = []
for r in csv.DictReader(open(sys.argv[1], newline="")):
    d, eps, L = float(r["diameter_mm"]) / 1e3, float(r["roughness_mm"]) / 1e3, float(r["length_m"])
    v = float(r["flow_lps"]) / 1e3 / (math.pi * d * d / 4)
    re = rho * v * d / mu
    if re < 2300:
        f = 64 / re
    else:
        lo, hi = 1e-5, 1.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if 1 / math.sqrt(mid) + 2 * math.log10(eps / d / 3.7 + 2.51 / (re * math.sqrt(mid))) > 0:
                lo = mid
            else:
                hi = mid
        f = (lo + hi) / 2
    out.append([r["pipe_id"], re, f, f * L / d * rho * v * v / 2])
print(json.dumps(out))
PY
)
CMP=$(cat <<'PY'
import csv, io, json, os
exp = json.loads(os.environ["EXP"])
rows = [r for r in csv.reader(io.StringIO(os.environ["GOT"])) if r]
try:
    ok = [c.strip() for c in rows[0]] == ["pipe_id", "reynolds", "friction", "dp_pa"] and len(rows) == len(exp) + 1
    for row, want in zip(rows[1:], exp):
        ok = ok and len(row) == 4 and row[0].strip() == want[0]
        ok = ok and all(abs(float(g) - w) <= 1e-9 * abs(w) for g, w in zip(row[1:], want[1:]))
except (ValueError, IndexError):
    ok = False
print("ok" if ok else "mismatch")
PY
)
same() { [ "$(EXP="$1" GOT="$2" python3 -I -c "$CMP" </dev/null 2>/dev/null)" = ok ]; }
run() { timeout 20 env -u PYTHONSAFEPATH python3 roots.py "$@" 2>/dev/null </dev/null | head -c 200000 || true; }
expected=$(python3 -I -c "$REF" pipes.csv fluid.json </dev/null) || exit 1
same "$expected" "$(cat friction.csv)" || exit 1
same "$expected" "$(run pipes.csv fluid.json)" || exit 1
python3 -I -c '
import json, random, sys
rng = random.Random(404)
rows = ["pipe_id,diameter_mm,roughness_mm,length_m,flow_lps"]
for k in range(60):
    d = rng.choice([12, 20, 35, 65, 125, 250, 400, 800])
    flow = d * d / 1000 * (rng.uniform(0.0005, 0.004) if k % 5 == 0 else rng.uniform(0.03, 2.0))
    rows.append(f"W-{k:03d},{d},{rng.choice([0.001, 0.03, 0.2, 0.5, 2.0, 3.5])},{rng.uniform(1, 5000):.1f},{flow:.5f}")
open(sys.argv[1] + "/pipes.csv", "w").write("\n".join(rows) + "\n")
json.dump({"fluid": "light oil", "density_kg_m3": 871.5, "viscosity_pa_s": 0.0214}, open(sys.argv[1] + "/fluid.json", "w"))
' "$T" </dev/null || exit 1
expected=$(python3 -I -c "$REF" "$T/pipes.csv" "$T/fluid.json" </dev/null) || exit 1
same "$expected" "$(run "$T/pipes.csv" "$T/fluid.json")" || exit 1
DRIVE=$(cat <<'PY'
import json, math, sys
sys.path.insert(0, sys.argv[1])
from roots import find_root
c = [0.83, 5.137, 17.25, 2.618, 31.4, -2.5]
cases = [(lambda x: math.cos(x) - c[0] * x, 0.0, 2.0, 1e-12), (lambda x: x ** 3 - 2 * x - c[1], 1.0, 4.0, 1e-12),
         (lambda x: math.tanh(5 * (x - c[2])), -50.0, 60.0, 1e-11), (lambda x: math.atan(1e4 * (x - c[3])), 0.0, 10.0, 1e-12),
         (lambda x: c[4] - math.exp(x), -3.0, 5.0, 1e-12), (lambda x: (x - c[5]) * (x + 7), c[5], 4.0, 1e-12),
         (lambda x: x * x + 1, -1.0, 2.0, 1e-12), (lambda x: math.sin(x), 3.0, 4.0, 1e-6)]
for f, a, b, tol in cases:
    n = [0]

    def g(x, f=f, n=n):
        n[0] += 1
        return f(x)
    try:
        print(json.dumps([float(find_root(g, a, b, tol)), n[0]]))
    except ValueError:
        print(json.dumps(["ValueError", n[0]]))
PY
)
ROOTS=$(cat <<'PY'
import json, math, os
want = [None, None, 17.25, 2.618, math.log(31.4), -2.5, "ValueError", math.pi]
lo, hi = 0.0, 2.0
for _ in range(200):
    m = (lo + hi) / 2
    lo, hi = (m, hi) if math.cos(m) - 0.83 * m > 0 else (lo, m)
want[0] = lo
lo, hi = 1.0, 4.0
for _ in range(200):
    m = (lo + hi) / 2
    lo, hi = (m, hi) if m ** 3 - 2 * m - 5.137 < 0 else (lo, m)
want[1] = lo
tols = [1e-12, 1e-12, 1e-11, 1e-12, 1e-12, 1e-12, 0, 1e-6]
try:
    rows = [json.loads(line) for line in os.environ["GOT"].splitlines() if line.strip()]
    ok = len(rows) == len(want)
    for (x, n), w, tol in zip(rows, want, tols):
        ok = ok and isinstance(n, int) and n <= 100
        ok = ok and (x == w if w == "ValueError" else abs(x - w) <= tol + 4e-16 * abs(w))
except (ValueError, TypeError):
    ok = False
print("ok" if ok else "mismatch")
PY
)
got=$(cd "$T" && timeout 10 env -u PYTHONSAFEPATH python3 -c "$DRIVE" "$OLDPWD" 2>/dev/null </dev/null | head -c 10000) || true
[ "$(GOT="$got" python3 -I -c "$ROOTS" </dev/null 2>/dev/null)" = ok ]
