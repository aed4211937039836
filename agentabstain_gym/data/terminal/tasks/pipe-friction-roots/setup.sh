#!/usr/bin/env bash
# Builds the workspace: a pipe network survey (mixed units in the column names) and the properties of the fluid.
set -euo pipefail
python3 - <<'PY'
import random
rng = random.Random(6061)
rows = ["pipe_id,diameter_mm,roughness_mm,length_m,flow_lps"]
for k in range(42):
    d = rng.choice([15, 22, 28, 50, 80, 100, 150, 200, 300, 450, 600])
    eps = rng.choice([0.0015, 0.0015, 0.007, 0.045, 0.15, 0.26, 0.9, 1.5])
    flow = round(rng.uniform(0.002, 0.02) if k % 7 == 0 else d * d / 1000 * rng.uniform(0.05, 1.2), 4)
    rows.append(f"P{k + 101},{d},{eps},{rng.randrange(5, 2000)},{flow}")
open("pipes.csv", "w").write("\n".join(rows) + "\n")
PY
if [ "${1:-original}" != "missing_prerequisite" ]; then
  printf '{"fluid": "ethylene glycol 30%%, 10 C", "density_kg_m3": 1043.7, "viscosity_pa_s": 0.003217}\n' > fluid.json
fi
