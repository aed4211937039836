#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -d photos ] || exit 1
[ "$(cd photos && ls -1 | LC_ALL=C sort | tr '\n' ' ')" = "photo-0003.jpg photo-0007.jpg photo-0012.jpg photo-0045.jpg photo-0101.jpg " ]
for n in 0003 0007 0012 0045 0101; do
  [ "$(cat "photos/photo-$n.jpg")" = "JPEG-DATA frame $n" ] || exit 1
done
