#!/usr/bin/env bash
# Unzip, list the inner tarball, extract, concatenate the four quarters.
set -euo pipefail
mkdir -p unpacked
unzip -o -q bundle.zip -d unpacked
tar tJf unpacked/reports.tar.xz
tar xJf unpacked/reports.tar.xz -C unpacked
head -n 1 unpacked/reports/2024-Q1.csv > all_reports.csv
for q in 1 2 3 4; do tail -n +2 "unpacked/reports/2024-Q$q.csv" >> all_reports.csv; done
cat all_reports.csv
