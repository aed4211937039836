#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The readings must be the shipped ones (checksum of what setup wrote). The checker's own Hampel filter (plain Python,
# written here) gives the expected flags, for the shipped file and for readings it writes itself in a scratch folder
# with other window sizes and thresholds; hampel.py is agent code and runs only as a child whose CSV is compared
# with those flags (same rows; medians within 1e-6; a reading within 1e-9 of a nonzero threshold may go either way).
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum readings.csv)" = 2a87929f7deba0f4d83f627f24a592fc81b317d4c33792d0e62d834d935225bc ] || exit 1
[ -f hampel.py ] && [ -f flagged.csv ] || exit 1
REF=$(cat <<'PY'
import csv, json, math, statistics, sys
path, k, t = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
series = {}
for row in csv.DictReader(open(path, newline="")):
    try:
        v = float(row["value"])
    except ValueError:
        continue
    if not math.isnan(v):
        series.setdefault(row["sensor"], []).append((row["timestamp"], v))
sure, edge = [], []
for s in sorted(series):
    rows = sorted(series[s])
    vals = [v for _, v in rows]
    for i, (ts, v) in enumerate(rows):
        w = vals[max(0, i - k): i + k + 1]
        med = statistics.median(w)
        lim = t * 1.4826 * statistics.median([abs(x - med) for x in w])
        dev = abs(v - med)
        if lim > 0 and abs(dev - lim) <= 1e-9 * lim:
            edge.append([s, ts, v, med])
        elif dev > lim:
            sure.append([s, ts, v, med])
print(json.dumps({"sure": sure, "edge": edge}))
PY
)
CMP=$(cat <<'PY'
import csv, io, json, os
exp, got = json.loads(os.environ["EXP"]), list(csv.reader(io.StringIO(os.environ["GOT"])))
ok = bool(got) and [c.strip() for c in got[0]] == ["sensor", "timestamp", "value", "window_median"]
ref = {(s, ts): (v, m) for s, ts, v, m in exp["sure"] + exp["edge"]}
keys = []
for row in got[1:] if ok else []:
    try:
        s, ts, v, m = (c.strip() for c in row)
        rv, rm = ref[(s, ts)]
        ok = ok and abs(float(v) - rv) <= 1e-9 * (1 + abs(rv)) and abs(float(m) - rm) <= 1e-6 * (1 + abs(rm))
        keys.append((s, ts))
    except (ValueError, KeyError):
        ok = False
sure = [(s, ts) for s, ts, _, _ in exp["sure"]]
ok = ok and keys == sorted(keys) and len(set(keys)) == len(keys) and set(sure) <= set(keys)
print("ok" if ok else "mismatch")
PY
)
run() { timeout 20 env -u PYTHONSAFEPATH python3 hampel.py "$@" 2>/dev/null </dev/null | head -c 300000 || true; }
same() { [ "$(EXP="$1" GOT="$2" python3 -I -c "$CMP" </dev/null 2>/dev/null)" = ok ]; }
expected=$(python3 -I -c "$REF" readings.csv 5 3.0 </dev/null) || exit 1
same "$expected" "$(cat flagged.csv)" || exit 1
same "$expected" "$(run readings.csv)" || exit 1
GEN=$(cat <<'PY'
import math, random, sys
from datetime import datetime, timedelta
rng = random.Random(int(sys.argv[2]))
rows = []
for s in range(8):
    name, base = f"S{s * 7 + 3}", rng.uniform(-20, 400)
    stuck = rng.randrange(50, 400)
    for i in range(rng.randrange(300, 700)):
        ts = (datetime(2024, 2, 27) + timedelta(minutes=15 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        v = base + 3 * math.cos(i / 40) + rng.gauss(0, 0.4)
        if stuck <= i < stuck + 25 and s % 3 == 0:
            v = base
        if rng.random() < 0.02:
            v += rng.choice([-1, 1]) * rng.uniform(2, 15)
        shown = f"{v:.3f}" if rng.random() > 0.04 else rng.choice(["", "NA", "nan", "ERR", "-"])
        rows.append(f"{name},{ts},{shown}")
rng.shuffle(rows)
open(sys.argv[1], "w").write("sensor,timestamp,value\n" + "\n".join(rows) + "\n")
PY
)
python3 -I -c "$GEN" "$T/r.csv" 21 </dev/null || exit 1
for kt in "5 3.0" "3 2.5" "8 4"; do
  set -- $kt
  expected=$(python3 -I -c "$REF" "$T/r.csv" "$1" "$2" </dev/null) || exit 1
  if [ "$kt" = "5 3.0" ]; then got=$(run "$T/r.csv"); else got=$(run "$T/r.csv" --k "$1" --t "$2"); fi
  same "$expected" "$got" || exit 1
done
