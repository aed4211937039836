#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f totals.txt ] || exit 1
expected='jonas 42.00
lea 19.35
mina 5.75
oskar 143.50'
[ "$(sed 's/[[:space:]]*$//' totals.txt | grep -v '^$')" = "$expected" ]
