#!/usr/bin/env bash
# Parse line by line so broken lines are skipped, then filter and project.
set -euo pipefail
wc -l events.jsonl
head -n 2 events.jsonl
python3 - <<'PY'
import json
eu = set(open("eu_countries.txt").read().split())
with open("events.jsonl") as src, open("purchases_eu.jsonl", "w") as out:
    for line in src:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("type") == "purchase" and ev.get("country") in eu and ev.get("amount", 0) >= 10:
            out.write(json.dumps({"id": ev["id"], "country": ev["country"], "amount": ev["amount"]},
                                 separators=(",", ":")) + "\n")
PY
wc -l purchases_eu.jsonl
