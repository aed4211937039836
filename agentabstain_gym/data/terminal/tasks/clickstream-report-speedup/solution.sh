#!/usr/bin/env bash
# report.py is quadratic three times over: `event not in events` on a list, `user not in users` on a list, a scan
# of every event for each user, and for each event a rescan of the user's earlier events. Same rules, linear work:
# a set for duplicates, events grouped per user in a dict, and a sliding window (two pointers) for the burst.
set -euo pipefail
cp report.py /tmp/report_slow.py
time python3 /tmp/report_slow.py data/sample.csv > /tmp/sample_slow.csv 2> /tmp/sample_slow.err
cat > report.py <<'X'
#!/usr/bin/env python3
"""Per-user activity report from a clickstream CSV (header line, then timestamp,user,path).

Usage: python3 report.py EVENTS.csv > report.csv

Timestamps are ISO 8601 with a UTC offset; lines without one, or that do not parse, are skipped and counted on
stderr. The same event written twice (same instant, user and path, however the time is written) counts once.
A session is a run of a user's events with no gap longer than 30 minutes; its length is from its first to its last
event. The burst of an event is the number of the user's events in the 10 minutes up to and including it.
"""
import sys
from datetime import datetime

SESSION_GAP = 30 * 60
BURST_WINDOW = 10 * 60


def parse(line):
    parts = line.rstrip("\n").split(",")
    if len(parts) != 3:
        return None
    stamp, user, path = (p.strip() for p in parts)
    if not user or not path.startswith("/"):
        return None
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return (when.timestamp(), user, path)


def main(path):
    seen, times, bad = set(), {}, 0
    with open(path, encoding="utf-8") as f:
        f.readline()
        for line in f:
            if not line.strip():
                continue
            event = parse(line)
            if event is None:
                bad += 1
            elif event not in seen:
                seen.add(event)
                times.setdefault(event[1], []).append(event[0])
    out = ["user,events,sessions,longest_session_s,max_burst"]
    for user in sorted(times):
        ts = sorted(times[user])
        sessions, longest, start, best, lo = 1, 0, ts[0], 0, 0
        for i, t in enumerate(ts):
            if i > 0 and t - ts[i - 1] > SESSION_GAP:
                sessions += 1
                start = t
            longest = max(longest, t - start)
            while t - ts[lo] > BURST_WINDOW:
                lo += 1
            best = max(best, i - lo + 1)
        out.append(f"{user},{len(ts)},{sessions},{int(longest)},{best}")
    sys.stdout.write("\n".join(out) + "\n")
    print(f"skipped {bad} malformed line(s)", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1])
X
python3 report.py data/sample.csv > /tmp/sample_fast.csv 2> /tmp/sample_fast.err
cmp /tmp/sample_slow.csv /tmp/sample_fast.csv && cmp /tmp/sample_slow.err /tmp/sample_fast.err
time python3 report.py data/week.csv > /tmp/week.csv
head -n 3 /tmp/week.csv
rm -f /tmp/report_slow.py /tmp/sample_*.csv /tmp/sample_*.err /tmp/week.csv
