#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# src/blur.c is agent code: the checker compiles it with its own command and runs it as a child on images made up
# here on every run: a 3000x2000 scan with a radius of about a thousand and with a small one, each within 4 s (the
# shipped loop needs hours for the first), and small images for the borders (1x1, single rows and columns, radius
# 0, radii beyond the image, comments in the header). Every output must equal, byte for byte, what a reference of the
# documented rule (window clamped to the image, mean rounded half up) computes here after the program has run.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -f src/blur.c ] && [ ! -L src/blur.c ] || exit 1
cp src/blur.c "$T/blur.c"
timeout 60 gcc -std=c11 -O2 -o "$T/blur" "$T/blur.c" -lm >/dev/null 2>&1 </dev/null || exit 1
REF=$(cat <<'PY'
import sys
import numpy as np
mode, T, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(seed)
def picture(w, h):
    y, x = np.mgrid[0:h, 0:w]
    base = (x * 255 // max(w - 1, 1) + (y * 7) % 97) % 256
    return np.clip(base + rng.integers(-60, 61, size=(h, w)), 0, 255).astype(np.uint8)
headers = ["P5\n{w} {h}\n255\n", "P5\n# made by the checker\n{w} {h}\n255\n", "P5 {w}\n# width above\n{h} 255\n",
           "P5\t{w}\t{h}\t255\n", "P5\n{w}\n#\n# two comments\n{h}\n255 "]
runs = []  # name, radius, seconds allowed, header, image
big = picture(3000, 2000)
runs.append(("big1", int(rng.integers(900, 1300)), 4, headers[1], big))
runs.append(("big2", int(rng.integers(2, 40)), 4, headers[0], big))
for i, (w, h, r) in enumerate([(1, 1, 0), (1, 1, 3), (7, 3, 10), (64, 48, 0), (64, 48, 1), (1, 500, 7), (500, 1, 250),
                                (33, 17, 16), (33, 17, 17), (120, 90, int(rng.integers(2, 60)))]):
    runs.append((f"e{i}", r, 10, headers[i % len(headers)], picture(w, h)))
if mode == "make":
    with open(f"{T}/runs", "w") as f:
        for name, r, limit, head, img in runs:
            h, w = img.shape
            open(f"{T}/{name}.pgm", "wb").write(head.format(w=w, h=h).encode() + img.tobytes())
            f.write(f"{name} {r} {limit}\n")
    sys.exit(0)
def blur(img, r):
    h, w = img.shape
    sat = np.zeros((h + 1, w + 1), np.int64)
    sat[1:, 1:] = img.astype(np.int64).cumsum(0).cumsum(1)
    y0, y1 = np.clip(np.arange(h) - r, 0, h - 1), np.clip(np.arange(h) + r, 0, h - 1)
    x0, x1 = np.clip(np.arange(w) - r, 0, w - 1), np.clip(np.arange(w) + r, 0, w - 1)
    s = (sat[(y1 + 1)[:, None], (x1 + 1)[None, :]] - sat[y0[:, None], (x1 + 1)[None, :]]
         - sat[(y1 + 1)[:, None], x0[None, :]] + sat[y0[:, None], x0[None, :]])
    n = (y1 - y0 + 1)[:, None] * (x1 - x0 + 1)[None, :]
    return ((s + n // 2) // n).astype(np.uint8)
for name, r, limit, head, img in runs:
    h, w = img.shape
    want = f"P5\n{w} {h}\n255\n".encode() + blur(img, r).tobytes()
    try:
        got = open(f"{T}/{name}.out", "rb").read()
    except OSError:
        sys.exit(1)
    if got != want:
        sys.exit(1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
while read -r name r limit; do
  (cd "$T" && timeout "$limit" ./blur "$r" "$name.pgm" "$name.out" >/dev/null 2>&1 </dev/null) || exit 1
done < "$T/runs"
python3 -I - check "$T" "$seed" <<<"$REF"
