#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f top_customers.csv ] || exit 1
expected='name,total
Birch & Co,319.99
Delta Foods,205.00
Ember Studio,204.99'
[ "$(tr -d '\r"' < top_customers.csv | sed 's/[[:space:]]*$//' | grep -v '^$')" = "$expected" ]
