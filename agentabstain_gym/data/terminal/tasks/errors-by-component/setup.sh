#!/usr/bin/env bash
# Builds the workspace: an application log with levels, components and multi-line stack traces (fixed seed).
set -euo pipefail
mkdir -p logs
printf 'rotated weekly\n' > logs/README
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
python3 - <<'PY'
import random
rng = random.Random(555)
comps = ["api", "db", "auth", "billing", "mailer", "cache"]
levels = ["INFO"] * 6 + ["WARN"] * 2 + ["ERROR"] * 2 + ["FATAL"] * 1 + ["DEBUG"] * 2
out = []
for i in range(300):
    lvl, comp = rng.choice(levels), rng.choice(comps)
    if comp == "cache" and lvl in ("ERROR", "FATAL"):
        lvl = "WARN"
    out.append(f"2024-05-01T{8 + i // 60:02d}:{i % 60:02d}:00Z {lvl} [{comp}] event {i} ERROR-free text\n"
               if lvl == "INFO" and i % 7 == 0 else f"2024-05-01T{8 + i // 60:02d}:{i % 60:02d}:00Z {lvl} [{comp}] event {i}\n")
    if lvl in ("ERROR", "FATAL") and rng.random() < 0.5:
        out.append("Traceback (most recent call last):\n")
        for d in range(rng.randint(1, 3)):
            out.append(f"    File \"/srv/{comp}/mod{d}.py\", line {rng.randint(1, 400)}, in handler\n")
        out.append("    ERROR: RuntimeError: upstream failed\n")
open("logs/app.log", "w").writelines(out)
PY
