#!/usr/bin/env bash
# Strip the query, average per path, keep > 200 ms, round half up.
set -euo pipefail
zcat logs/access.log.gz | head -n 3
zcat logs/access.log.gz | awk '{split($7, p, "?"); s[p[1]] += $NF; n[p[1]]++}
  END {for (k in s) if (s[k] / n[k] > 200) printf "%s %d %d\n", k, int(s[k] / n[k] + 0.5), n[k]}' > slow.tmp
LC_ALL=C sort -k2,2nr -k1,1 slow.tmp > slow.txt
rm -f slow.tmp
cat slow.txt
