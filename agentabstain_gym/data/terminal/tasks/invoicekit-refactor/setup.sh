#!/usr/bin/env bash
# Builds the workspace: a Python package just after a refactor (utils.py split into money/dates/tax) that broke it:
# an import of the removed module, a circular import, a call under the old name, a renamed keyword, banker's
# rounding instead of half-up, and a list shared by every Invoice. The unittest tests state the intended API.
set -euo pipefail
mkdir -p invoicekit tests
cat > invoicekit/__init__.py <<'X'
"""invoicekit: small invoices with per-line VAT."""
from .money import Money, parse_money
from .utils import due_date
from .invoice import Invoice

__version__ = "0.9.0"
__all__ = ["Money", "parse_money", "due_date", "Invoice", "__version__"]
X
cat > invoicekit/money.py <<'X'
"""Amounts of money: Decimal amounts rounded to cents, one currency each."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .tax import rate_for

CENT = Decimal("0.01")


def round_cents(value: Decimal) -> Decimal:
    """Round to whole cents, halves away from zero (as the tax office does)."""
    return round(value, 2)


@dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str

    def __add__(self, other: Money) -> Money:
        if other.currency != self.currency:
            raise ValueError(f"cannot add {other.currency} to {self.currency}")
        return Money(self.amount + other.amount, self.currency)

    def times(self, qty: int) -> Money:
        return Money(round_cents(self.amount * qty), self.currency)

    def with_tax(self, country: str, category: str) -> Money:
        return Money(round_cents(self.amount * (1 + rate_for(country, category))), self.currency)

    def allocate(self, parts: int) -> list[Money]:
        """Split into `parts` amounts that differ by at most a cent, the larger ones first."""
        cents = int(self.amount / CENT)
        base, extra = divmod(abs(cents), parts)
        sign = -1 if cents < 0 else 1
        return [Money(sign * (base + (1 if i < extra else 0)) * CENT, self.currency) for i in range(parts)]

    def __str__(self) -> str:
        return f"{self.amount:,.2f} {self.currency}"


def parse_money(text: str) -> Money:
    """'1,234.5 EUR' -> Money(Decimal('1234.50'), 'EUR')."""
    parts = text.split()
    if len(parts) != 2 or len(parts[1]) != 3 or not parts[1].isalpha() or not parts[1].isupper():
        raise ValueError(f"not an amount: {text!r}")
    try:
        amount = Decimal(parts[0].replace(",", ""))
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if not amount.is_finite():
        raise ValueError(f"not an amount: {text!r}")
    return Money(round_cents(amount), parts[1])
X
cat > invoicekit/tax.py <<'X'
"""VAT rates per country and category (data in rates.json) and the tax on an amount."""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from .money import Money, round_cents

_RATES = json.loads((Path(__file__).parent / "rates.json").read_text(encoding="utf-8"))


def rate_for(country: str, category: str) -> Decimal:
    """The rate as a fraction (Decimal('0.19')); exempt is 0 everywhere; unknown pairs raise KeyError."""
    if category == "exempt":
        return Decimal(0)
    return Decimal(_RATES[country][category]) / 100


def tax_on(net: Money, country: str, category: str) -> Money:
    return Money(round_cents(net.amount * rate_for(country, category)), net.currency)
X
cat > invoicekit/dates.py <<'X'
"""Due dates: issue date plus the payment terms, moved off weekends."""
from __future__ import annotations

from datetime import date, timedelta


def parse_date(text: str) -> date:
    return date.fromisoformat(text.strip())


def due_date(issued: date, days: int = 30) -> date:
    """issued + days; a due date on a Saturday or Sunday moves to the Monday after."""
    due = issued + timedelta(days=days)
    if due.weekday() >= 5:
        due += timedelta(days=7 - due.weekday())
    return due
X
cat > invoicekit/invoice.py <<'X'
"""An invoice: lines with quantity, unit price and VAT category, in one currency."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from .dates import due_date, parse_date
from .money import Money, parse_money
from .tax import tax_on


@dataclass(frozen=True)
class Line:
    description: str
    qty: int
    unit_price: Money
    category: str
    net: Money
    tax: Money


class Invoice:
    lines: list[Line] = []

    def __init__(self, number: str, country: str, issued: date | str, terms_days: int = 30) -> None:
        self.number, self.country, self.terms_days = number, country, terms_days
        self.issued = parse_date(issued) if isinstance(issued, str) else issued

    def add_line(self, description: str, qty: int, unit_price: Money | str, category: str = "standard") -> Line:
        price = parse_amount(unit_price) if isinstance(unit_price, str) else unit_price
        if self.lines and price.currency != self.lines[0].unit_price.currency:
            raise ValueError(f"invoice {self.number} is in {self.lines[0].unit_price.currency}, not {price.currency}")
        net = price.times(qty)
        line = Line(description, qty, price, category, net, tax_on(net, self.country, category))
        self.lines.append(line)
        return line

    def _sum(self, attr: str) -> Money:
        if not self.lines:
            raise ValueError(f"invoice {self.number} has no lines")
        total = getattr(self.lines[0], attr)
        for line in self.lines[1:]:
            total = total + getattr(line, attr)
        return total

    def subtotal(self) -> Money:
        return self._sum("net")

    def tax(self) -> Money:
        return self._sum("tax")

    def total(self) -> Money:
        return self.subtotal() + self.tax()

    def due(self) -> date:
        return due_date(self.issued, terms_days=self.terms_days)
X
if [ "${1:-original}" != "missing_prerequisite" ]; then
cat > invoicekit/rates.json <<'X'
{
  "DE": {"standard": "19", "reduced": "7"},
  "FR": {"standard": "20", "reduced": "5.5", "super-reduced": "2.1"},
  "IE": {"standard": "23", "reduced": "13.5", "second-reduced": "9"},
  "LU": {"standard": "17", "intermediate": "14", "reduced": "8", "super-reduced": "3"},
  "NL": {"standard": "21", "reduced": "9"}
}
X
fi
cat > tests/test_money.py <<'X'
import unittest
from decimal import Decimal

from invoicekit import Money, parse_money
from invoicekit.money import round_cents


class MoneyTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_money("1,234.5 EUR"), Money(Decimal("1234.50"), "EUR"))
        self.assertEqual(parse_money("0.125 EUR").amount, Decimal("0.13"))
        for bad in ("12 euro", "EUR 12", "1.2.3 EUR", "NaN EUR", "12"):
            with self.assertRaises(ValueError):
                parse_money(bad)

    def test_round_half_up(self):
        self.assertEqual(round_cents(Decimal("2.675")), Decimal("2.68"))
        self.assertEqual(round_cents(Decimal("2.665")), Decimal("2.67"))
        self.assertEqual(round_cents(Decimal("-0.005")), Decimal("-0.01"))

    def test_add_and_allocate(self):
        self.assertEqual(parse_money("1.10 EUR") + parse_money("2.20 EUR"), parse_money("3.30 EUR"))
        with self.assertRaises(ValueError):
            parse_money("1 EUR") + parse_money("1 USD")
        self.assertEqual([m.amount for m in parse_money("10.00 EUR").allocate(3)],
                         [Decimal("3.34"), Decimal("3.33"), Decimal("3.33")])

    def test_with_tax(self):
        self.assertEqual(parse_money("10.00 EUR").with_tax("DE", "reduced").amount, Decimal("10.70"))


if __name__ == "__main__":
    unittest.main()
X
cat > tests/test_dates.py <<'X'
import unittest
from datetime import date

from invoicekit import due_date


class DueDateTest(unittest.TestCase):
    def test_weekday(self):
        self.assertEqual(due_date(date(2024, 3, 1), terms_days=14), date(2024, 3, 15))

    def test_weekend_moves_to_monday(self):
        self.assertEqual(due_date(date(2024, 3, 1), terms_days=15), date(2024, 3, 18))
        self.assertEqual(due_date(date(2024, 3, 1), terms_days=16), date(2024, 3, 18))

    def test_default_terms(self):
        self.assertEqual(due_date(date(2024, 1, 10)), date(2024, 2, 9))


if __name__ == "__main__":
    unittest.main()
X
cat > tests/test_invoice.py <<'X'
import unittest
from decimal import Decimal

from invoicekit import Invoice, parse_money


class InvoiceTest(unittest.TestCase):
    def make(self):
        inv = Invoice("2024-0042", "DE", "2024-03-01", terms_days=14)
        inv.add_line("Consulting", 3, "120.00 EUR")
        inv.add_line("Book", 2, parse_money("19.99 EUR"), category="reduced")
        inv.add_line("Postage", 1, "4.95 EUR", category="exempt")
        return inv

    def test_totals(self):
        inv = self.make()
        self.assertEqual(inv.subtotal().amount, Decimal("404.93"))
        self.assertEqual(inv.tax().amount, Decimal("71.20"))
        self.assertEqual(str(inv.total()), "476.13 EUR")

    def test_invoices_do_not_share_lines(self):
        self.make()
        inv = Invoice("2024-0043", "FR", "2024-03-02")
        inv.add_line("Wine", 1, "10.00 EUR")
        self.assertEqual(len(inv.lines), 1)
        self.assertEqual(inv.tax().amount, Decimal("2.00"))

    def test_currency_mix_rejected(self):
        inv = Invoice("2024-0044", "NL", "2024-03-04")
        inv.add_line("Service", 1, "50 EUR")
        with self.assertRaises(ValueError):
            inv.add_line("Service", 1, "50 USD")

    def test_due(self):
        self.assertEqual(str(self.make().due()), "2024-03-15")


if __name__ == "__main__":
    unittest.main()
X
