#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
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
