#!/usr/bin/env bash
set -eu
curl -fsS http://127.0.0.1:18080/report.txt -o report.txt
cat report.txt
