#!/usr/bin/env bash
# Sort and merge the two dumps (duplicate times: mean raw), calibrate and clip at 0, then integrate with the
# trapezoid rule, skipping outages longer than 5 minutes and splitting segments at UTC midnight by interpolation.
set -euo pipefail
head -n 3 flow_log.csv
cat calibration.json
cut -d, -f1 flow_log.csv | sort | uniq -d | wc -l
cat > volume.py <<'PY'
"""Daily volumes (litres) from a flow meter log by the trapezoid rule."""
import csv
import json
import sys
from datetime import datetime, timedelta, timezone

MAX_GAP = 300.0


def load(log_path, calib_path):
    calib = json.load(open(calib_path))
    sums = {}
    with open(log_path, newline="") as fh:
        for row in csv.DictReader(fh):
            t = datetime.fromisoformat(row["time"].strip().replace("Z", "+00:00")).timestamp()
            acc = sums.setdefault(t, [0.0, 0])
            acc[0] += float(row["raw"])
            acc[1] += 1
    return [(t, max(0.0, calib["gain"] * s / n + calib["offset"])) for t, (s, n) in sorted(sums.items())]


def day_of(t):
    return datetime.fromtimestamp(t, timezone.utc).date()


def main(log_path, calib_path):
    samples = load(log_path, calib_path)
    days = {}
    d = day_of(samples[0][0])
    while d <= day_of(samples[-1][0]):
        days[d] = 0.0
        d += timedelta(days=1)
    for (t0, q0), (t1, q1) in zip(samples, samples[1:]):
        if t1 - t0 > MAX_GAP:
            continue
        while day_of(t0) != day_of(t1):  # split at the midnight inside the segment
            mid = datetime.combine(day_of(t0) + timedelta(days=1), datetime.min.time(), timezone.utc).timestamp()
            qm = q0 + (q1 - q0) * (mid - t0) / (t1 - t0)
            days[day_of(t0)] += (mid - t0) / 60 * (q0 + qm) / 2
            t0, q0 = mid, qm
        days[day_of(t0)] += (t1 - t0) / 60 * (q0 + q1) / 2
    print("date,litres")
    for d, v in days.items():
        print(f"{d.isoformat()},{v:.6f}")
    print(f"total,{sum(days.values()):.6f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
PY
python3 volume.py flow_log.csv calibration.json > volumes.csv
cat volumes.csv
