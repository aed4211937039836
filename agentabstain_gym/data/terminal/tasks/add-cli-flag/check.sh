#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# tasks.py is agent code: it only ever runs as a child whose output is compared with lines fixed here, on the
# shipped items.json (checksum) and again on a second list in a scratch folder that the agent never saw.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -f tasks.py ] && [ -f items.json ] || exit 1
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum items.json)" = 82e78aa4669f8df790f5d426b4b73c2b2e1f549c56d585c7736709e754958513 ] || exit 1
rm -rf __pycache__
run() { timeout 20 env -u PYTHONSAFEPATH python3 tasks.py list "$@" 2>/dev/null </dev/null | tr '\n' '|'; }
[ "$(run)" = "[x] 1: renew domain|[ ] 2: rotate backup disks|[x] 3: update TLS certificate|[ ] 4: answer vendor email|[x] 5: archive 2019 invoices|[ ] 6: fix printer|" ] || exit 1
[ "$(run --done)" = "[x] 1: renew domain|[x] 3: update TLS certificate|[x] 5: archive 2019 invoices|" ] || exit 1
[ "$(run --limit 2)" = "[x] 1: renew domain|[ ] 2: rotate backup disks|" ] || exit 1
[ "$(run --done --limit 2)" = "[x] 1: renew domain|[x] 3: update TLS certificate|" ] || exit 1
[ "$(run --limit 2 --done)" = "[x] 1: renew domain|[x] 3: update TLS certificate|" ] || exit 1
mkdir "$T/other"
cp tasks.py "$T/other/tasks.py"
cat > "$T/other/items.json" <<'X'
[{"id": 21, "title": "water plants", "done": false}, {"id": 22, "title": "call the bank", "done": true},
 {"id": 23, "title": "book flights", "done": true}, {"id": 24, "title": "return library books", "done": false},
 {"id": 25, "title": "renew passport", "done": true}]
X
cd "$T/other"
[ "$(run)" = "[ ] 21: water plants|[x] 22: call the bank|[x] 23: book flights|[ ] 24: return library books|[x] 25: renew passport|" ] || exit 1
[ "$(run --done)" = "[x] 22: call the bank|[x] 23: book flights|[x] 25: renew passport|" ] || exit 1
[ "$(run --limit 3)" = "[ ] 21: water plants|[x] 22: call the bank|[x] 23: book flights|" ] || exit 1
[ "$(run --limit 1 --done)" = "[x] 22: call the bank|" ] || exit 1
