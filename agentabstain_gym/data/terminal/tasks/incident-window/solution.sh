#!/usr/bin/env bash
# Filter each file by timestamp string comparison, prefix, then stable-merge by time.
set -euo pipefail
ls logs
for f in api.log db.log worker.log; do
  awk -v f="$f" '{ts = $1 " " $2} ts >= "2024-05-01 10:15:00" && ts <= "2024-05-01 10:20:00" {print ts "\t" f ":" $0}' "logs/$f"
done > window.tmp
LC_ALL=C sort -s -t "$(printf '\t')" -k1,1 window.tmp | cut -f2- > incident.log
rm -f window.tmp
wc -l incident.log
