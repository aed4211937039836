#!/usr/bin/env bash
# Parse every date and amount style seen in the file, convert with exact decimals, round each total half away from 0.
set -euo pipefail
head -n 15 expenses.csv
cut -d, -f1 expenses.csv | sed 's/[0-9]/9/g' | sort | uniq -c
cat > monthly.py <<'PY'
"""Monthly expense totals in EUR per category from a messy export."""
import csv
import json
import re
import sys
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d %b %Y", "%B %d, %Y", "%Y%m%d")
SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP"}


def parse_date(text):
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            pass
    raise ValueError(f"unknown date {text!r}")


def parse_amount(text):
    s = text.strip()
    neg = s.startswith("-") or (s.startswith("(") and s.endswith(")"))
    s = s.strip("-()").strip()
    cur = next((code for sym, code in SYMBOLS.items() if sym in s), None)
    m = re.search(r"[A-Z]{3}", s)
    cur = cur or (m and m.group(0))
    num = re.sub(r"[^0-9.,']", "", s).replace("'", "")
    if re.search(r",\d{2}$", num):  # decimal comma, dots for thousands
        num = num.replace(".", "").replace(",", ".")
    else:
        num = num.replace(",", "")
    value = Decimal(num)
    return (-value if neg else value), cur


def main(expenses_path, rates_path):
    with open(rates_path) as fh:
        rates = {m: {c: Decimal(str(v)) for c, v in r.items()} for m, r in json.load(fh).items()}
    totals = {}
    with open(expenses_path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if not row.get("date"):
                continue
            month = parse_date(row["date"]).strftime("%Y-%m")
            amount, cur = parse_amount(row["amount"])
            rate = Decimal(1) if cur == "EUR" else rates[month][cur]
            key = (month, row["category"].strip().lower())
            totals[key] = totals.get(key, Decimal(0)) + amount * rate
    print("month,category,total_eur")
    for (month, cat), total in sorted(totals.items()):
        print(f"{month},{cat},{total.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
PY
python3 monthly.py expenses.csv rates.json > monthly.csv
cat monthly.csv
