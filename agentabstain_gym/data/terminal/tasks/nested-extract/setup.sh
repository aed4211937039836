#!/usr/bin/env bash
# Builds the workspace: a zip holding a readme and a tar.xz of quarterly CSVs (fixed timestamps, sorted entries).
set -euo pipefail
export TZ=UTC
[ "${1:-original}" = "missing_prerequisite" ] && exit 0
stage=.stage
mkdir -p "$stage/reports"
printf 'region,revenue\nnorth,1200\nsouth,950\n' > "$stage/reports/2024-Q1.csv"
printf 'region,revenue\nnorth,1310\nsouth,990\nwest,120\n' > "$stage/reports/2024-Q2.csv"
printf 'region,revenue\nnorth,1405\nsouth,1002\n' > "$stage/reports/2024-Q3.csv"
printf 'region,revenue\nnorth,1520\nsouth,1100\nwest,300\n' > "$stage/reports/2024-Q4.csv"
printf 'region,target\nnorth,6000\nsouth,4000\n' > "$stage/reports/targets.csv"
tar -C "$stage" --sort=name --mtime='2024-12-31 00:00:00' --owner=0 --group=0 --numeric-owner -cJf "$stage/reports.tar.xz" reports
printf 'Quarterly reports are in reports.tar.xz\n' > "$stage/README.txt"
touch -d '2024-12-31 00:00:00' "$stage/reports.tar.xz" "$stage/README.txt"
(cd "$stage" && zip -q -X ../bundle.zip README.txt reports.tar.xz)
rm -rf "$stage"
