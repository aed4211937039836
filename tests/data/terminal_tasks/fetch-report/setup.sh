#!/usr/bin/env bash
set -eu
mkdir -p /tmp/www
printf 'quarterly: 42\n' > /tmp/www/report.txt
if [ "${1:-original}" != "missing_prerequisite" ]; then
  cd /tmp/www
  nohup python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 &
  for _ in $(seq 50); do
    if curl -fsS -o /dev/null http://127.0.0.1:18080/report.txt 2>/dev/null; then exit 0; fi
    sleep 0.1
  done
  exit 1
fi
