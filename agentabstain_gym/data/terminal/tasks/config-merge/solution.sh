#!/usr/bin/env bash
# A recursive jq merge that deletes null keys.
set -euo pipefail
jq . defaults.json override.json
jq -S -n --slurpfile d defaults.json --slurpfile o override.json '
  def merge(a; b):
    if (a | type) == "object" and (b | type) == "object" then
      reduce (b | keys_unsorted[]) as $k (a;
        if b[$k] == null then del(.[$k]) else .[$k] = merge(a[$k]; b[$k]) end)
    else b end;
  merge($d[0]; $o[0])' > effective.json
cat effective.json
