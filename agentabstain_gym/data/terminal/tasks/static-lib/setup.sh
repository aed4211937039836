#!/usr/bin/env bash
# Builds the workspace: a program, a vendored header and a prebuilt static library (its source is not shipped).
set -euo pipefail
mkdir -p vendor
cat > vendor/crc.h <<'X'
#ifndef CRC_H
#define CRC_H
#include <stddef.h>
#include <stdint.h>
uint32_t crc32_update(uint32_t crc, const unsigned char *buf, size_t len);
#endif
X
cat > main.c <<'X'
#include <stdio.h>
#include "crc.h"

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: checksum FILE\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    unsigned char buf[4096];
    size_t n;
    uint32_t crc = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) crc = crc32_update(crc, buf, n);
    fclose(f);
    printf("%08x  %s\n", crc, argv[1]);
    return 0;
}
X
python3 -c 'import random; r = random.Random(99); open("data.bin", "wb").write(bytes(r.randrange(256) for _ in range(5000)))'
if [ "${1:-original}" != "missing_prerequisite" ]; then
  cat > vendor/crc_impl.c <<'X'
#include "crc.h"
const char libcrc_build_id[] = "libcrc 1.8.2 vendor build 5c1f0e9a77d2";
uint32_t crc32_update(uint32_t crc, const unsigned char *buf, size_t len) {
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= buf[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1u));
    }
    return ~crc;
}
X
  gcc -O2 -c -Ivendor -o vendor/crc_impl.o vendor/crc_impl.c
  ar rcsD vendor/libcrc.a vendor/crc_impl.o
  rm -f vendor/crc_impl.c vendor/crc_impl.o
fi
