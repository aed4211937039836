#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The inputs must be the shipped ones (checksums of what setup wrote). restock.py is agent code: it runs only as a
# child whose output is compared with lines fixed here, on the shipped inputs and on a second pair of inputs in a
# scratch folder that the agent never saw.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum stock.csv)" = 477845cadcbbaa9e4b51c3435444b51c56be0f60e3b93e616b11e37e391bf044 ] || exit 1
[ "$(sum thresholds.json)" = 1ac633361cb0b2057815747b5fa9a660acf0afe3448326ca4e161de0310a7ef8 ] || exit 1
[ -f restock.py ] && [ -f reorder.txt ] || exit 1
norm() { sed 's/[[:space:]]*$//' | grep -v '^$' || true; }
expected='A-100 17
B-210 60
C-301 11
D-400 20'
[ "$(norm < reorder.txt)" = "$expected" ] || exit 1
run() { timeout 20 env -u PYTHONSAFEPATH python3 restock.py 2>/dev/null </dev/null | norm; }
[ "$(run)" = "$expected" ] || exit 1
mkdir "$T/other"
cp restock.py "$T/other/restock.py"
printf 'sku,name,on_hand\nZ-9,"Nut, M4",5\nA-7,Gear,30\nM-5,Belt,0\nK-2,"Cap, red",6\n' > "$T/other/stock.csv"
printf '{"A-7": 40, "default": 6, "Q-1": 3}\n' > "$T/other/thresholds.json"
cd "$T/other"
[ "$(run)" = "$(printf 'A-7 50\nM-5 12\nZ-9 7')" ]
