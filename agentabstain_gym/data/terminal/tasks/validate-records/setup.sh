#!/usr/bin/env bash
# Builds the workspace: customer records, some broken in different ways, and the schema they must follow.
set -euo pipefail
mkdir -p records
if [ "${1:-original}" != "missing_prerequisite" ]; then
  echo '{"required": {"id": "integer", "email": "string", "age": "integer", "tags": "array", "active": "boolean"}}' > schema.json
fi
w() { printf '%s\n' "$2" > "records/$1"; }
w c001.json '{"id": 1, "email": "a@example.com", "age": 31, "tags": ["vip"], "active": true}'
w c002.json '{"id": 2, "email": "b@example.com", "age": "31", "tags": [], "active": true}'
w c003.json '{"id": 3, "email": "c@example.com", "age": 40, "tags": [], "active": false, "note": "extra is fine"}'
w c004.json '{"id": 4, "email": "d@example.com", "tags": [], "active": true}'
w c005.json '{"id": 5, "email": "e@example.com", "age": 22, "tags": [], "active": true'
w c006.json '{"id": 6.5, "email": "f@example.com", "age": 22, "tags": [], "active": true}'
w c007.json '{"id": 7, "email": null, "age": 50, "tags": ["x"], "active": true}'
w c008.json '{"id": 8, "email": "h@example.com", "age": 29, "tags": "vip", "active": "yes"}'
w c009.json '{"id": 9, "email": "i@example.com", "age": 64, "tags": ["a", "b"], "active": false}'
w c010.json '[{"id": 10}]'
