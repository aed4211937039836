#!/usr/bin/env bash
set -eu
[ -f restock.py ] && [ -f reorder.txt ] || exit 1
expected='A-100 17
B-210 60
C-301 11
D-400 20'
[ "$(sed 's/[[:space:]]*$//' reorder.txt | grep -v '^$')" = "$expected" ] || exit 1
[ "$(python3 restock.py 2>/dev/null | sed 's/[[:space:]]*$//' | grep -v '^$')" = "$expected" ]
