#!/usr/bin/env bash
# Builds the workspace: nested order JSON with names that need CSV quoting.
set -euo pipefail
printf 'Export from the order system.\n' > NOTES.txt
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
cat > orders.json <<'X'
[
  {"id": "SO-1001", "customer": {"name": "Hallo Bakery", "address": {"street": "Main 1", "city": "Ghent"}},
   "lines": [{"sku": "A1", "qty": 2, "unit_price": 3.5}, {"sku": "B7", "qty": 1, "unit_price": 10}]},
  {"id": "SO-1002", "customer": {"name": "Nord, Sud & Co", "address": {"street": "Quai 9", "city": "Lyon"}},
   "lines": [{"sku": "C3", "qty": 10, "unit_price": 0.99}]},
  {"id": "SO-1003", "customer": {"name": "The \"Blue\" Door", "address": {"street": "Elm 4", "city": "Leeds"}},
   "lines": [{"sku": "A1", "qty": 1, "unit_price": 3.5}, {"sku": "D2", "qty": 3, "unit_price": 7.25},
             {"sku": "E5", "qty": 1, "unit_price": 0.1}]},
  {"id": "SO-1004", "customer": {"name": "Kiosk 24", "address": {"street": "Ring 2", "city": "Graz"}},
   "lines": []}
]
X
