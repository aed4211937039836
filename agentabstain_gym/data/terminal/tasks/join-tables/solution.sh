#!/usr/bin/env bash
# Sort both tables on the user id, join, then sum per name.
set -euo pipefail
tail -n +2 users.txt | LC_ALL=C sort -k1,1 > users.sorted
tail -n +2 orders.txt | awk '{print $2, $3}' | LC_ALL=C sort -k1,1 > orders.sorted
LC_ALL=C join users.sorted orders.sorted | awk '{s[$2] += $3} END {for (n in s) printf "%s %.2f\n", n, s[n]}' | LC_ALL=C sort > totals.txt
rm -f users.sorted orders.sorted
cat totals.txt
