#!/usr/bin/env bash
# Builds the workspace: a month of sensor readings, shuffled, with failed reads, spikes, a stuck sensor and a level
# shift (fixed seed).
set -euo pipefail
python3 - <<'PY'
import math, random
from datetime import datetime, timedelta

rng = random.Random(5150)
t0 = datetime(2024, 6, 1)
rows = []
for s in range(12):
    name = f"{'TP'[s % 2]}-{s + 1:02d}"
    base, amp = (21.0 if s % 2 == 0 else 1013.0), (1.5 if s % 2 == 0 else 6.0)
    n = rng.randrange(1500, 1900)
    for i in range(n):
        ts = (t0 + timedelta(minutes=20 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        v = base + amp * math.sin(i / 72 * math.pi) + rng.gauss(0, amp / 10)
        if s == 4 and i > n // 2:
            v += 4.0  # the sensor was moved
        if s == 7 and 300 <= i < 420:
            v = 1009.5  # stuck
        if rng.random() < 0.012:
            v += rng.choice([-1, 1]) * rng.uniform(3, 12) * amp
        shown = f"{v:.2f}"
        if rng.random() < 0.03:
            shown = rng.choice(["", "NA", "nan", "ERR", "-"])
        rows.append(f"{name},{ts},{shown}")
rng.shuffle(rows)
with open("readings.csv", "w") as fh:
    fh.write("sensor,timestamp,value\n" + "\n".join(rows) + "\n")
PY
