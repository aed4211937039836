#!/bin/bash
python3 - <<'PY'
import csv, json
totals = {}
with open("/app/data/sales.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        entry = totals.setdefault(row["product"], {"units": 0, "revenue": 0.0})
        entry["units"] += int(row["units"])
        entry["revenue"] += int(row["units"]) * float(row["price"])
for entry in totals.values():
    entry["revenue"] = round(entry["revenue"], 2)
with open("/app/summary.json", "w") as handle:
    json.dump(totals, handle)
PY
