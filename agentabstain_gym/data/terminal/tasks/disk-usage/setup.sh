#!/usr/bin/env bash
# Builds the workspace: folders of files with fixed sizes (content is filler, sizes are the point).
set -euo pipefail
python3 - <<'PY'
import os
layout = {
    "data/images/2023/a.bin": 120000, "data/images/2023/b.bin": 80500, "data/images/c.bin": 4000,
    "data/backups/full.tar": 150000, "data/backups/old/inc1.tar": 20000,
    "data/cache/x.tmp": 999, "data/cache/y.tmp": 1, "data/cache/deep/er/z.tmp": 5000,
    "data/exports/report.csv": 6095, "data/logs/app.log": 170500, "data/logs/app.log.1": 34000,
}
for path, size in layout.items():
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(b"x" * size)
os.makedirs("data/empty", exist_ok=True)
with open("data/README", "w") as fh:
    fh.write("top-level file, not a folder\n")
PY
