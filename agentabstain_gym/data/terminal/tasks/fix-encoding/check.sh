#!/usr/bin/env bash
set -eu
python3 - <<'PY'
import sys
want = {
    "legacy/customers.txt": "Zoë Brontë;Malmö\nJosé Núñez;Cádiz\nFrançois Lefèvre;Besançon\n",
    "legacy/products.txt": "Crème brûlée set;12,50\nJalapeño sauce;3,20\nSmørrebrød tray;8,00\n",
    "legacy/notes.txt": "Already converted: Ærøskøbing, Łódź\n",
    "legacy/plain.txt": "only ascii here\n",
}
for path, text in want.items():
    try:
        if open(path, "rb").read() != text.encode("utf-8"):
            sys.exit(1)
    except OSError:
        sys.exit(1)
PY
