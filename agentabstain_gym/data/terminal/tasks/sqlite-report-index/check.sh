#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# report.sql and the first three migrations must be the shipped ones (checksums of what setup wrote), and shop.db
# must hold the shipped tables and rows, with the indexes of migrations/004_report_indexes.sql applied. The
# migration is agent code: it runs (sqlite3 -safe) on a database six times the size of shop.db, made up here on
# every run, which must then keep its tables and rows (no views or triggers); report.sql must then finish on it within
# 5 s (without indexes it needs minutes) and print what it prints on a copy indexed by the checker itself.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
while read -r want f; do [ "$(sum "$f")" = "$want" ] || exit 1; done <<'X'
153f516f400b172385a0b17c83db49911f808a647fdc82e881d3254890d8bde0 report.sql
c0dd5a7d30c0e0703fd38d2908747daa9264e0b747c8b7759c9e3b187e35fb9f migrations/001_init.sql
e2617f2e5c3b6fd75a7c8798581ebb347651b50ddac3ecd44cb349e98cbd6803 migrations/002_products.sql
92375899aa2d62ea55ce47731b20406c782d7b21dfef6605fdf2f4d0358c4e9c migrations/003_tickets.sql
X
M=migrations/004_report_indexes.sql
[ -f "$M" ] && [ -f shop.db ] && [ ! -L shop.db ] || exit 1
cp shop.db "$T/shop.db"
REF=$(cat <<'PY'
import hashlib, random, sqlite3, sys
mode, T = sys.argv[1], sys.argv[2]
TABLES = ("customers", "orders", "products", "order_items", "tickets")
def digest(db, t):
    h = hashlib.sha256()
    for row in db.execute(f"SELECT * FROM {t} ORDER BY rowid"):
        h.update(repr(row).encode())
    return h.hexdigest()
def shape(db):  # tables and their SQL; views and triggers are not allowed
    rows = db.execute("SELECT type, name, sql FROM sqlite_master WHERE type != 'index' AND name NOT LIKE 'sqlite_stat%'")
    return sorted(rows)
def indexes(db):
    return set(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"))
if mode == "make":
    rng = random.Random(int(sys.argv[3]))
    db = sqlite3.connect(f"{T}/big.db")
    for m in ("001_init", "002_products", "003_tickets"):
        db.executescript(open(f"migrations/{m}.sql").read())
    C, O, P, N = 10000, 64000, 2400, 10000
    cust = []
    for i in range(1, C + 1):
        email = f"{rng.choice(['ana', 'bo', 'cy', 'di'])}{rng.randint(1, 99)}.{i}@example.{rng.choice(['com', 'org', 'de'])}"
        cust.append((i, email if rng.random() < 0.6 else email.title(), rng.choice(["DE", "DE", "FR", "NL", "AT"]),
                     f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"))
    db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", cust)
    db.executemany("INSERT INTO products VALUES (?, ?, ?)", [(f"SKU-{i:05d}", f"Item {i}", rng.randint(100, 9000)) for i in range(P)])
    orders, items = [], []
    for i in range(1, O + 1):
        orders.append((i, rng.randint(1, C), f"2024-{rng.randint(1, 7):02d}-{rng.randint(1, 28):02d}",
                       rng.choice(["paid", "paid", "paid", "refunded", "pending"]), rng.randint(100, 90000)))
        items += [(i, f"SKU-{rng.randint(0, P - 1):05d}", rng.randint(1, 9)) for _ in range(rng.randint(1, 3))]
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", orders)
    db.executemany("INSERT INTO order_items (order_id, sku, qty) VALUES (?, ?, ?)", items)
    tickets = []
    for i in range(1, N + 1):
        e = rng.choice(cust)[1]
        e = rng.choice([e, e.upper(), e.lower(), e.swapcase(), f"nobody{i}@example.net"])
        tickets.append((i, e, f"2024-0{rng.randint(4, 7)}-{rng.randint(1, 28):02d}", rng.choice(["refund", "delay", "invoice"])))
    db.executemany("INSERT INTO tickets VALUES (?, ?, ?, ?)", tickets)
    db.commit()
    sys.exit(0)
if mode == "shop":  # the workspace database: shipped tables and rows, plus the migration's indexes
    shop = sqlite3.connect(f"file:{T}/shop.db?mode=ro", uri=True)
    big = sqlite3.connect(f"file:{T}/big.db?mode=ro", uri=True)
    want = {"customers": "e3e0730b1959282f7547e4cf5f6486499813e0428043368a530b680e87cddf37",
            "orders": "24e07b679ddfed80b263250cd42236e1db09c4c711d382181609a5d28b68ce7c",
            "products": "525801ef2b5ab7c23bda889c8575f13732d73b2593854df72c1f3580522c7c40",
            "order_items": "33e42c53cd2c6007b3c784ede8fd8f68a3ad6ab889bbcbafa5560946d21cd900",
            "tickets": "5fb0b24187d2bd6e4aaa31fc4043e1126c8def4c1d7dcb4c263308b3942b637b"}
    ok = shape(shop) == shape(big) and all(digest(shop, t) == want[t] for t in TABLES)
    ok = ok and bool(indexes(big)) and indexes(big) <= indexes(shop)
    sys.exit(0 if ok else 1)
# mode "check": the migrated database kept the pristine copy's tables and rows, and the report printed the
# reference's output (sqlite3 list mode: '|' between values, NULL as nothing)
big, ref = sqlite3.connect(f"file:{T}/big.db?mode=ro", uri=True), sqlite3.connect(f"{T}/ref.db")
if shape(big) != shape(ref) or any(digest(big, t) != digest(ref, t) for t in TABLES):
    sys.exit(1)
ref.executescript("CREATE INDEX r1 ON orders(customer_id, status, created_at); CREATE INDEX r2 ON customers(lower(email));"
                  "CREATE INDEX r3 ON order_items(sku, order_id, qty);")
out, stmt = [], ""
for line in open("report.sql"):
    stmt += line
    if sqlite3.complete_statement(stmt):
        out += ["|".join("" if v is None else str(v) for v in row) for row in ref.execute(stmt)]
        stmt = ""
sys.exit(0 if open(f"{T}/got").read() == "".join(l + "\n" for l in out) else 1)
PY
)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
cp "$T/big.db" "$T/ref.db"
timeout 60 sqlite3 -safe -init /dev/null -batch "$T/big.db" < "$M" >/dev/null 2>&1 || exit 1
python3 -I - shop "$T" <<<"$REF" || exit 1
timeout 5 sqlite3 -safe -init /dev/null -batch "$T/big.db" < report.sql > "$T/got" 2>/dev/null || exit 1
python3 -I - check "$T" <<<"$REF"
