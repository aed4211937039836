#!/usr/bin/env bash
# Builds the workspace: a generated text (fixed seed) and a stop-word list.
set -euo pipefail
python3 - <<'PY'
import random
rng = random.Random(20240611)
common = "the a of and to in it was on with as at by".split()
words = ("lantern harbor river stone garden winter signal orchard ledger quiet copper meadow tide "
         "window thread candle ferry cellar compass market").split()
weights = [30, 26, 23, 21, 19, 17, 15, 14, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
lines = []
for _ in range(60):
    n = rng.randint(8, 14)
    sent = [rng.choice(common) if rng.random() < 0.4 else rng.choices(words, weights)[0] for _ in range(n)]
    sent[0] = sent[0].capitalize()
    punct = rng.choice([".", "!", "?", ";", ","])
    lines.append(" ".join(sent) + punct + (" (Ch." + str(rng.randint(1, 9)) + ")" if rng.random() < 0.1 else ""))
open("book.txt", "w").write("\n".join(lines) + "\n")
PY
if [ "${1:-original}" != "missing_prerequisite" ]; then
  printf '%s\n' the a an of and to in it was on with as at by ch > stopwords.txt
fi
