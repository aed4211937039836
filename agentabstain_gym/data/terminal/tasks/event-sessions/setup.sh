#!/usr/bin/env bash
# Builds the workspace: an app event log (JSON lines) from several services, with mixed time formats, duplicates
# and a few broken lines.
set -euo pipefail
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
python3 - <<'PY'
import json, random
from datetime import datetime, timedelta, timezone

rng = random.Random(3030)
EVENTS = ["view", "click", "search", "add_to_cart", "checkout", "logout"]
t0 = int(datetime(2024, 5, 1, 6, tzinfo=timezone.utc).timestamp())


def fmt(ts):
    kind = rng.randrange(4)
    if kind == 0:
        return ts
    if kind == 1:
        return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    off = rng.choice([-5, 1, 2, 5.5, 9])
    tz = timezone(timedelta(hours=off))
    return datetime.fromtimestamp(ts, tz).isoformat()


lines = []
for u in range(1, 41):
    t = t0 + rng.randrange(0, 3 * 86400)
    for _ in range(rng.randrange(10, 60)):
        user = rng.choice([f"u{u}", f"U{u}", f" u{u} "] if rng.random() < 0.2 else [f"u{u}"])
        ev = rng.choice(EVENTS)
        lines.append(json.dumps({"user": user, "ts": fmt(t), "event": ev}))
        if rng.random() < 0.06:  # the same event delivered twice, perhaps by another service
            lines.append(json.dumps({"ts": fmt(t), "event": ev, "user": user.strip()}))
        t += rng.choice([rng.randrange(5, 600), rng.randrange(5, 600), 1800, 1801, rng.randrange(1802, 20000)])
lines += ['{"user": "u3", "ts": "2024-05-01T', "", '{"user": "u4", "event": "view"}', "not json"]
rng.shuffle(lines)
with open("events.jsonl", "w") as fh:
    fh.write("\n".join(lines) + "\n")
PY
