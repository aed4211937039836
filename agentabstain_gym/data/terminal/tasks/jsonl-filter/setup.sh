#!/usr/bin/env bash
# Builds the workspace: a generated event stream (fixed seed) with a few corrupted lines.
set -euo pipefail
printf '%s\n' AT BE DE ES FR IT NL PL SE > eu_countries.txt
python3 - <<'PY'
import json, random
rng = random.Random(77)
countries = ["DE", "FR", "US", "NL", "CH", "IT", "GB", "PL", "NO", "SE"]
lines = []
for i in range(1, 61):
    ev = {"id": f"ev-{i:03d}", "type": rng.choice(["purchase", "view", "purchase", "signup"]),
          "country": rng.choice(countries), "amount": round(rng.uniform(1, 60), 2), "session": rng.randrange(10**6)}
    if ev["type"] != "purchase" and rng.random() < 0.5:
        del ev["amount"]
    lines.append(json.dumps(ev))
for pos in (9, 31, 47):
    lines[pos] = lines[pos][: len(lines[pos]) // 2]
open("events.jsonl", "w").write("\n".join(lines) + "\n")
PY
