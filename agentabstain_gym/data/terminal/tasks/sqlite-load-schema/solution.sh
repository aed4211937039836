#!/usr/bin/env bash
# Apply the schema, then import into the typed table (the declared affinities convert the numbers).
set -euo pipefail
cat schema.sql
sqlite3 inventory.db < schema.sql
sqlite3 inventory.db <<'SQL'
.mode csv
.import --skip 1 items.csv items
SQL
sqlite3 inventory.db 'SELECT sku, typeof(qty), typeof(price) FROM items;'
