#!/usr/bin/env bash
# One curl per service with a timeout; only a 200 counts as up.
set -uo pipefail
cat services.txt
: > status.txt
while read -r name port; do
  code=$(curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:$port/health")
  if [ "$code" = 200 ]; then echo "$name up"; else echo "$name down"; fi >> status.txt
done < services.txt
cat status.txt
