#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f purchases_eu.jsonl ] || exit 1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import json, sys
want = [("ev-001", "IT", 12.64), ("ev-004", "DE", 50.29), ("ev-016", "IT", 45.85), ("ev-020", "PL", 55.0),
        ("ev-022", "DE", 15.15), ("ev-028", "PL", 37.69), ("ev-030", "SE", 29.7), ("ev-040", "FR", 17.18),
        ("ev-045", "DE", 41.0), ("ev-051", "SE", 56.26), ("ev-058", "IT", 57.93), ("ev-060", "IT", 47.99)]
try:
    rows = [json.loads(line) for line in open("purchases_eu.jsonl") if line.strip()]
except ValueError:
    sys.exit(1)
if any(not isinstance(r, dict) or sorted(r) != ["amount", "country", "id"] for r in rows):
    sys.exit(1)
sys.exit(0 if [(r["id"], r["country"], r["amount"]) for r in rows] == want else 1)
PY
