#!/usr/bin/env bash
# Builds the workspace: a stock table and per-sku minimums with a default.
set -euo pipefail
cat > stock.csv <<'X'
sku,name,on_hand
B-210,"Bolts, M6",40
A-100,Hinge,3
C-330,Washer,120
A-105,"Hinge, large",12
D-400,Bracket,0
C-301,Spring,9
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > thresholds.json <<'X'
{"default": 10, "B-210": 50, "C-330": 100, "A-105": 8}
X
fi
