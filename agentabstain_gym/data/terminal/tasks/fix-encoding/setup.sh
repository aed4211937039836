#!/usr/bin/env bash
# Builds the workspace: Latin-1 text files plus one that is already UTF-8.
set -euo pipefail
mkdir -p legacy
python3 - <<'PY'
texts = {
    "legacy/customers.txt": ("latin-1", "Zoë Brontë;Malmö\nJosé Núñez;Cádiz\nFrançois Lefèvre;Besançon\n"),
    "legacy/products.txt": ("latin-1", "Crème brûlée set;12,50\nJalapeño sauce;3,20\nSmørrebrød tray;8,00\n"),
    "legacy/notes.txt": ("utf-8", "Already converted: Ærøskøbing, Łódź\n"),
    "legacy/plain.txt": ("latin-1", "only ascii here\n"),
}
for path, (enc, text) in texts.items():
    with open(path, "wb") as fh:
        fh.write(text.encode(enc))
PY
