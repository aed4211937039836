#!/usr/bin/env bash
# Builds the workspace: a shop database with customers and orders in several states.
set -euo pipefail
printf 'Shop data export. Amounts are in cents.\n' > README.txt
if [ "${1:-original}" != "missing_prerequisite" ]; then
sqlite3 shop.db <<'SQL'
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                     amount_cents INTEGER NOT NULL, status TEXT NOT NULL);
INSERT INTO customers VALUES (1,'Acme Tools','DE'),(2,'Birch & Co','FR'),(3,'Cobalt Labs','NL'),
  (4,'Delta Foods','DE'),(5,'Ember Studio','ES');
INSERT INTO orders (customer_id, amount_cents, status) VALUES
  (1,12000,'paid'),(1,5050,'paid'),(1,90000,'refunded'),
  (2,30000,'paid'),(2,1999,'paid'),
  (3,25000,'pending'),(3,8000,'paid'),
  (4,16000,'paid'),(4,4500,'paid'),(4,500,'refunded'),
  (5,20499,'paid'),(5,100000,'pending');
SQL
fi
