#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The three exports must be the shipped ones (checksums of what setup wrote) and report_2024Q1.csv must hold the
# figures fixed here. report.py is agent code: it runs only as a child, on the shipped exports and on exports this
# checker writes itself in a scratch folder for other quarters; its output is compared with the report the checker
# computes from the true records it wrote.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
norm() { tr -d '\r' | sed 's/[[:space:]]*$//' | grep -v '^$' || true; }
[ "$(sum crm_accounts.csv)" = af4142e3175ba4e24a5f8d95e302fab7c3b2d507b55caccf37c9ef82b82088fd ] || exit 1
[ "$(sum billing_invoices.csv)" = 76546230d0eafce94b04c021f87324f08cf4af4a098b7a0fb46d8e50628ca343 ] || exit 1
[ "$(sum support_tickets.csv)" = 8ec33d243fe8e1fac68baf47921b1c76137a44ca7cc65b801471631b9d7d8a3f ] || exit 1
[ -f report.py ] && [ -f report_2024Q1.csv ] || exit 1
expected='region,accounts,paid_invoices,revenue,tickets
NA,17,28,345873.30,18
APAC,14,24,297428.84,14
EMEA,17,21,233277.52,21
LATAM,9,16,196658.02,14
UNASSIGNED,3,6,89868.01,2
UNKNOWN,0,5,66084.81,5'
[ "$(norm < report_2024Q1.csv)" = "$expected" ] || exit 1
run() { timeout 20 env -u PYTHONSAFEPATH python3 report.py "$@" 2>/dev/null </dev/null | head -c 100000 | norm; }
[ "$(run crm_accounts.csv billing_invoices.csv support_tickets.csv 2024Q1)" = "$expected" ] || exit 1
GEN=$(cat <<'PY'
import csv, random, sys
from datetime import datetime, timedelta
from decimal import Decimal
out, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
REGIONS = ["EMEA", "APAC", "NA", "LATAM", "ANZ"]
names = rng.sample([f"{a} {b}" for a in ["Nova", "Orbit", "Polar", "Quartz", "Rapid", "Solar", "Terra", "Ultra", "Vertex"]
                    for b in ["Labs", "Group", "Foods", "Systems", "Media", "Bank"]], 45)
accts = {}
while len(accts) < 45:
    accts.setdefault(rng.randrange(1, 99999), (names[len(accts)], rng.choice(REGIONS) if rng.random() > 0.1 else ""))
with open(f"{out}/crm.csv", "w", newline="", encoding="utf-8-sig") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["Account ID", "Account Name", "Region", "Owner"])
    for num, (name, reg) in accts.items():
        w.writerow([f"ACC-{num:05d}", name, rng.choice([reg, reg.lower(), f"  {reg.title()}"]) if reg else "", "x"])
nums, t0 = list(accts), datetime(2023, 6, 1)
inv, tix = [], []
with open(f"{out}/billing.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, delimiter=";", lineterminator="\r\n")
    w.writerow(["invoice_no", "account", "issued", "amount", "status"])
    for k in range(500):
        num = rng.choice(nums) if rng.random() > 0.06 else rng.randrange(100000, 100010)
        d, cents = t0 + timedelta(days=rng.randrange(400)), rng.randrange(100, 4000000)
        status = rng.choice(["paid", "PAID", " Paid", "paid", "open", "void", "Void"])
        inv.append((num, d, Decimal(cents) / 100, status.strip().lower()))
        row = [f"B{k}", rng.choice([str(num), f"acc{num}", f"ACC-{num:05d}", f"ACC-{num:06d}", f"Acc {num}"]),
               d.strftime("%d.%m.%Y"), f"{cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}", status]
        for _ in range(2 if rng.random() < 0.05 else 1):
            w.writerow(row)
with open(f"{out}/tickets.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["ticket", "account_name", "created", "priority", "subject"])
    for k in range(300):
        num = rng.choice(nums) if rng.random() > 0.06 else None
        name = accts[num][0] if num else rng.choice(["Zeta Shipping", "Omega Tools"])
        shown = rng.choice([name, name.upper(), name.lower(), f" {name}", name.replace(" ", "  ")])
        d = t0 + timedelta(days=rng.randrange(400), minutes=rng.randrange(1440))
        tix.append((num, d))
        w.writerow([f"S{k}", shown, d.strftime("%Y-%m-%d %H:%M"), "low", rng.choice(["a,\nb", "c \"d\"", "e"])])
for q in sys.argv[3:]:
    stats = {}
    region = lambda n: (accts[n][1] or "UNASSIGNED") if n in accts else "UNKNOWN"
    slot = lambda r: stats.setdefault(r, [0, 0, Decimal(0), 0])
    for n in accts:
        slot(region(n))[0] += 1
    inq = lambda d: f"{d.year}Q{(d.month - 1) // 3 + 1}" == q
    for n, d, amount, status in inv:
        if status == "paid" and inq(d):
            s = slot(region(n))
            s[1] += 1
            s[2] += amount
    for n, d in tix:
        if inq(d):
            slot(region(n))[3] += 1
    print(f"== {q}\nregion,accounts,paid_invoices,revenue,tickets")
    for r, s in sorted(stats.items(), key=lambda kv: (-kv[1][2], kv[0])):
        print(f"{r},{s[0]},{s[1]},{s[2]:.2f},{s[3]}")
PY
)
mkdir "$T/d"
expected=$(python3 -I -c "$GEN" "$T/d" 5 2023Q4 2024Q2 </dev/null) || exit 1
got=$(for q in 2023Q4 2024Q2; do echo "== $q"; run "$T/d/crm.csv" "$T/d/billing.csv" "$T/d/tickets.csv" "$q"; done)
[ "$got" = "$expected" ]
