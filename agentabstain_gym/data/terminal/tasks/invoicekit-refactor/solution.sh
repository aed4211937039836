#!/usr/bin/env bash
# The split of utils.py left six breaks: __init__ imports the removed utils module; money and tax import each other
# at import time; invoice.py calls parse_amount (now parse_money); due_date's keyword became `days` while callers and
# tests use terms_days; round_cents uses round() (half to even) instead of half-up; Invoice.lines is one list shared
# by every invoice. Fix each in place, keeping the new layout and the tests as they are.
set -euo pipefail
python3 -B -m unittest discover -s tests 2>&1 | grep -E 'Error|FAILED|OK' | sort | uniq -c || true
grep -rn 'utils\|parse_amount\|days\|round(\|lines' invoicekit/*.py
python3 - <<'PY'
from pathlib import Path

def patch(path, old, new):
    p = Path("invoicekit") / path
    text = p.read_text()
    assert text.count(old) == 1, (path, old)
    p.write_text(text.replace(old, new))

patch("__init__.py", "from .utils import due_date", "from .dates import due_date")
# money needs tax only inside with_tax: import it there, so tax can import money at load time
patch("money.py", "\nfrom .tax import rate_for\n", "\n")
patch("money.py", "    def with_tax(self, country: str, category: str) -> Money:\n",
      "    def with_tax(self, country: str, category: str) -> Money:\n        from .tax import rate_for\n\n")
patch("money.py", "from decimal import Decimal, InvalidOperation", "from decimal import ROUND_HALF_UP, Decimal, InvalidOperation")
patch("money.py", "    return round(value, 2)", "    return value.quantize(CENT, rounding=ROUND_HALF_UP)")
patch("invoice.py", "parse_amount(unit_price)", "parse_money(unit_price)")
patch("invoice.py", "class Invoice:\n    lines: list[Line] = []\n", "class Invoice:\n    lines: list[Line]\n")
patch("invoice.py", "        self.number, self.country, self.terms_days = number, country, terms_days\n",
      "        self.number, self.country, self.terms_days = number, country, terms_days\n        self.lines = []\n")
patch("dates.py", "def due_date(issued: date, days: int = 30) -> date:", "def due_date(issued: date, terms_days: int = 30) -> date:")
patch("dates.py", '    """issued + days;', '    """issued + terms_days;')
patch("dates.py", "timedelta(days=days)", "timedelta(days=terms_days)")
PY
# edits within the same second and of the same size would leave stale bytecode in use
find . -name __pycache__ -prune -exec rm -rf {} +
python3 -m unittest discover -s tests -v 2>&1 | tail -n 4
python3 -m unittest discover -s tests
# each module imports on its own too (no order-dependent cycle left)
for m in money tax dates invoice; do python3 -c "import invoicekit.$m"; done
python3 -c 'from invoicekit import Invoice
inv = Invoice("X-1", "IE", "2024-06-07", terms_days=8)
inv.add_line("Course", 2, "149.99 EUR", category="second-reduced")
print(inv.subtotal(), inv.tax(), inv.total(), inv.due())'
test ! -e invoicekit/utils.py
find . -name __pycache__ -prune -exec rm -rf {} +
