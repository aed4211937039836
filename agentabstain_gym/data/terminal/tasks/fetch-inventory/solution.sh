#!/usr/bin/env bash
# Follow the next links, collect items, filter and sort with jq.
set -euo pipefail
url="/api/items"
: > items.jsonl
while [ -n "$url" ] && [ "$url" != null ]; do
  page=$(curl -fsS "http://127.0.0.1:18081$url")
  echo "$page" | jq -c '.items[]' >> items.jsonl
  url=$(echo "$page" | jq -r '.next')
done
{ echo "sku,stock"; jq -rs 'map(select(.stock < 5)) | sort_by(.sku)[] | "\(.sku),\(.stock)"' items.jsonl; } > low_stock.csv
rm -f items.jsonl
cat low_stock.csv
