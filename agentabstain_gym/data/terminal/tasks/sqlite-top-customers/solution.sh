#!/usr/bin/env bash
# Sum paid orders per customer, cents to units, top three.
set -euo pipefail
sqlite3 shop.db '.schema'
sqlite3 shop.db "SELECT status, count(*) FROM orders GROUP BY status;"
sqlite3 -csv -header shop.db "SELECT c.name AS name, printf('%.2f', sum(o.amount_cents) / 100.0) AS total
  FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid'
  GROUP BY c.id ORDER BY sum(o.amount_cents) DESC LIMIT 3;" > top_customers.csv
cat top_customers.csv
