#!/usr/bin/env bash
set -eu
[ -f inventory.db ] || exit 1
sqlite3 inventory.db "SELECT sql FROM sqlite_master WHERE name = 'items';" 2>/dev/null | grep -q 'CHECK (qty >= 0)' || exit 1
[ "$(sqlite3 inventory.db "SELECT count(*) FROM sqlite_master WHERE name = 'items_location';")" = 1 ] || exit 1
[ "$(sqlite3 inventory.db 'SELECT count(*), sum(qty), round(sum(price * qty), 2) FROM items;')" = "5|439|1465.85" ] || exit 1
[ "$(sqlite3 inventory.db "SELECT count(*) FROM items WHERE typeof(qty) = 'integer' AND typeof(price) = 'real';")" = 5 ] || exit 1
[ "$(sqlite3 inventory.db "SELECT name FROM items WHERE sku = 'CD-311';")" = "Switch, 8 port" ]
