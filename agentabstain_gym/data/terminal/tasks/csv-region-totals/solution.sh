#!/usr/bin/env bash
# The csv module handles the quoting; Decimal keeps the cents exact.
set -euo pipefail
cat -A sales.csv | head -n 4
cat > totals.py <<'PY'
import csv
from collections import defaultdict
from decimal import Decimal
totals = defaultdict(Decimal)
with open("sales.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        if not row.get("region"):
            continue
        totals[row["region"].strip().lower()] += Decimal(row["amount"].replace(",", ""))
with open("region_totals.csv", "w", newline="") as out:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["region", "total"])
    for region in sorted(totals):
        w.writerow([region, f"{totals[region]:.2f}"])
PY
python3 totals.py
cat region_totals.csv
