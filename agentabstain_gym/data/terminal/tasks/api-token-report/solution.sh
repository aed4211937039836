#!/usr/bin/env bash
# Authenticated GET, then two jq extractions.
set -euo pipefail
token=$(tr -d ' \n' < config/api_token)
curl -fsS -H "Authorization: Bearer $token" http://127.0.0.1:18087/v1/report > report.json
jq -S '.summary' report.json > summary.json
jq -r '.regions[] | select(.growth < 0) | .name' report.json | LC_ALL=C sort > shrinking.txt
cat summary.json shrinking.txt
