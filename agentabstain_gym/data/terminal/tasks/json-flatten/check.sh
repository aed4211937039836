#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f orders.csv ] || exit 1
python3 -I - <<'PY'  # isolated: nothing in the workspace is importable
import csv, sys
rows = list(csv.reader(open("orders.csv", newline="")))
want = [["order_id", "customer", "city", "items", "total"],
        ["SO-1001", "Hallo Bakery", "Ghent", "2", "17.00"],
        ["SO-1002", "Nord, Sud & Co", "Lyon", "1", "9.90"],
        ["SO-1003", 'The "Blue" Door', "Leeds", "3", "25.35"],
        ["SO-1004", "Kiosk 24", "Graz", "0", "0.00"]]
sys.exit(0 if [r for r in rows if r] == want else 1)
PY
