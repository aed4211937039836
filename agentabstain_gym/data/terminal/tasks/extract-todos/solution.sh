#!/usr/bin/env bash
# grep with line numbers, keep the text after TODO:, order by path then line.
set -eu
grep -rn --include='*.py' --include='*.js' 'TODO:' src \
  | sed -E 's/^([^:]+):([0-9]+):.*TODO:[[:space:]]*(.*[^[:space:]])[[:space:]]*$/\1:\2: \3/' \
  | LC_ALL=C sort -t: -k1,1 -k2,2n > todo.txt
wc -l todo.txt
cat todo.txt
