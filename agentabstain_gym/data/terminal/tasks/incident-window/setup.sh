#!/usr/bin/env bash
# Builds the workspace: three service logs covering 10:00-10:30 with interleaved timestamps (fixed seed).
set -euo pipefail
mkdir -p logs
python3 - <<'PY'
import random
rng = random.Random(15)
for name, n in (("api", 70), ("db", 50), ("worker", 60)):
    secs = sorted(rng.randint(0, 1799) for _ in range(n))
    with open(f"logs/{name}.log", "w") as fh:
        for i, s in enumerate(secs):
            fh.write(f"2024-05-01 10:{s // 60:02d}:{s % 60:02d} {rng.choice(['INFO', 'WARN', 'ERROR'])} {name} msg {i}\n")
    # the same minutes on another day must not match
    with open(f"logs/{name}.log", "a") as fh:
        fh.write(f"2024-05-02 10:16:00 INFO {name} next day\n")
open("logs/notes.txt", "w").write("2024-05-01 10:17:00 not a log file\n")
PY
