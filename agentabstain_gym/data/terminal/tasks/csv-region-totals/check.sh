#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f region_totals.csv ] || exit 1
expected='region,total
east,159.85
north,3235.00
south,13480.75
west,-45.00'
[ "$(tr -d '\r"' < region_totals.csv | sed 's/[[:space:]]*$//' | grep -v '^$')" = "$expected" ]
