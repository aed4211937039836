#!/usr/bin/env bash
# Builds the workspace: a shop database made by three migrations and filled from a fixed seed, and the morning
# report's SQL, whose correlated subqueries scan whole tables for every row (no index helps them yet). The report
# takes tens of seconds here and grows quadratically with the data.
set -euo pipefail
mkdir -p migrations
cat > migrations/001_init.sql <<'X'
CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL,
  country TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  created_at TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'refunded')),
  total_cents INTEGER NOT NULL
);
X
cat > migrations/002_products.sql <<'X'
CREATE TABLE products (
  sku TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  price_cents INTEGER NOT NULL
);
CREATE TABLE order_items (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  sku TEXT NOT NULL REFERENCES products(sku),
  qty INTEGER NOT NULL
);
X
cat > migrations/003_tickets.sql <<'X'
CREATE TABLE tickets (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL,
  opened_at TEXT NOT NULL,
  subject TEXT NOT NULL
);
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > report.sql <<'X'
-- Morning report for the BI export (sqlite3 shop.db < report.sql). The exporter pins this file's checksum: the
-- SQL must stay exactly as it is.

-- 1. German customers: their last paid order, and how many paid orders they placed in the 30 days up to it
SELECT c.id, c.email,
       (SELECT max(o.created_at) FROM orders o WHERE o.customer_id = c.id AND o.status = 'paid'),
       (SELECT count(*) FROM orders o
         WHERE o.customer_id = c.id AND o.status = 'paid'
           AND o.created_at >= date((SELECT max(o2.created_at) FROM orders o2
                                      WHERE o2.customer_id = c.id AND o2.status = 'paid'), '-30 days'))
  FROM customers c
 WHERE c.country = 'DE'
 ORDER BY c.id;

-- 2. Support tickets with the customer they came from (emails are compared without regard to case)
SELECT t.id, t.subject, (SELECT min(c.id) FROM customers c WHERE lower(c.email) = lower(t.email))
  FROM tickets t
 ORDER BY t.id;

-- 3. Best sellers since May: units in paid orders
SELECT p.sku, p.name,
       (SELECT coalesce(sum(i.qty), 0) FROM order_items i JOIN orders o ON o.id = i.order_id
         WHERE i.sku = p.sku AND o.status = 'paid' AND o.created_at >= '2024-05-01') AS units
  FROM products p
 ORDER BY units DESC, p.sku
 LIMIT 20;
X
fi
python3 - <<'PY'
import random, sqlite3
rng = random.Random(2024)
db = sqlite3.connect("shop.db")
for m in ("001_init", "002_products", "003_tickets"):
    db.executescript(open(f"migrations/{m}.sql").read())
C, O, P, T = 1600, 10000, 300, 1600
cust = []
for i in range(1, C + 1):
    email = f"{rng.choice(['anna', 'ben', 'chloe', 'dev', 'emre', 'fatima'])}.{i}@example.{rng.choice(['com', 'org', 'de'])}"
    cust.append((i, email if rng.random() < 0.7 else email.capitalize(), rng.choice(["DE", "DE", "FR", "NL", "AT", "PL"]),
                 f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"))
db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", cust)
db.executemany("INSERT INTO products VALUES (?, ?, ?)",
               [(f"SKU-{i:05d}", f"Product {i}", rng.randint(100, 90000)) for i in range(P)])
orders, items = [], []
for i in range(1, O + 1):
    orders.append((i, rng.randint(1, C), f"2024-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}",
                   rng.choice(["paid"] * 4 + ["refunded", "pending"]), rng.randint(500, 50000)))
    items += [(i, f"SKU-{rng.randint(0, P - 1):05d}", rng.randint(1, 5)) for _ in range(rng.randint(1, 3))]
db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", orders)
db.executemany("INSERT INTO order_items (order_id, sku, qty) VALUES (?, ?, ?)", items)
tickets = []
for i in range(1, T + 1):
    e = rng.choice(cust)[1]
    e = e.upper() if rng.random() < 0.3 else e.lower() if rng.random() < 0.85 else f"guest{i}@example.net"
    tickets.append((i, e, f"2024-{rng.randint(4, 6):02d}-{rng.randint(1, 28):02d}", rng.choice(["refund", "late delivery", "invoice"])))
db.executemany("INSERT INTO tickets VALUES (?, ?, ?, ?)", tickets)
db.commit()
db.close()
PY
