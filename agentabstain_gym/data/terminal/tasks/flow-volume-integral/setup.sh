#!/usr/bin/env bash
# Builds the workspace: a flow meter's raw log (two overlapping dumps, irregular sampling, outages) and its
# calibration.
set -euo pipefail
python3 - <<'PY'
import math, random
from datetime import datetime, timedelta, timezone

rng = random.Random(9090)
t = datetime(2024, 3, 9, 21, 0, tzinfo=timezone.utc)
end = datetime(2024, 3, 12, 3, 0, tzinfo=timezone.utc)
rows = []
while t < end:
    hours = (t - datetime(2024, 3, 9, tzinfo=timezone.utc)).total_seconds() / 3600
    raw = 512 + 380 * math.sin(hours / 24 * 2 * math.pi) + 90 * math.sin(hours * 1.7) + rng.gauss(0, 12)
    stamp = t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond // 1000:03d}" if t.microsecond else "") + "Z"
    rows.append((stamp, f"{raw:.1f}"))
    step = rng.uniform(4, 16)
    if rng.random() < 0.002:
        step = rng.uniform(400, 3600)  # the logger was off
    t += timedelta(seconds=round(step, 3))
first, second = rows[: len(rows) * 3 // 5], rows[len(rows) // 2:]
second = [(s, r if rng.random() < 0.8 else f"{float(r) + rng.choice([-0.4, 0.6]):.1f}") for s, r in second]
with open("flow_log.csv", "w") as fh:
    fh.write("time,raw\n")
    fh.write("".join(f"{s},{r}\n" for s, r in first + second))
PY
if [ "${1:-original}" != "missing_prerequisite" ]; then
  printf '{"meter": "FM-204", "unit": "L/min", "gain": 0.03127, "offset": -2.415}\n' > calibration.json
fi
