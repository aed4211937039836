#!/usr/bin/env bash
# Builds the workspace: a correct but quadratic clickstream report script (list membership for duplicates and
# users, a scan of all events per user, a rescan of earlier events per event), a small sample that it handles in
# about a second, and a week of events (fixed seed) that it would need hours for.
set -euo pipefail
mkdir -p data
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
    events, bad = [], 0
    with open(path, encoding="utf-8") as f:
        f.readline()
        for line in f:
            if not line.strip():
                continue
            event = parse(line)
            if event is None:
                bad += 1
            elif event not in events:
                events.append(event)
    users = []
    for event in events:
        if event[1] not in users:
            users.append(event[1])
    users.sort()
    print("user,events,sessions,longest_session_s,max_burst")
    for user in users:
        mine = sorted([e for e in events if e[1] == user], key=lambda e: e[0])
        sessions, longest, start, best = 1, 0, mine[0][0], 0
        for i, event in enumerate(mine):
            if i > 0 and event[0] - mine[i - 1][0] > SESSION_GAP:
                sessions += 1
                start = event[0]
            longest = max(longest, event[0] - start)
            burst = sum(1 for e in mine[: i + 1] if event[0] - e[0] <= BURST_WINDOW)
            best = max(best, burst)
        print(f"{user},{len(mine)},{sessions},{int(longest)},{best}")
    print(f"skipped {bad} malformed line(s)", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1])
X
python3 - <<'PY'
import random
from datetime import datetime, timedelta, timezone

def week(seed, n, users, bots):
    rng = random.Random(seed)
    base = datetime(2024, 5, 6, tzinfo=timezone.utc)
    zones = [timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5)), timezone(timedelta(hours=5, minutes=30))]
    pages = ["/", "/search", "/cart", "/checkout", "/item/%d", "/help"]
    lines = ["timestamp,user,path"]
    t = {}
    for _ in range(n):
        u = f"user{rng.randint(1, users):05d}"
        t[u] = t.get(u, base + timedelta(seconds=rng.randint(0, 6 * 86400))) + timedelta(seconds=rng.choice([5, 40, 300, 900, 2400, 7200]))
        page = rng.choice(pages)
        page = page % rng.randint(1, 500) if "%d" in page else page
        stamp = t[u].astimezone(rng.choice(zones)).isoformat(timespec=rng.choice(["seconds", "milliseconds"]))
        lines.append(f"{stamp.replace('+00:00', rng.choice(['Z', '+00:00']))},{u},{page}")
        if rng.random() < 0.02:
            lines.append(f"{t[u].astimezone(rng.choice(zones)).isoformat()},{u},{page}")
        if rng.random() < 0.01:
            lines.append(rng.choice([f"{t[u].replace(tzinfo=None).isoformat()},{u},{page}", f"yesterday,{u},{page}",
                                     f"{stamp},{u}", f"{stamp},,{page}", f"{stamp},{u},search"]))
    for b in range(bots):  # crawlers: thousands of hits a few seconds apart
        u, when = f"bot{b + 1}", base + timedelta(hours=rng.randint(1, 100))
        for _ in range(rng.randint(20000, 25000)):
            when += timedelta(seconds=rng.choice([0, 1, 2, 3, 5, 8]), milliseconds=rng.choice([0, 250, 500]))
            lines.append(f"{when.isoformat(timespec='milliseconds')},{u},/item/{rng.randint(1, 900)}")
    body = lines[1:]
    rng.shuffle(body)
    return "\n".join(lines[:1] + body) + "\n"

open("data/sample.csv", "w").write(week(11, 1500, 60, 0))
open("data/week.csv", "w").write(week(12, 100000, 15000, 2))
PY
