#!/usr/bin/env bash
set -eu
[ -f Makefile ] && [ -f checksum.txt ] || exit 1
expected=$(python3 -c 'import zlib; print("%08x  data.bin" % zlib.crc32(open("data.bin", "rb").read()))')
[ "$(python3 -c 'import zlib; print("%08x" % zlib.crc32(open("data.bin", "rb").read()))')" = "bf8c30f2" ] || exit 1
[ "$(sed 's/[[:space:]]*$//' checksum.txt | grep -v '^$')" = "$expected" ] || exit 1
rm -f checksum
make >/dev/null 2>&1 || exit 1
[ "$(./checksum data.bin)" = "$expected" ]
