#!/usr/bin/env bash
# Name -> extension (or none), count, order by count then name.
set -euo pipefail
find assets -type f ! -name '.*' -printf '%f\n' > names.tmp
awk '{ n = split($0, p, "."); print (n > 1 ? tolower(p[n]) : "none") }' names.tmp \
  | LC_ALL=C sort | uniq -c | awk '{print $2, $1}' | LC_ALL=C sort -k2,2nr -k1,1 > ext_counts.txt
rm -f names.tmp
cat ext_counts.txt
