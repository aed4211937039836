#!/usr/bin/env bash
# Read all three generations, drop the health checks, count by the first field.
set -euo pipefail
ls -l logs
head -n 2 logs/access.log
{ cat logs/access.log logs/access.log.1; zcat logs/access.log.2.gz; } \
  | awk '$7 != "/health" {print $1}' | LC_ALL=C sort | uniq -c \
  | awk '{print $1, $2}' | LC_ALL=C sort -k1,1nr -k2,2 | head -n 5 > top_ips.txt
cat top_ips.txt
