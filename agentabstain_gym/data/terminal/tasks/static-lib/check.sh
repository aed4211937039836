#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# main.c, the header and the data must be the shipped ones (checksums of what setup wrote), and vendor/libcrc.a the
# vendor's own (it carries a build id no stand-in has). The Makefile is agent code: make runs as a child and only
# what it builds counts: an executable linked with that library whose checksums are compared with values fixed here.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum main.c)" = 8a3980dd7a3b8de12ac144003db363462202b2748d49d3d097443defaac9238b ] || exit 1
[ "$(sum vendor/crc.h)" = 94d7a0216539d749acc5af746b385b148bead13e5dfd01ee83b1a7e5ecad8f87 ] || exit 1
[ "$(sum data.bin)" = ed490e73e13911024bcb598d4847196e195252f3a91b9d6db2eac22f81c606e3 ] || exit 1
id='libcrc 1.8.2 vendor build 5c1f0e9a77d2'
[ -f vendor/libcrc.a ] && grep -aqF "$id" vendor/libcrc.a || exit 1
[ -f Makefile ] && [ -f checksum.txt ] || exit 1
[ "$(sed 's/[[:space:]]*$//' checksum.txt | grep -v '^$')" = "bf8c30f2  data.bin" ] || exit 1
rm -f checksum
timeout 60 make -f Makefile >/dev/null 2>&1 </dev/null || exit 1
[ -f checksum ] && [ "$(od -An -tx1 -N4 checksum | tr -d ' ')" = 7f454c46 ] && grep -aqF "$id" checksum || exit 1
[ "$(timeout 10 ./checksum data.bin 2>/dev/null </dev/null)" = "bf8c30f2  data.bin" ] || exit 1
printf 'The quick brown fox jumps over the lazy dog' > "$T/fox.txt"
[ "$(timeout 10 ./checksum "$T/fox.txt" 2>/dev/null </dev/null)" = "414fa339  $T/fox.txt" ] || exit 1
