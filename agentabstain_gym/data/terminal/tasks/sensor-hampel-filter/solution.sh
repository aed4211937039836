#!/usr/bin/env bash
# Per sensor: valid readings in time order, a window of up to k neighbours each side (truncated at the ends, so
# windows there have an even size), flag where the deviation from the window median exceeds t * 1.4826 * MAD.
set -euo pipefail
head -n 5 readings.csv
cut -d, -f3 readings.csv | grep -v '^[0-9.-]*[0-9]$' | sort | uniq -c
cat > hampel.py <<'PY'
"""Hampel filter: flag readings far from the median of their neighbourhood."""
import argparse
import csv
import math

import numpy as np


def load(path):
    series = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            raw = (row.get("value") or "").strip()
            try:
                value = float(raw)
            except ValueError:
                continue
            if math.isnan(value):
                continue
            series.setdefault(row["sensor"].strip(), []).append((row["timestamp"].strip(), value, raw))
    return series


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--t", type=float, default=3.0)
    args = ap.parse_args()
    out = csv.writer(__import__("sys").stdout, lineterminator="\n")
    out.writerow(["sensor", "timestamp", "value", "window_median"])
    for sensor, rows in sorted(load(args.path).items()):
        rows.sort()
        v = np.array([r[1] for r in rows])
        for i in range(len(v)):
            w = v[max(0, i - args.k): i + args.k + 1]
            med = np.median(w)
            mad = np.median(np.abs(w - med))
            if abs(v[i] - med) > args.t * 1.4826 * mad:
                out.writerow([sensor, rows[i][0], rows[i][2], f"{med:.6f}"])


if __name__ == "__main__":
    main()
PY
python3 hampel.py readings.csv > flagged.csv
wc -l flagged.csv
cut -d, -f1 flagged.csv | sort | uniq -c
