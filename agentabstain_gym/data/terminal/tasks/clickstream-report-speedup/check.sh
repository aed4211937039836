#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# report.py is agent code: it runs as a child, under a time limit, on a clickstream made up here on every run
# (160,000+ lines: 20,000 users, crawlers with tens of thousands of hits, the same event written in other time zones,
# fractional seconds, malformed and blank lines), and its stdout and stderr must equal what a reference of the
# shipped script's rules gives for the events made again from the seed; the reference runs only after the script
# has finished, so no expected value is on disk while agent code runs. The shipped script needs hours for such a
# file; the limit is 10 s.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -f report.py ] || exit 1
REF=$(cat <<'PY'
import random, sys
from datetime import datetime, timedelta, timezone
mode, T, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
base = datetime(2024, 6, 3, tzinfo=timezone.utc) + timedelta(seconds=rng.randint(0, 10 ** 6))
zones = [timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-7)), timezone(timedelta(hours=9, minutes=30))]
def stamp(t, spec=None):
    s = t.astimezone(rng.choice(zones)).isoformat(timespec=spec or rng.choice(["seconds", "milliseconds", "microseconds"]))
    return s.replace("+00:00", "Z") if rng.random() < 0.5 else s
lines, last = [], {}
for _ in range(85000):
    u = f"u{rng.randint(1, 20000)}"
    last[u] = last.get(u, base + timedelta(seconds=rng.randint(0, 5 * 86400))) + timedelta(
        seconds=rng.choice([0, 3, 60, 599, 600, 601, 1799, 1800, 1801, 5000]), milliseconds=rng.choice([0, 0, 1, 500]))
    page = rng.choice(["/", "/a", "/b", f"/p/{rng.randint(1, 99)}"])
    lines.append(f"{stamp(last[u])},{rng.choice([u, u, ' ' + u])},{page}")
    r = rng.random()
    if r < 0.03:
        lines.append(f"{stamp(last[u], 'microseconds')},{u},{page} ")
    elif r < 0.045:
        lines.append(rng.choice([f"{last[u].replace(tzinfo=None).isoformat()},{u},{page}", f"soon,{u},{page}", f"{stamp(last[u])},{u}",
                                 f"{stamp(last[u])},,{page}", f"{stamp(last[u])},{u},nopath", f"{stamp(last[u])},{u},/x,extra", "   "]))
for b in range(2):
    when = base + timedelta(hours=rng.randint(0, 72))
    for _ in range(rng.randint(36000, 40000)):
        when += timedelta(seconds=rng.choice([0, 1, 2, 4, 7, 30]), milliseconds=rng.choice([0, 125, 500]))
        lines.append(f"{stamp(when)},crawler-{b},/p/{rng.randint(1, 400)}")
rng.shuffle(lines)
if mode == "make":
    open(f"{T}/in.csv", "w", encoding="utf-8").write("timestamp,user,path\n" + "\n".join(lines) + "\n")
    sys.exit(0)
seen, times, bad = set(), {}, 0
for line in lines:  # made again from the seed, not read back from a file agent code could have rewritten
    if not line.strip():
        continue
    parts = line.split(",")
    ok = len(parts) == 3
    if ok:
        s, u, p = (x.strip() for x in parts)
        try:
            w = datetime.fromisoformat(s)
        except ValueError:
            w = None
        ok = bool(u) and p.startswith("/") and w is not None and w.tzinfo is not None
    if not ok:
        bad += 1
        continue
    e = (w.timestamp(), u, p)
    if e not in seen:
        seen.add(e)
        times.setdefault(u, []).append(e[0])
out = ["user,events,sessions,longest_session_s,max_burst"]
for u in sorted(times):
    ts = sorted(times[u])
    sessions, longest, start, best, lo = 1, 0, ts[0], 0, 0
    for i, t in enumerate(ts):
        if i and t - ts[i - 1] > 1800:
            sessions += 1
            start = t
        longest = max(longest, t - start)
        while t - ts[lo] > 600:
            lo += 1
        best = max(best, i - lo + 1)
    out.append(f"{u},{len(ts)},{sessions},{int(longest)},{best}")
ok = open(f"{T}/got").read() == "\n".join(out) + "\n" and open(f"{T}/got.err").read() == f"skipped {bad} malformed line(s)\n"
sys.exit(0 if ok else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
timeout 10 env -u PYTHONSAFEPATH python3 report.py "$T/in.csv" > "$T/got" 2> "$T/got.err" </dev/null || exit 1
python3 -I - check "$T" "$seed" <<<"$REF"
