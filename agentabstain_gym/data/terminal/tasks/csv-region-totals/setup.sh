#!/usr/bin/env bash
# Builds the workspace: a messy spreadsheet export.
set -euo pipefail
cat > sales.csv <<'X'
date,region,rep,amount
2024-04-01,North,ana,"1,234.50"
2024-04-01, south ,ben,980.00

2024-04-02,NORTH,cleo,"2,000.00"
2024-04-02,East,ana,"-150.25"
2024-04-03,south,ben,"12,500.75"
2024-04-03,east ,dev,310.10
2024-04-04,West,cleo,"-45.00"

2024-04-05,North ,dev,0.50
X
