#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f usage.txt ] || exit 1
expected=$(printf '204500\tlogs\n204500\timages\n170000\tbackups\n6095\texports\n6000\tcache\n0\tempty' | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2)
[ "$(sed 's/[[:space:]]*$//' usage.txt | grep -v '^$')" = "$expected" ]
