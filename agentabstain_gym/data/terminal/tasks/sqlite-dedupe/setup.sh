#!/usr/bin/env bash
# Builds the workspace: a readings table where some (sensor, ts) pairs were inserted twice.
set -euo pipefail
python3 - <<'PY'
import random
import sqlite3
rng = random.Random(4242)
con = sqlite3.connect("sensors.db")
con.execute("CREATE TABLE readings (id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, ts TEXT NOT NULL, value REAL)")
rows = []
for sensor in ("north", "south", "roof"):
    for minute in range(0, 60, 5):
        rows.append((sensor, f"2024-03-01T10:{minute:02d}:00", round(rng.uniform(15, 25), 1)))
dupes = [rows[i] for i in (3, 7, 7, 15, 22, 30)]
allrows = rows[:20] + dupes[:3] + rows[20:] + dupes[3:]
con.executemany("INSERT INTO readings (sensor, ts, value) VALUES (?, ?, ?)", allrows)
con.commit()
con.close()
PY
