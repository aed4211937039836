#!/usr/bin/env bash
# Builds the workspace: two small tables to join on the user id.
set -euo pipefail
cat > users.txt <<'T'
user_id name
u07 mina
u02 oskar
u11 lea
u03 jonas
u05 priya
T
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > orders.txt <<'T'
order_id user_id amount
1001 u02 19.99
1002 u07 5.00
1003 u02 120.50
1004 u11 7.25
1005 u07 0.75
1006 u03 42.00
1007 u11 12.10
1008 u02 3.01
T
fi
