#!/usr/bin/env bash
# Parse both timestamp styles into UTC seconds, drop broken lines and duplicate deliveries, then split each user's
# sorted events wherever the gap exceeds the limit (a gap of exactly the limit stays in the session).
set -euo pipefail
head -n 5 events.jsonl
grep -c . events.jsonl
cat > sessions.py <<'PY'
"""Split an event log into per-user sessions."""
import argparse
import json
from datetime import datetime, timezone


def to_epoch(ts):
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return int(ts)
    dt = datetime.fromisoformat(str(ts).strip().replace("Z", "+00:00"))
    if dt.tzinfo is None:
        raise ValueError("timestamp without a zone")
    return int(dt.timestamp())


def load(path):
    seen = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
                key = (str(rec["user"]).strip().lower(), to_epoch(rec["ts"]), str(rec["event"]))
            except (ValueError, KeyError, TypeError):
                continue
            seen.add(key)
    return sorted(seen)


def iso(ts):
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--gap", type=float, default=30)
    args = ap.parse_args()
    limit = args.gap * 60
    print("user,start,end,events")
    current = None
    for user, ts, _ in load(args.log):
        if current and current[0] == user and ts - current[2] <= limit:
            current[2], current[3] = ts, current[3] + 1
            continue
        if current:
            print(f"{current[0]},{iso(current[1])},{iso(current[2])},{current[3]}")
        current = [user, ts, ts, 1]
    if current:
        print(f"{current[0]},{iso(current[1])},{iso(current[2])},{current[3]}")


if __name__ == "__main__":
    main()
PY
python3 sessions.py events.jsonl > sessions.csv
wc -l sessions.csv
head -n 5 sessions.csv
