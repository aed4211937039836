#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f status.txt ] || exit 1
expected='api up
auth down
cache down
search up
queue down'
[ "$(sed 's/[[:space:]]*$//' status.txt | grep -v '^$')" = "$expected" ]
