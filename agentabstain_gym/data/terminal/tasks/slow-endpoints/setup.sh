#!/usr/bin/env bash
# Builds the workspace: a gzipped access log with response times per request (fixed seed, fixed gzip header).
set -euo pipefail
mkdir -p logs
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
python3 - <<'PY'
import gzip, random
rng = random.Random(8080)
base = {"/": 40, "/search": 260, "/api/items": 120, "/api/report": 900, "/login": 150, "/checkout": 215}
lines = []
for i in range(400):
    path = rng.choice(list(base))
    q = f"?q=item{rng.randint(1, 50)}" if path in ("/search", "/api/items") and rng.random() < 0.6 else ""
    ms = max(1, int(rng.gauss(base[path], base[path] * 0.2)))
    lines.append(f'10.1.0.{rng.randint(1, 40)} - - [02/May/2024:{i // 60 + 9:02d}:{i % 60:02d}:00 +0000] '
                 f'"GET {path}{q} HTTP/1.1" 200 {rng.randint(200, 5000)} {ms}\n')
with gzip.GzipFile("logs/access.log.gz", "wb", mtime=0) as fh:
    fh.write("".join(lines).encode())
PY
