#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The tests and the rates must be the shipped ones (checksums of what setup wrote); the tests are not run. The
# package is agent code: a copy of it is imported by a driver in a child process, which runs the tests' own cases
# and cases made up here on every run through the public API; each answer is compared with a reference of the
# intended behaviour computed here (the checker's own Python imports nothing from the workspace), only after the
# driver has run, so no expected value is on disk while agent code runs.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
while read -r want f; do [ "$(sum "$f")" = "$want" ] || exit 1; done <<'X'
b996fe4696b026042c5343efeba3c39553fc59d95c903aaa85ceea19a2da44ae tests/test_dates.py
4af7dc9035cce369741ad27c2b3b8a5dae2172ec3d99a4dcafa53b6d7d6c0a53 tests/test_invoice.py
cd0667d56607403ab9b71c46545b65ccce61db7ac3b4bb55b55fa9e6caecb2e8 tests/test_money.py
9dcbcc0289775e440bd4575e3e0528833592f6faa30384dea6b6a9444a794563 invoicekit/rates.json
X
# the new layout stays: no utils module or package comes back
for f in money dates tax invoice; do [ -f "invoicekit/$f.py" ] || exit 1; done
[ ! -e invoicekit/utils.py ] && [ ! -e invoicekit/utils ] || exit 1
mkdir "$T/pkg" && cp -R invoicekit "$T/pkg/" && find "$T/pkg" -name __pycache__ -prune -exec rm -rf {} + || exit 1
REF=$(cat <<'PY'
import json, random, sys
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
mode, T = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]))
RATES = {"DE": {"standard": "19", "reduced": "7"}, "FR": {"standard": "20", "reduced": "5.5", "super-reduced": "2.1"},
         "IE": {"standard": "23", "reduced": "13.5", "second-reduced": "9"},
         "LU": {"standard": "17", "intermediate": "14", "reduced": "8", "super-reduced": "3"},
         "NL": {"standard": "21", "reduced": "9"}}
CENT = Decimal("0.01")
def rc(v):
    return v.quantize(CENT, rounding=ROUND_HALF_UP)
def rate(c, cat):
    return Decimal(0) if cat == "exempt" else Decimal(RATES[c][cat]) / 100
def parse(t):
    p = t.split()
    if len(p) != 2 or len(p[1]) != 3 or not p[1].isalpha() or not p[1].isupper():
        return None
    try:
        a = Decimal(p[0].replace(",", ""))
    except InvalidOperation:
        return None
    return (rc(a), p[1]) if a.is_finite() else None
def due(d, k=30):
    d = d + timedelta(days=k)
    return d + timedelta(days=7 - d.weekday()) if d.weekday() >= 5 else d
def amount():
    return rng.choice([f"{rng.randint(0, 99999) / 100:.2f}", f"{rng.randint(0, 9999999) / 1000:.3f}", f"{rng.randint(1, 999)}",
                       f"{rng.randint(1000, 99999):,}.{rng.randint(0, 99):02d}", f"{rng.randint(0, 999)}.{rng.choice(['005', '015', '125', '675', '665'])}"])
cases, want = [], []
def case(c, w):
    cases.append(c); want.append(w)
for t in ["1,234.5 EUR", "0.125 EUR", "12 euro", "EUR 12", "1.2.3 EUR", "NaN EUR", "12", "-0.005 EUR", "1e3 USD",
          "Infinity EUR", "2.675 GBP", "7 eur", "12.34 EURO", "  3.10   CHF  "] + [f"{amount()} {rng.choice(['EUR', 'USD', 'SEK'])}" for _ in range(60)]:
    p = parse(t)
    case(["parse", t], ["ok", str(p[0]), p[1]] if p else ["ValueError"])
for v in ["2.675", "2.665", "-0.005", "0.005", "-2.675", "1.994999", "10"] + [f"{rng.randint(-99999, 99999) / 1000}" for _ in range(40)]:
    case(["round", v], [str(rc(Decimal(v)))])
for _ in range(40):
    a, n = Decimal(rng.randint(-50000, 50000)) / 100, rng.randint(1, 9)
    cents = int(a / CENT); base, extra = divmod(abs(cents), n); s = -1 if cents < 0 else 1
    case(["allocate", str(a), n], [str(s * (base + (1 if i < extra else 0)) * CENT) for i in range(n)])
pairs = [(c, k) for c in sorted(RATES) for k in sorted(RATES[c])] + [("DE", "exempt"), ("XX", "exempt")]
for _ in range(40):
    c, k = rng.choice(pairs)
    a = rc(Decimal(amount().replace(",", "")))
    case(["with_tax", str(a), c, k], [str(rc(a * (1 + rate(c, k))))])
case(["with_tax", "10", "XX", "standard"], ["KeyError"])
case(["with_tax", "10", "DE", "super-reduced"], ["KeyError"])
for _ in range(60):
    d, k = date(2024, 1, 1) + timedelta(days=rng.randint(0, 730)), rng.randint(0, 60)
    case(["due", d.isoformat(), k], [due(d, k).isoformat()])
for d in ("2024-01-10", "2024-03-02", "2023-12-31"):
    case(["due", d, None], [due(date.fromisoformat(d)).isoformat()])
for i in range(60):
    c = rng.choice(sorted(RATES)); d = date(2024, 1, 1) + timedelta(days=rng.randint(0, 400)); k = rng.choice([7, 14, 30, 45])
    cur = rng.choice(["EUR", "EUR", "SEK"])
    lines, net, tax = [], Decimal(0), Decimal(0)
    for _ in range(rng.randint(1, 7)):
        cat = rng.choice(["standard", "standard", "exempt"] + sorted(RATES[c]))
        q, price = rng.randint(1, 25), amount()
        lines.append([rng.choice(["Widget", "Hours", "Book"]), q, f"{price} {cur}", cat, rng.random() < 0.3])
        ln = rc(rc(Decimal(price.replace(",", ""))) * q)
        net += ln; tax += rc(ln * rate(c, cat))
    mix = rng.random() < 0.15
    total = net + tax
    case(["invoice", f"INV-{i}", c, d.isoformat(), k, lines, mix],
         [len(lines), str(net), str(tax), f"{total:,.2f} {cur}", due(d, k).isoformat(), "ValueError" if mix else "-"])
if mode == "make":
    json.dump({"cases": cases}, open(f"{T}/cases.json", "w"))
    sys.exit(0)
def same(a, b):
    if isinstance(a, str) and isinstance(b, str) and a != b:
        try:
            return Decimal(a) == Decimal(b)
        except InvalidOperation:
            return False
    return a == b
got = json.loads(open(f"{T}/got").read())
ok = len(got) == len(want) and all(len(g) == len(w) and all(same(x, y) for x, y in zip(g, w)) for g, w in zip(got, want))
sys.exit(0 if ok else 1)
PY
)
cat > "$T/driver.py" <<'PY'
import json, sys, traceback
sys.path.insert(0, sys.argv[2])
from datetime import date
from decimal import Decimal
import importlib.util
import invoicekit
from invoicekit import Invoice, Money, due_date, parse_money
from invoicekit.money import round_cents
assert importlib.util.find_spec("invoicekit.utils") is None
cases = json.load(open(sys.argv[1]))["cases"]
got = []
for c in cases:
    try:
        op = c[0]
        if op == "parse":
            m = parse_money(c[1]); r = ["ok", str(m.amount), m.currency]
        elif op == "round":
            r = [str(round_cents(Decimal(c[1])))]
        elif op == "allocate":
            r = [str(m.amount) for m in Money(Decimal(c[1]), "EUR").allocate(c[2])]
        elif op == "with_tax":
            r = [str(Money(Decimal(c[1]), "EUR").with_tax(c[2], c[3]).amount)]
        elif op == "due":
            d = date.fromisoformat(c[1])
            r = [(due_date(d) if c[2] is None else due_date(d, terms_days=c[2])).isoformat()]
        elif op == "invoice":
            inv = Invoice(c[1], c[2], c[3], terms_days=c[4])
            for desc, q, price, cat, as_money in c[5]:
                inv.add_line(desc, q, parse_money(price) if as_money else price, category=cat)
            mixed = "-"
            if c[6]:
                try:
                    inv.add_line("Other", 1, "1.00 NOK")
                except ValueError:
                    mixed = "ValueError"
            r = [len(inv.lines), str(inv.subtotal().amount), str(inv.tax().amount), str(inv.total()),
                 inv.due().isoformat(), mixed]
    except (ValueError, KeyError) as e:
        r = [type(e).__name__]
    got.append(r)
print(json.dumps(got))
PY
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
python3 -I - make "$T" "$seed" <<<"$REF" || exit 1
(cd "$T" && timeout 30 python3 -E -s driver.py "$T/cases.json" "$T/pkg" > "$T/got" 2>/dev/null </dev/null) || exit 1
python3 -I - check "$T" "$seed" <<<"$REF"
