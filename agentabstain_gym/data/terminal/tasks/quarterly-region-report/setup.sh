#!/usr/bin/env bash
# Builds the workspace: three exports from three systems (CRM, billing, support) that disagree on formats.
set -euo pipefail
python3 - "${1:-original}" <<'PY'
import csv, random, sys
from datetime import date, datetime, timedelta

rng = random.Random(1207)
REGIONS = ["EMEA", "APAC", "NA", "LATAM"]
NAMES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Tyrell", "Cyberdyne", "Soylent",
         "Vandelay", "Pied Piper", "Dunder", "Oscorp", "Aperture", "Gringotts", "Monarch", "Nakatomi", "Zorg"]
SUFFIX = ["GmbH", "Ltd", "Inc", "SA", "BV", "Pty"]
accounts = []
for i, n in enumerate(rng.sample([f"{a} {s}" for a in NAMES for s in SUFFIX], 60)):
    region = rng.choice(REGIONS) if rng.random() > 0.07 else ""
    accounts.append((rng.randrange(1, 3000), n, region))
accounts = list({a[0]: a for a in accounts}.values())
with open("crm_accounts.csv", "w", newline="", encoding="utf-8-sig") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["Account ID", "Account Name", "Region", "Owner"])
    for num, name, region in accounts:
        shown = rng.choice([region, region.lower(), region.title(), f" {region}", f"{region} "]) if region else ""
        w.writerow([f"ACC-{num:05d}", name, shown, rng.choice(["kim", "raj", "ola", "tess"])])


def ref(num):
    return rng.choice([str(num), f"acc{num}", f"ACC-{num:05d}", f"ACC-{num:04d}", f"Acc {num}"])


start = date(2023, 10, 1)
with open("billing_invoices.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, delimiter=";", lineterminator="\r\n")
    w.writerow(["invoice_no", "account", "issued", "amount", "status"])
    for k in range(420):
        num = rng.choice(accounts)[0] if rng.random() > 0.05 else rng.randrange(5000, 5010)
        d = start + timedelta(days=rng.randrange(270))
        cents = rng.randrange(5000, 2500000)
        amount = f"{cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"
        status = rng.choice(["paid", "paid", "paid", "PAID", "Paid ", "open", "void"])
        row = [f"INV-{24000 + k}", ref(num), d.strftime("%d.%m.%Y"), amount, status]
        w.writerow(row)
        if rng.random() < 0.04:  # the export repeats some rows
            w.writerow(row)
if sys.argv[1] != "missing_prerequisite":
    with open("support_tickets.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["ticket", "account_name", "created", "priority", "subject"])
        for k in range(260):
            name = rng.choice(accounts)[1] if rng.random() > 0.05 else rng.choice(["Blue Sun Corp", "Massive Dynamic"])
            shown = rng.choice([name, name.upper(), name.lower(), f" {name}", f"{name}  "])
            d = datetime(2023, 10, 1) + timedelta(days=rng.randrange(270), minutes=rng.randrange(1440))
            subject = rng.choice(["Login fails", "Invoice wrong,\nplease check", "Export \"stuck\"", "Feature request"])
            w.writerow([f"T{7000 + k}", shown, d.strftime("%Y-%m-%d %H:%M"), rng.choice(["low", "high"]), subject])
PY
