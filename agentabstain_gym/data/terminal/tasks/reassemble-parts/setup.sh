#!/usr/bin/env bash
# Builds the workspace: a reproducible tar.gz of a small site, split into three parts with checksums.
set -euo pipefail
mkdir -p .src/site/img parts
python3 - <<'PY'
import random
rng = random.Random(31337)
open(".src/site/index.html", "w").write("<h1>Backup OK</h1>\n" + "".join(f"<p>row {i}</p>\n" for i in range(400)))
open(".src/site/img/logo.bin", "wb").write(bytes(rng.randrange(256) for _ in range(20000)))
open(".src/site/robots.txt", "w").write("User-agent: *\nDisallow:\n")
PY
tar -C .src --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - site | gzip -n -9 > .src/backup.tar.gz
split -b 9000 -a 2 .src/backup.tar.gz parts/backup.tar.gz.part-
(cd parts && sha256sum backup.tar.gz.part-* > SHA256SUMS)
rm -rf .src
if [ "${1:-original}" = "missing_prerequisite" ]; then rm -f parts/backup.tar.gz.part-ab; fi
