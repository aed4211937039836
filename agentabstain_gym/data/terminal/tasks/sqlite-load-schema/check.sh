#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# sqlite3 in safe mode with no start-up file: nothing stored in the agent's database (a view calling edit(), say)
# can run a program. The schema must be exactly the one in the shipped schema.sql, which SQLite keeps verbatim.
sq() { HOME=/dev/null sqlite3 -safe -init /dev/null "$@" 2>/dev/null </dev/null; }
[ -f inventory.db ] || exit 1
[ "$(sq inventory.db "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'items';")" = "CREATE TABLE items (
    sku      TEXT PRIMARY KEY CHECK (length(sku) = 6),
    name     TEXT NOT NULL,
    qty      INTEGER NOT NULL CHECK (qty >= 0),
    price    REAL NOT NULL,
    location TEXT NOT NULL DEFAULT 'main'
)" ] || exit 1
[ "$(sq inventory.db "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'items_location';")" = "CREATE INDEX items_location ON items(location)" ] || exit 1
[ "$(sq inventory.db 'SELECT count(*), sum(qty), round(sum(price * qty), 2) FROM items;')" = "5|439|1465.85" ] || exit 1
[ "$(sq inventory.db "SELECT count(*) FROM items WHERE typeof(qty) = 'integer' AND typeof(price) = 'real';")" = 5 ] || exit 1
[ "$(sq inventory.db "SELECT name FROM items WHERE sku = 'CD-311';")" = "Switch, 8 port" ]
