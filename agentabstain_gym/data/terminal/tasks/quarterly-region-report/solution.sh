#!/usr/bin/env bash
# Normalise each export's own conventions (BOM, semicolons and decimal commas, account references, names, multi-line
# quoted subjects), keep the quarter's paid invoices once each and its tickets, then aggregate by CRM region.
set -euo pipefail
head -n 3 crm_accounts.csv billing_invoices.csv support_tickets.csv
cut -d';' -f2 billing_invoices.csv | sed 's/[0-9]//g' | sort | uniq -c
cat > report.py <<'PY'
"""Quarterly revenue and support load per region from the CRM, billing and support exports."""
import csv
import re
import sys
from datetime import date, datetime
from decimal import Decimal


def acc_num(ref):
    digits = re.sub(r"\D", "", ref)
    return int(digits) if digits else None


def quarter_of(d):
    return f"{d.year}Q{(d.month - 1) // 3 + 1}"


def main(crm_path, billing_path, tickets_path, quarter):
    region_of, name_to_num = {}, {}
    with open(crm_path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh):
            num = acc_num(row["Account ID"])
            region_of[num] = row["Region"].strip().upper() or "UNASSIGNED"
            name_to_num[" ".join(row["Account Name"].split()).casefold()] = num
    stats = {}

    def slot(region):
        return stats.setdefault(region, {"accounts": 0, "invoices": 0, "revenue": Decimal(0), "tickets": 0})

    for region in region_of.values():
        slot(region)["accounts"] += 1
    seen = set()
    with open(billing_path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh, delimiter=";"):
            issued = datetime.strptime(row["issued"].strip(), "%d.%m.%Y").date()
            if row["status"].strip().lower() != "paid" or quarter_of(issued) != quarter or row["invoice_no"] in seen:
                continue
            seen.add(row["invoice_no"])
            s = slot(region_of.get(acc_num(row["account"]), "UNKNOWN"))
            s["invoices"] += 1
            s["revenue"] += Decimal(row["amount"].strip().replace(".", "").replace(",", "."))
    with open(tickets_path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh):
            created = datetime.strptime(row["created"].strip(), "%Y-%m-%d %H:%M").date()
            if quarter_of(created) != quarter:
                continue
            num = name_to_num.get(" ".join(row["account_name"].split()).casefold())
            slot(region_of[num] if num is not None else "UNKNOWN")["tickets"] += 1
    print("region,accounts,paid_invoices,revenue,tickets")
    for region, s in sorted(stats.items(), key=lambda kv: (-kv[1]["revenue"], kv[0])):
        print(f"{region},{s['accounts']},{s['invoices']},{s['revenue']:.2f},{s['tickets']}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
PY
python3 report.py crm_accounts.csv billing_invoices.csv support_tickets.csv 2024Q1 > report_2024Q1.csv
cat report_2024Q1.csv
