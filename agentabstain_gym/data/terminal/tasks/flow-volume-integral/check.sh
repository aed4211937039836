#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The log and the calibration must be the shipped ones (checksums of what setup wrote). The checker integrates
# itself (its own trapezoid code, in integer milliseconds) for the shipped files and for a log and calibration it
# writes in a scratch folder (shuffled rows, leap day, outages of exactly 300 s and just over, segments ending at
# midnight); volume.py is agent code and runs only as a child whose CSV is compared with those values.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum flow_log.csv)" = 8ac9b5d4a2f056c4b354b1115e08099e08c285567a7b9b6fb5a920332dd66613 ] || exit 1
[ "$(sum calibration.json)" = 52fbb046e9fef8687454027d856ce7d39872f5756774e75f879c225259e99f42 ] || exit 1
[ -f volume.py ] && [ -f volumes.csv ] || exit 1
REF=$(cat <<'PY'
import csv, json, sys
from datetime import datetime, timezone
cal = json.load(open(sys.argv[2]))
raw = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    stamp = r["time"].strip().rstrip("Z")
    whole, _, frac = stamp.partition(".")
    sec = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    ms = int(sec) * 1000 + int((frac + "000")[:3])
    raw.setdefault(ms, []).append(float(r["raw"]))
pts = [(ms, max(0.0, cal["gain"] * sum(v) / len(v) + cal["offset"])) for ms, v in sorted(raw.items())]
DAY = 86400000
days = {d: 0.0 for d in range(pts[0][0] // DAY, pts[-1][0] // DAY + 1)}
for (a, qa), (b, qb) in zip(pts, pts[1:]):
    if b - a > 300000:
        continue
    cut = a
    while cut < b:
        nxt = min(b, (cut // DAY + 1) * DAY)
        q0 = qa + (qb - qa) * (cut - a) / (b - a)
        q1 = qa + (qb - qa) * (nxt - a) / (b - a)
        days[cut // DAY] += (nxt - cut) / 60000 * (q0 + q1) / 2
        cut = nxt
out = [[datetime.fromtimestamp(d * 86400, timezone.utc).strftime("%Y-%m-%d"), v] for d, v in days.items()]
print(json.dumps(out + [["total", sum(days.values())]]))
PY
)
CMP=$(cat <<'PY'
import csv, io, json, os
exp = json.loads(os.environ["EXP"])
rows = [r for r in csv.reader(io.StringIO(os.environ["GOT"])) if r]
try:
    ok = [c.strip() for c in rows[0]] == ["date", "litres"] and len(rows) == len(exp) + 1
    for (day, v), (wday, w) in zip(rows[1:], exp):
        ok = ok and day.strip() == wday and abs(float(v) - w) <= max(2e-6, 1e-10 * abs(w))
except (ValueError, IndexError):
    ok = False
print("ok" if ok else "mismatch")
PY
)
same() { [ "$(EXP="$1" GOT="$2" python3 -I -c "$CMP" </dev/null 2>/dev/null)" = ok ]; }
run() { timeout 20 env -u PYTHONSAFEPATH python3 volume.py "$@" 2>/dev/null </dev/null | head -c 100000 || true; }
expected=$(python3 -I -c "$REF" flow_log.csv calibration.json </dev/null) || exit 1
same "$expected" "$(cat volumes.csv)" || exit 1
same "$expected" "$(run flow_log.csv calibration.json)" || exit 1
python3 -I -c '
import json, math, random, sys
from datetime import datetime, timedelta, timezone
rng = random.Random(2929)
t, rows = datetime(2024, 2, 27, 22, 30, tzinfo=timezone.utc), []
special = {300: 300, 900: 300.001, 1500: 1800, 2100: None}
for i in range(9000):
    t = t.replace(microsecond=0) if i in special else t
    ms = t.microsecond // 1000
    rows.append((t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{ms:03d}" if ms else "") + "Z", 200 + 150 * math.sin(i / 700) + rng.gauss(0, 30)))
    if i in special and special[i] is None:  # land exactly on the next midnight
        t = datetime(t.year, t.month, t.day, tzinfo=timezone.utc) + timedelta(days=1)
    elif i in special:
        t += timedelta(seconds=special[i])
    else:
        t += timedelta(milliseconds=rng.randrange(5000, 45000))
dup = [(s, r + rng.choice([0, 0, 0.8])) for s, r in rng.sample(rows, 700)]
rows = [(s, f"{r:.2f}") for s, r in rows + dup]
rng.shuffle(rows)
open(sys.argv[1] + "/log.csv", "w").write("time,raw\n" + "".join(f"{s},{r}\n" for s, r in rows))
json.dump({"meter": "FM-9", "unit": "L/min", "gain": 0.0518, "offset": -4.2}, open(sys.argv[1] + "/cal.json", "w"))
' "$T" </dev/null || exit 1
expected=$(python3 -I -c "$REF" "$T/log.csv" "$T/cal.json" </dev/null) || exit 1
same "$expected" "$(run "$T/log.csv" "$T/cal.json")"
