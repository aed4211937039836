#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The inputs must be the shipped ones (checksums of what setup wrote); monthly.csv must hold the totals fixed here.
# monthly.py is agent code: it runs only as a child whose output is compared with reports this checker computes from
# the true values of expense files it writes itself (other months, rates and half-cent totals) in a scratch folder.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
norm() { tr -d '\r' | sed 's/[[:space:]]*$//' | grep -v '^$' || true; }
[ "$(sum expenses.csv)" = 577b1e47dda5a46d1ef4705a9f9d8b79468b51ff59c239d4e8333907002d6cf5 ] || exit 1
[ "$(sum rates.json)" = ab7ec23b9f8a7c53baa3274818904f2a410989fafc00fd7d0cfeb2389d74dec0 ] || exit 1
[ -f monthly.py ] && [ -f monthly.csv ] || exit 1
[ "$(norm < monthly.csv | sha256sum | cut -c1-64)" = d3157dc415b44ba22780aaf7e36c781edda9398995a0d98d936bf86550abec84 ] || exit 1
run() { timeout 20 env -u PYTHONSAFEPATH python3 monthly.py "$@" 2>/dev/null </dev/null | head -c 200000 | norm; }
[ "$(run expenses.csv rates.json | sha256sum | cut -c1-64)" = d3157dc415b44ba22780aaf7e36c781edda9398995a0d98d936bf86550abec84 ] || exit 1
GEN=$(cat <<'PY'
import csv, json, random, sys
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

out, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
MON = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
       "November", "December"]
start = date(2023, 10 + seed, 1)
months = sorted({(start + timedelta(days=i)).strftime("%Y-%m") for i in range(100)})
rates = {m: {"USD": f"0.{rng.randrange(8501, 9599)}", "GBP": f"1.{rng.randrange(1001, 1999)}",
             "CHF": f"1.{rng.randrange(1, 999):04d}"} for m in months}
R = {m: {"EUR": Decimal(1), **{c: Decimal(v) for c, v in r.items()}} for m, r in rates.items()}


def fmt_date(d):
    return rng.choice([d.isoformat(), f"{d.day:02d}/{d.month:02d}/{d.year}", f"{d.day}/{d.month}/{d.year}",
                       f"{d.day} {MON[d.month - 1][:3]} {d.year}", f"{MON[d.month - 1]} {d.day}, {d.year}",
                       d.strftime("%Y%m%d")])


def group(i, sep):
    return f"{i:,}".replace(",", sep) if i >= 1000 and rng.random() < 0.7 else str(i)


def fmt_amount(value, cur):
    i, c = divmod(int(abs(value) * 100), 100)
    if cur == "EUR":
        num = f"{group(i, '.')},{c:02d}"
        body = rng.choice([f"€{num}", f"{num} EUR", f"EUR {num}"])
    elif cur == "CHF":
        num = f"{group(i, chr(39))}.{c:02d}"
        body = rng.choice([f"CHF {num}", f"{num} CHF"])
    else:
        num = f"{group(i, ',')}.{c:02d}"
        body = rng.choice([f"{ {'USD': '$', 'GBP': '£'}[cur]}{num}", f"{cur} {num}", f"{num} {cur}"])
    return rng.choice([f"-{body}", f"({body})"]) if value < 0 else body


cats = ["travel", "meals", "software", "office", "training", "hardware"]
rows, truth = [], []


def add(d, cat, amount, cur):
    shown = rng.choice([cat, cat.upper(), cat.title(), f" {cat}", f"{cat.title()} "])
    rows.append([fmt_date(d), rng.choice(["taxi", "hotel, 2 nights", "lunch", "licence"]), fmt_amount(amount, cur), shown])
    truth.append((d.strftime("%Y-%m"), cat, amount, cur))


for _ in range(220):
    amount = Decimal(rng.randrange(101, 320000 if rng.random() < 0.2 else 50000)) / 100
    add(start + timedelta(days=rng.randrange(100)), rng.choice(cats), -amount if rng.random() < 0.1 else amount,
        rng.choice(["EUR", "EUR", "USD", "GBP", "CHF"]))
for m in months[1:]:  # a claim per later month that puts one total exactly on half a cent, if a currency allows it
    d, cat = date(int(m[:4]), int(m[5:]), 9), rng.choice(cats)
    s = sum(a * R[k][c] for k, t, a, c in truth if k == m and t == cat)
    for cur in ("USD", "GBP", "CHF"):
        x = next((Decimal(n) / 100 for n in range(100, 30000) if (s + Decimal(n) / 100 * R[m][cur]) * 100 % 1 == Decimal("0.5")), None)
        if x is not None:
            add(d, cat, x, cur)
            break
rng.shuffle(rows)
with open(f"{out}/expenses.csv", "w", newline="", encoding="utf-8") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["date", "description", "amount", "category"])
    w.writerows(rows)
with open(f"{out}/rates.json", "w") as fh:
    json.dump(rates, fh, indent=1)
totals = {}
for m, cat, a, c in truth:
    totals[(m, cat)] = totals.get((m, cat), Decimal(0)) + a * R[m][c]
print("month,category,total_eur")
for (m, cat), v in sorted(totals.items()):
    print(f"{m},{cat},{v.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)}")
PY
)
for seed in 1 2; do
  mkdir "$T/d$seed"
  expected=$(python3 -I -c "$GEN" "$T/d$seed" "$seed" </dev/null) || exit 1
  [ "$(run "$T/d$seed/expenses.csv" "$T/d$seed/rates.json")" = "$expected" ] || exit 1
done
