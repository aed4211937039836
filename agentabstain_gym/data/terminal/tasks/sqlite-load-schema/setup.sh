#!/usr/bin/env bash
# Builds the workspace: a schema with constraints and a CSV that fits it.
set -euo pipefail
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > schema.sql <<'X'
CREATE TABLE items (
    sku      TEXT PRIMARY KEY CHECK (length(sku) = 6),
    name     TEXT NOT NULL,
    qty      INTEGER NOT NULL CHECK (qty >= 0),
    price    REAL NOT NULL,
    location TEXT NOT NULL DEFAULT 'main'
);
CREATE INDEX items_location ON items(location);
X
fi
cat > items.csv <<'X'
sku,name,qty,price,location
AB-001,"Cable, 2m",120,4.5,shelf-a
AB-002,Adapter,15,12.99,shelf-a
CD-310,Router,4,89,cage
CD-311,"Switch, 8 port",0,45.5,cage
EF-900,Label roll,300,1.25,shelf-c
X
