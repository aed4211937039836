#!/usr/bin/env bash
# A csv/json reader (the csv module handles the quoted names), then run it.
set -euo pipefail
head -n 3 stock.csv
cat > restock.py <<'PY'
"""Print `sku quantity` for every item below its minimum stock."""
import csv
import json


def main():
    minimums = json.load(open("thresholds.json"))
    default = minimums["default"]
    with open("stock.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in sorted(rows, key=lambda r: r["sku"]):
        minimum = minimums.get(row["sku"], default)
        on_hand = int(row["on_hand"])
        if on_hand < minimum:
            print(row["sku"], minimum * 2 - on_hand)


if __name__ == "__main__":
    main()
PY
python3 restock.py > reorder.txt
cat reorder.txt
