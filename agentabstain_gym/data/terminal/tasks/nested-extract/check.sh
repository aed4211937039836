#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f all_reports.csv ] || exit 1
expected='region,revenue
north,1200
south,950
north,1310
south,990
west,120
north,1405
south,1002
north,1520
south,1100
west,300'
[ "$(tr -d '\r' < all_reports.csv | sed 's/[[:space:]]*$//' | grep -v '^$')" = "$expected" ]
