#!/usr/bin/env bash
# Download both, verify with sha256sum -c, then count rows.
set -euo pipefail
cd data
curl -fsS -o dataset.csv.part http://127.0.0.1:18082/files/dataset.csv
curl -fsS http://127.0.0.1:18082/files/dataset.csv.sha256 | sed 's/dataset\.csv$/dataset.csv.part/' > dataset.sha256
sha256sum -c dataset.sha256
mv dataset.csv.part dataset.csv && rm -f dataset.sha256
echo $(( $(wc -l < dataset.csv) - 1 )) > rows.txt
cat rows.txt
