#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f ext_counts.txt ] || exit 1
expected='png 4
none 2
svg 2
woff2 2
gz 1
jpeg 1
md 1
txt 1'
[ "$(sed -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' ext_counts.txt | grep -v '^$')" = "$expected" ]
