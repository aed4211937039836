#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The log must be the shipped one (checksum of what setup wrote) and sessions.csv must hold the sessions fixed here.
# sessions.py is agent code: it runs only as a child, on the shipped log and on logs this checker writes itself in a
# scratch folder (gaps of exactly the limit and one second more, for several limits); its output is compared with
# sessions the checker computes from the true events it wrote.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
norm() { tr -d '\r' | sed 's/[[:space:]]*$//' | grep -v '^$' || true; }
[ "$(sum events.jsonl)" = 305c1b3a6c81567512d84442797005aaeb0b39e657d19f35455a02fb4d45bb59 ] || exit 1
[ -f sessions.py ] && [ -f sessions.csv ] || exit 1
[ "$(norm < sessions.csv | sha256sum | cut -c1-64)" = cda061e366777ca05ed8394dda88547ebfcf1b1cfc9caedbf69d96ed14c8fcd8 ] || exit 1
run() { timeout 20 env -u PYTHONSAFEPATH python3 sessions.py "$@" 2>/dev/null </dev/null | head -c 1000000 | norm; }
[ "$(run events.jsonl | sha256sum | cut -c1-64)" = cda061e366777ca05ed8394dda88547ebfcf1b1cfc9caedbf69d96ed14c8fcd8 ] || exit 1
GEN=$(cat <<'PY'
import json, random, sys
from datetime import datetime, timedelta, timezone
out, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
t0 = int(datetime(2023, 12, 30, 20, tzinfo=timezone.utc).timestamp())
truth, lines = set(), []


def fmt(ts):
    k = rng.randrange(3)
    if k == 0:
        return ts
    tz = timezone(timedelta(hours=rng.choice([0, -8, -3.5, 3, 10, 12])))
    s = datetime.fromtimestamp(ts, tz).isoformat()
    return s.replace("+00:00", "Z") if k == 1 else s


for u in range(25):
    user = f"acct-{u * 37 % 101:04d}"
    t = t0 + rng.randrange(0, 2 * 86400)
    for _ in range(rng.randrange(15, 45)):
        ev = rng.choice(["open", "scroll", "share", "close"])
        truth.add((user, t, ev))
        for _ in range(2 if rng.random() < 0.08 else 1):
            shown = rng.choice([user, user.upper(), f"  {user}"]) if rng.random() < 0.3 else user
            rec = [("user", shown), ("ts", fmt(t)), ("event", ev)]
            rng.shuffle(rec)
            lines.append(json.dumps(dict(rec)))
        if rng.random() < 0.1:  # another event at the very same second
            ev2 = "ping" if ev != "ping" else "open"
            truth.add((user, t, ev2))
            lines.append(json.dumps({"user": user, "ts": fmt(t), "event": ev2}))
        t += rng.choice([rng.randrange(1, 500), 600, 601, 1800, 1801, 2700, 2701, rng.randrange(2702, 9000)])
lines += ['{"user": "acct-0001", "ts": 17', "[]", '{"ts": 1703966400, "event": "open"}', "", "   "]
rng.shuffle(lines)
with open(f"{out}/events.jsonl", "w") as fh:
    fh.write("\n".join(lines) + "\n")
iso = lambda ts: datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
for gap in (30, 10, 45):
    print(f"== {gap}")
    print("user,start,end,events")
    rows, cur = [], None
    for user, ts, _ in sorted(truth):
        if cur and cur[0] == user and ts - cur[2] <= gap * 60:
            cur[2:] = [ts, cur[3] + 1]
        else:
            cur = [user, ts, ts, 1]
            rows.append(cur)
    print("\n".join(f"{u},{iso(a)},{iso(b)},{n}" for u, a, b, n in rows))
PY
)
mkdir "$T/d"
expected=$(python3 -I -c "$GEN" "$T/d" 11 </dev/null) || exit 1
got="== 30
$(run "$T/d/events.jsonl")
== 10
$(run "$T/d/events.jsonl" --gap 10)
== 45
$(run "$T/d/events.jsonl" --gap 45)"
[ "$got" = "$expected" ]
