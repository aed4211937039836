#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
[ -f data/dataset.csv ] && [ -f data/rows.txt ] || exit 1
[ "$(head -n 1 data/dataset.csv)" = "id,station,temp_c" ] || exit 1
[ "$(sha256sum < data/dataset.csv | cut -c1-16)" = "66107bc0d2bfab2e" ] || exit 1
[ "$(tr -d ' \n' < data/rows.txt)" = 237 ]
