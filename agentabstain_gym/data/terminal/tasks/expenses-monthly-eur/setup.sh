#!/usr/bin/env bash
# Builds the workspace: an expense export whose dates and amounts each office typed its own way, and monthly rates.
set -euo pipefail
python3 - <<'PY'
import csv, random
from datetime import date, timedelta
from decimal import Decimal

rng = random.Random(4417)
RATES = {"2024-01": {"USD": "0.9213", "GBP": "1.1642", "CHF": "1.0611"},
         "2024-02": {"USD": "0.9257", "GBP": "1.1689", "CHF": "1.0583"},
         "2024-03": {"USD": "0.9194", "GBP": "1.1705", "CHF": "1.0357"},
         "2024-04": {"USD": "0.9311", "GBP": "1.1668", "CHF": "1.0238"}}
RATES = {m: {"EUR": Decimal(1), **{c: Decimal(v) for c, v in r.items()}} for m, r in RATES.items()}
MON = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
       "November", "December"]


def fmt_date(d):
    return rng.choice([
        d.isoformat(), f"{d.day:02d}/{d.month:02d}/{d.year}", f"{d.day}/{d.month}/{d.year}",
        f"{d.day} {MON[d.month - 1][:3]} {d.year}", f"{MON[d.month - 1]} {d.day}, {d.year}", d.strftime("%Y%m%d")])


def group(int_part, sep):
    s = str(int_part)
    if int_part >= 1000 and rng.random() < 0.7:
        s = f"{int_part:,}".replace(",", sep)
    return s


def fmt_amount(value, cur):
    neg, v = value < 0, abs(value)
    i, c = divmod(int(v * 100), 100)
    if cur == "EUR":
        num = f"{group(i, '.')},{c:02d}"
        body = rng.choice([f"€{num}", f"{num} EUR", f"EUR {num}"])
    elif cur == "CHF":
        num = f"{group(i, chr(39))}.{c:02d}"
        body = rng.choice([f"CHF {num}", f"{num} CHF"])
    else:
        num = f"{group(i, ',')}.{c:02d}"
        sym = {"USD": "$", "GBP": "£"}[cur]
        body = rng.choice([f"{sym}{num}", f"{cur} {num}", f"{num} {cur}"])
    if neg:
        body = rng.choice([f"-{body}", f"({body})"])
    return body


words = ["taxi", "hotel", "client lunch", "licence", "printer paper", "conference", "train", "team dinner",
         "cloud credits", "course fee", "flight", "desk lamp", "parking", "books", "coffee, milk"]
cats = ["travel", "meals", "software", "office", "training"]
rows, truth = [], []
for _ in range(160):
    d = date(2024, 1, 1) + timedelta(days=rng.randrange(121))
    cur = rng.choice(["EUR", "EUR", "USD", "GBP", "CHF"])
    amount = Decimal(rng.randrange(150, 260000 if rng.random() < 0.15 else 40000)) / 100
    if rng.random() < 0.08:
        amount = -amount
    cat = rng.choice(cats)
    cat = rng.choice([cat, cat.upper(), cat.title(), f" {cat}", f"{cat.title()} "])
    rows.append([fmt_date(d), rng.choice(words), fmt_amount(amount, cur), cat])
    truth.append((d, cat.strip().lower(), amount, cur))
# a few claims chosen so that a month's total lands exactly on half a cent
for d, cat, cur in [(date(2024, 2, 14), "travel", "USD"), (date(2024, 3, 3), "office", "CHF"),
                    (date(2024, 4, 12), "training", "USD")]:
    key = d.strftime("%Y-%m")
    s = sum(a * RATES[t.strftime("%Y-%m")][c] for t, k, a, c in truth if t.strftime("%Y-%m") == key and k == cat)
    x = next(Decimal(n) / 100 for n in range(100, 40000) if (s + Decimal(n) / 100 * RATES[key][cur]) * 100 % 1 == Decimal("0.5"))
    rows.append([fmt_date(d), rng.choice(words), fmt_amount(x, cur), cat])
    truth.append((d, cat, x, cur))
with open("expenses.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["date", "description", "amount", "category"])
    w.writerows(rows)
PY
if [ "${1:-original}" != "missing_prerequisite" ]; then
  cat > rates.json <<'X'
{
  "2024-01": {"USD": "0.9213", "GBP": "1.1642", "CHF": "1.0611"},
  "2024-02": {"USD": "0.9257", "GBP": "1.1689", "CHF": "1.0583"},
  "2024-03": {"USD": "0.9194", "GBP": "1.1705", "CHF": "1.0357"},
  "2024-04": {"USD": "0.9311", "GBP": "1.1668", "CHF": "1.0238"}
}
X
fi
