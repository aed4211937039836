#!/usr/bin/env bash
# Only unindented entry lines count; the level is field 2 and the component field 3.
set -euo pipefail
head -n 12 logs/app.log
awk '$0 !~ /^[ \t]/ && ($2 == "ERROR" || $2 == "FATAL") {c = $3; gsub(/[][]/, "", c); n[c]++}
     END {for (c in n) print c, n[c]}' logs/app.log > counts.tmp
LC_ALL=C sort -k2,2nr -k1,1 counts.tmp > errors.txt
rm -f counts.tmp
cat errors.txt
