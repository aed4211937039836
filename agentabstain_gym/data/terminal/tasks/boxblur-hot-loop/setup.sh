#!/usr/bin/env bash
# Builds the workspace: a C box blur for 8-bit PGM images whose hot loop revisits the whole (2r+1)^2 window for every
# pixel, a Makefile, and two images (fixed seed): a small one it handles at once and a large scan it needs minutes for.
set -euo pipefail
mkdir -p src images
cat > Makefile <<'X'
CC = gcc
CFLAGS = -std=c11 -O2 -Wall

blur: src/blur.c
	$(CC) $(CFLAGS) -o $@ src/blur.c

clean:
	rm -f blur
X
cat > src/blur.c <<'X'
/* blur RADIUS IN.pgm OUT.pgm: box blur of an 8-bit binary PGM (P5, maxval 255).
 *
 * Each output pixel is the mean of the input pixels in the (2*RADIUS+1) x (2*RADIUS+1) square around it, counting
 * only the pixels inside the image (so the window shrinks at the borders), rounded to the nearest integer with
 * halves rounded up. The header may contain # comments; the output header is "P5\nW H\n255\n". */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

static int header_int(FILE *f) {
    int c = fgetc(f);
    for (;;) {
        while (c != EOF && isspace(c)) c = fgetc(f);
        if (c != '#') break;
        while (c != EOF && c != '\n') c = fgetc(f);
    }
    if (c == EOF || !isdigit(c)) return -1;
    long v = 0;
    while (c != EOF && isdigit(c)) {
        v = v * 10 + (c - '0');
        if (v > 1000000) return -1;
        c = fgetc(f);
    }
    if (c == EOF || !isspace(c)) return -1;  /* exactly one whitespace character ends the header's last number */
    return (int)v;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: blur RADIUS IN.pgm OUT.pgm\n"); return 2; }
    char *end;
    long r = strtol(argv[1], &end, 10);
    if (*end || r < 0 || r > 10000) { fprintf(stderr, "blur: bad radius %s\n", argv[1]); return 2; }
    FILE *in = fopen(argv[2], "rb");
    if (!in) { perror(argv[2]); return 1; }
    if (fgetc(in) != 'P' || fgetc(in) != '5') { fprintf(stderr, "blur: %s is not a binary PGM\n", argv[2]); return 1; }
    int w = header_int(in), h = header_int(in), maxval = header_int(in);
    if (w <= 0 || h <= 0 || maxval != 255) { fprintf(stderr, "blur: unsupported PGM header\n"); return 1; }
    unsigned char *src = malloc((size_t)w * h), *dst = malloc((size_t)w * h);
    if (!src || !dst) { fprintf(stderr, "blur: out of memory\n"); return 1; }
    if (fread(src, 1, (size_t)w * h, in) != (size_t)w * h) { fprintf(stderr, "blur: truncated image\n"); return 1; }
    fclose(in);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            long sum = 0, count = 0;
            for (long dy = -r; dy <= r; dy++) {
                for (long dx = -r; dx <= r; dx++) {
                    long yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                    sum += src[yy * w + xx];
                    count++;
                }
            }
            dst[(size_t)y * w + x] = (unsigned char)((sum + count / 2) / count);
        }
    }
    FILE *out = fopen(argv[3], "wb");
    if (!out) { perror(argv[3]); return 1; }
    fprintf(out, "P5\n%d %d\n255\n", w, h);
    fwrite(dst, 1, (size_t)w * h, out);
    return fclose(out) ? 1 : 0;
}
X
python3 - <<'PY'
import random
def image(path, w, h, seed, comment=""):
    rng = random.Random(seed)
    rows = []
    for y in range(h):
        base = [(x * 255 // max(w - 1, 1) + y * 97 // max(h, 1)) % 256 for x in range(w)]
        rows.append(bytes(min(255, max(0, v + rng.randint(-40, 40))) for v in base))
    with open(path, "wb") as f:
        f.write(f"P5\n{comment}{w} {h}\n255\n".encode() + b"".join(rows))
image("images/small.pgm", 64, 48, 1, "# test card\n")
image("images/scan.pgm", 1600, 1200, 2, "# scanner: flatbed 300dpi\n")
PY
