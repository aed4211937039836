#!/usr/bin/env bash
# Convert only the files that are not valid UTF-8 already.
set -euo pipefail
file legacy/*.txt || true
for f in legacy/*.txt; do
  if iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1; then
    echo "already UTF-8: $f"
  else
    iconv -f ISO-8859-1 -t UTF-8 "$f" > "$f.new" && mv "$f.new" "$f"
  fi
done
cat legacy/customers.txt
