#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The statement files must be the shipped ones (checksums of what setup wrote). Each orders/NAME.txt is judged by the
# checker's own isolated Python against its statements and the outcome fixed here (one order, a cycle, two undecided
# steps). order is agent code: it runs as a child, under a time limit, on four new statement files the checker
# generates in a scratch folder (CRLF lines, thousands of steps), judged the same way against those files made
# again from the seed after it has run.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
mkdir "$T/ws" "$T/new"
for f in migrations platform plugins release; do cp "steps/$f.txt" "$T/ws/$f.txt" 2>/dev/null || exit 1; done
[ "$(sum "$T/ws/migrations.txt")" = bfc610b1b23874f26c69b40f6fb53b6443963612ae95011cac9745172e3de182 ] || exit 1
[ "$(sum "$T/ws/platform.txt")" = a084e064d621b262adf5cfc0ef61b8f12dbe1392e6f6053e6439552ee1e2d89f ] || exit 1
[ "$(sum "$T/ws/plugins.txt")" = 6b02947fa8d90101df2c67f952eecce8b5274da1ab85d9554c70697b3b5623a7 ] || exit 1
[ "$(sum "$T/ws/release.txt")" = fd47b68114f9a8f569b8b0c8fb0b3e4cb5e406d0cab72a1e04e073c114f7d924 ] || exit 1
[ -f order ] && [ -x order ] || exit 1
PY=$(cat <<'EOF'
import random
VERBS = "build test migrate seed index warm render sign upload verify compile link package notify backup restore scan lint".split()
NOUNS = "api db cache docs assets schema users orders search images reports config keys logs queue billing".split()
def names(rng, n):
    out, seen = [], set()
    while len(out) < n:
        v, o, k = rng.choice(VERBS), rng.choice(NOUNS), rng.randrange(1, 10 * n)
        style = rng.random()
        name = f"{v}-{o}-{k}" if style < 0.5 else f"{v}_{o}.{k}" if style < 0.8 else f"{v} {o} {k}"
        if name not in seen:
            seen.add(name); out.append(name)
    return out
def instance(rng, n, extra, kind):
    order = names(rng, n)
    pairs = [(order[i], order[i + 1]) for i in range(n - 1)]
    gap = None
    if kind == "ambiguous":
        gap = rng.randrange(1, n - 2)
        pairs.pop(gap)
    for _ in range(extra):
        i, j = sorted(rng.sample(range(n), 2))
        if kind == "ambiguous" and (i, j) == (gap, gap + 1):
            continue
        pairs.append((order[i], order[j]))
    if kind == "cycle":
        i = rng.randrange(0, n // 3); j = rng.randrange(2 * n // 3, n)
        pairs.append((order[j], order[i]))
    pairs += rng.sample(pairs, len(pairs) // 20)  # repeated statements
    rng.shuffle(pairs)
    lines = []
    for a, b in pairs:
        sp = " " * rng.choice([1, 1, 1, 2])
        lines.append(f"{a}{sp}before{sp}{b}" if rng.random() < 0.5 else f"{b}{sp}after{sp}{a}")
        if rng.random() < 0.01:
            lines.append("# checked by the release team")
        if rng.random() < 0.01:
            lines.append("")
    return "\n".join(lines) + "\n", order
import json, os, re, sys
from collections import deque
def parse(text):
    edges = set()
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"): continue
        m = re.fullmatch(r"(.+?)\s+(before|after)\s+(.+)", line)
        a, rel, b = re.sub(r"\s+", " ", m.group(1)), m.group(2), re.sub(r"\s+", " ", m.group(3))
        edges.add((a, b) if rel == "before" else (b, a))
    return edges
def reach(edges, src):
    succ = {}
    for a, b in edges: succ.setdefault(a, []).append(b)
    seen, q = {src}, deque([src])
    while q:
        for t in succ.get(q.popleft(), []):
            if t not in seen: seen.add(t); q.append(t)
    return seen
def verdict(text, answer, kind):
    edges = parse(text)
    steps = {x for e in edges for x in e}
    out = [l.strip() for l in answer.split("\n") if l.strip()]
    out = [re.sub(r"\s+", " ", l) for l in out]
    if kind == "unique":
        if len(out) != len(steps) or set(out) != steps: return "not an order of all steps"
        pos = {s: i for i, s in enumerate(out)}
        return "right" if all(pos[a] < pos[b] for a, b in edges) else "breaks a statement"
    if kind == "ambiguous":
        if len(out) != 3 or out[0] != "undecided": return "nothing reported undecided"
        a, b = out[1], out[2]
        if a == b or a not in steps or b not in steps: return "bad pair"
        return "right" if b not in reach(edges, a) and a not in reach(edges, b) else "pair is ordered"
    if len(out) < 3 or out[0] != "cycle": return "no cycle reported"
    cyc = out[1:]
    if len(set(cyc)) != len(cyc): return "repeats"
    return "right" if all((cyc[i], cyc[(i + 1) % len(cyc)]) in edges for i in range(len(cyc))) else "not a cycle"
def new_files():
    rng = random.Random(31337)
    for name, kind, n, extra in [("a", "unique", 60, 50), ("b", "ambiguous", 3000, 7000), ("c", "cycle", 3500, 9000),
                                 ("d", "unique", 5000, 12000)]:
        text, _ = instance(rng, n, extra, kind)
        if name == "a":
            text = text.replace("\n", "\r\n")
        yield name, kind, text
if sys.argv[1] == "gen":
    for name, kind, text in new_files():
        open(os.path.join(sys.argv[2], name + ".txt"), "w", newline="").write(text)
elif sys.argv[1] == "new":  # the output on stdin, judged against that file made again from the seed
    name, kind, text = next(f for f in new_files() if f[0] == sys.argv[2])
    print(verdict(text, sys.stdin.buffer.read().decode("utf-8", "replace"), kind))
else:
    print(verdict(open(sys.argv[2], encoding="utf-8", newline="").read(), open(sys.argv[3], encoding="utf-8", errors="replace").read(), sys.argv[4]))
EOF
)
py() { timeout 15 python3 -I -c "$PY" "$@" 2>/dev/null </dev/null; }
for pair in migrations:cycle platform:unique plugins:ambiguous release:unique; do
  f=${pair%%:*}
  [ -f "orders/$f.txt" ] && cp "orders/$f.txt" "$T/ws/$f.out" || exit 1
  [ "$(py verify "$T/ws/$f.txt" "$T/ws/$f.out" "${pair#*:}")" = right ] || exit 1
done
py gen "$T/new" || exit 1
for f in a b c d; do
  [ -s "$T/new/$f.txt" ] || exit 1
  out=$(timeout 10 ./order "$T/new/$f.txt" 2>/dev/null </dev/null) || exit 1
  [ "$(printf '%s' "$out" | timeout 15 python3 -I -c "$PY" new "$f" 2>/dev/null)" = right ] || exit 1
done
