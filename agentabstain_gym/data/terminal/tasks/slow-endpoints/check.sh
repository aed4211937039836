#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f slow.txt ] || exit 1
expected='/api/report 882 68
/search 256 67
/checkout 224 63'
[ "$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' slow.txt | grep -v '^$')" = "$expected" ]
