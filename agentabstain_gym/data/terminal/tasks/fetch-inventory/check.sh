#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f low_stock.csv ] || exit 1
expected='sku,stock
D-123,1
F-002,2
G-606,4
K-104,3
M-310,0
Z-900,4'
[ "$(tr -d '\r"' < low_stock.csv | sed 's/[[:space:]]*$//' | grep -v '^$')" = "$expected" ]
