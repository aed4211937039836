#!/usr/bin/env bash
# Index of coincidence per column picks the key length (the shortest one close to the best, since multiples of the
# length score as well); chi-squared against the sample's letter frequencies picks each key letter. Only letters
# move the key along; case, digits and punctuation pass through.
set -euo pipefail
ls intercepted
head -c 400 intercepted/msg1.txt; echo
head -c 300 sample_english.txt; echo
cat > break_vigenere <<'PY'
#!/usr/bin/env python3
"""break_vigenere FILE [SAMPLE]: print the shortest key, then the plaintext."""
import sys
from collections import Counter

A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
cipher = open(sys.argv[1]).read()
sample = open(sys.argv[2] if len(sys.argv) > 2 else "sample_english.txt").read().upper()
counts = Counter(ch for ch in sample if ch in A)
freq = [counts[ch] / sum(counts.values()) for ch in A]
letters = [ord(ch) - 65 for ch in cipher.upper() if ch in A]


def ic(col):
    n = len(col)
    return sum(v * (v - 1) for v in Counter(col).values()) / (n * (n - 1)) if n > 1 else 0


def best_shift(col):
    n = len(col)
    c = Counter(col)
    return min(range(26), key=lambda s: sum((c[(i + s) % 26] - n * freq[i]) ** 2 / (n * freq[i] + 1e-9) for i in range(26)))


scores = {L: sum(ic(letters[i::L]) for i in range(L)) / L for L in range(1, 21)}
top = max(scores.values())
length = min(L for L, v in scores.items() if v >= 0.88 * top)
key = "".join(A[best_shift(letters[i::length])] for i in range(length))
out, i = [], 0
for ch in cipher:
    if ch.isascii() and ch.isalpha():
        base = 65 if ch.isupper() else 97
        out.append(chr((ord(ch) - base - (ord(key[i % length]) - 65)) % 26 + base))
        i += 1
    else:
        out.append(ch)
print(key)
print("".join(out), end="")
PY
chmod +x break_vigenere
for f in intercepted/*.txt; do
  printf '%s %s\n' "$(basename "$f" .txt)" "$(./break_vigenere "$f" | sed -n 1p)"
done > keys.txt
cat keys.txt
./break_vigenere intercepted/msg4.txt | sed -n 1,4p
