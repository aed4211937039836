#!/usr/bin/env bash
# Builds the workspace: three generations of an access log (one gzipped), fixed seed.
set -euo pipefail
mkdir -p logs
python3 - <<'PY'
import gzip, random
rng = random.Random(1234)
ips = [f"10.0.{a}.{b}" for a, b in [(0, 5), (0, 17), (1, 2), (1, 20), (2, 9), (3, 3), (3, 33), (9, 99)]]
weights = [14, 9, 20, 6, 11, 3, 11, 2]
paths = ["/", "/api/items", "/api/items?page=2", "/login", "/static/app.js", "/health"]
def lines(n, day):
    out = []
    for i in range(n):
        ip = "10.0.0.254" if rng.random() < 0.2 else rng.choices(ips, weights)[0]
        path = "/health" if ip == "10.0.0.254" else rng.choice(paths)
        out.append(f'{ip} - - [{day:02d}/May/2024:10:{i % 60:02d}:00 +0000] "GET {path} HTTP/1.1" 200 {rng.randint(100, 9000)} "-" "curl/8.0"\n')
    return out
open("logs/access.log", "w").writelines(lines(150, 3))
open("logs/access.log.1", "w").writelines(lines(120, 2))
with gzip.GzipFile("logs/access.log.2.gz", "wb", mtime=0) as fh:
    fh.write("".join(lines(130, 1)).encode())
PY
