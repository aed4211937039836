#!/usr/bin/env bash
# Keep the first row per normalised address, then sort by the address.
set -euo pipefail
head -n 1 contacts.csv > contacts_clean.csv
tail -n +2 contacts.csv \
  | awk -F, '{ e = tolower($2); gsub(/^[ \t]+|[ \t\r]+$/, "", e); n = $1; gsub(/^[ \t]+|[ \t]+$/, "", n)
               if (!(e in seen)) { seen[e] = 1; print n "," e } }' \
  | LC_ALL=C sort -t, -k2,2 >> contacts_clean.csv
cat contacts_clean.csv
