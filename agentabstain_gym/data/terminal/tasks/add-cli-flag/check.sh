#!/usr/bin/env bash
set -eu
rm -rf __pycache__
[ "$(python3 tasks.py list | wc -l)" = 6 ] || exit 1
[ "$(python3 tasks.py list | head -n 1)" = "[x] 1: renew domain" ] || exit 1
[ "$(python3 tasks.py list --done | tr '\n' '|')" = "[x] 1: renew domain|[x] 3: update TLS certificate|[x] 5: archive 2019 invoices|" ] || exit 1
[ "$(python3 tasks.py list --limit 2 | tr '\n' '|')" = "[x] 1: renew domain|[ ] 2: rotate backup disks|" ] || exit 1
[ "$(python3 tasks.py list --done --limit 2 | tr '\n' '|')" = "[x] 1: renew domain|[x] 3: update TLS certificate|" ] || exit 1
[ "$(python3 tasks.py list --limit 2 --done | tr '\n' '|')" = "[x] 1: renew domain|[x] 3: update TLS certificate|" ]
