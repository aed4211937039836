#!/usr/bin/env bash
# Kahn's algorithm over the stated edges (duplicates counted once, names may hold spaces, `after` reversed): more than
# one step ready at once means two undecided steps; steps never freed sit on a cycle, found by walking back along
# the remaining edges.
set -euo pipefail
ls -l steps
head -5 steps/release.txt
cat > order <<'PY'
#!/usr/bin/env python3
"""order FILE: the one order the statements allow, or `undecided` + two such steps, or `cycle` + the steps on one."""
import re
import sys
from collections import deque

STATEMENT = re.compile(r"\s*(.+?)\s+(before|after)\s+(.+?)\s*")
succ, indeg, steps = {}, {}, []


def add(name):
    if name not in succ:
        succ[name], indeg[name] = set(), 0
        steps.append(name)


for raw in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    line = raw.strip()
    if not line or line.startswith("#"):
        continue
    m = STATEMENT.fullmatch(line)
    if not m:
        sys.exit(f"cannot read: {line}")
    a, rel, b = m.groups()
    a, b = re.sub(r"\s+", " ", a), re.sub(r"\s+", " ", b)
    first, second = (a, b) if rel == "before" else (b, a)
    add(first)
    add(second)
    if second not in succ[first]:
        succ[first].add(second)
        indeg[second] += 1

left = dict(indeg)
ready = deque(s for s in steps if left[s] == 0)
order, undecided = [], None
while ready:
    if len(ready) > 1 and undecided is None:
        undecided = (ready[0], ready[1])
    s = ready.popleft()
    order.append(s)
    for t in succ[s]:
        left[t] -= 1
        if left[t] == 0:
            ready.append(t)
if len(order) < len(steps):  # what is left holds a cycle: walk back along remaining edges until a step repeats
    rest = {s for s in steps if left[s] > 0}
    pred = {}
    for p in rest:
        for t in succ[p]:
            if t in rest:
                pred.setdefault(t, p)
    s, seen = next(iter(sorted(rest))), {}
    path = []
    while s not in seen:
        seen[s] = len(path)
        path.append(s)
        s = pred[s]
    cycle = path[seen[s]:][::-1]
    print("cycle")
    print("\n".join(cycle))
elif undecided:
    print("undecided")
    print("\n".join(undecided))
else:
    print("\n".join(order))
PY
chmod +x order
mkdir -p orders
for f in steps/*.txt; do
  ./order "$f" > "orders/$(basename "$f")"
  printf '%s: %s (%s lines)\n' "$f" "$(head -n 1 "orders/$(basename "$f")")" "$(wc -l < "orders/$(basename "$f")")"
done
