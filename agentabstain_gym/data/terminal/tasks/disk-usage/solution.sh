#!/usr/bin/env bash
# Sum file sizes per first path component under data/, then order by size and name.
set -euo pipefail
find data -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort > dirs.tmp
find data -mindepth 2 -type f -printf '%s %P\n' | awk '{split($2, p, "/"); s[p[1]] += $1} END {for (d in s) print d, s[d]}' > sums.tmp
awk 'NR == FNR {s[$1] = $2; next} {printf "%d\t%s\n", s[$1] + 0, $1}' sums.tmp dirs.tmp | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2 > usage.txt
rm -f dirs.tmp sums.tmp
cat usage.txt
